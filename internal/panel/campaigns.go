package panel

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/msgsvc/msgsvc/internal/campaign"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/sending"
)

// Sending from the panel: the send form, the campaign composer (a CSV
// upload with a dry run before sending) and a campaign's progress page.

func (p *Panel) campaignRoutes() {
	p.handle("GET /send", p.authed(p.sendPage))
	p.handle("POST /send", p.form(p.sendMessage))
	p.handle("GET /campaigns/new", p.authed(p.composerPage))
	p.handle("POST /campaigns", p.uploadCampaign)
	p.handle("GET /campaigns/{id}", p.authed(p.campaignPage))
	p.handle("POST /campaigns/{id}/cancel", p.form(p.cancelCampaign))
}

// formKey is a fresh idempotency key carried by a form, so that a form
// sent twice (a double click, a reload) sends once.
func formKey() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return "panel-" + base64.RawURLEncoding.EncodeToString(b)
}

type sendData struct {
	Senders []domain.Sender // approved ones, by channel
	Key     string
	Result  *intake.Receipt
	Env     string
}

func (p *Panel) sendPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showSend(w, r, s, http.StatusOK, &view{Notice: sendNotice(r)}, nil)
}

func (p *Panel) approvedSenders(r *http.Request, s *session) ([]domain.Sender, error) {
	list, err := p.cfg.Manage.Senders(r.Context(), s.Actor, s.Account)
	if err != nil {
		return nil, err
	}
	out := []domain.Sender{}
	for _, sd := range list {
		if sd.Status == domain.SenderApproved {
			out = append(out, sd)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Channel < out[j].Channel })
	return out, nil
}

func (p *Panel) showSend(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, rc *intake.Receipt) {
	if !p.needAccount(w, r, s) {
		return
	}
	senders, err := p.approvedSenders(r, s)
	if p.failed(w, r, s, err) {
		return
	}
	env := "test"
	if v.Form != nil && v.Form["environment"] == "live" {
		env = "live"
	}
	v.Title, v.Nav, v.S, v.Data = "Send a message", "send", s, sendData{Senders: senders, Key: formKey(), Result: rc, Env: env}
	p.render(w, r, status, "send", v)
}

func (p *Panel) sendMessage(w http.ResponseWriter, r *http.Request, s *session) {
	f := r.PostForm
	form := map[string]string{"to": f.Get("to"), "type": f.Get("type"), "from": f.Get("from"), "text": f.Get("text"),
		"environment": f.Get("environment"), "scheduledAt": f.Get("scheduledAt")}
	out, err := p.cfg.Sending.SendMessage(r.Context(), s.Actor, s.Account, sending.NewMessage{To: form["to"], Type: form["type"],
		From: form["from"], Text: form["text"], Environment: form["environment"], ScheduledAt: form["scheduledAt"],
		IdempotencyKey: f.Get("key")})
	if errs, ok := sendErrors(err); ok {
		p.showSend(w, r, s, http.StatusBadRequest, &view{Errors: errs, Form: form}, nil)
		return
	}
	if p.failed(w, r, s, err) {
		return
	}
	if out.Replay != nil {
		// The same form again: its send was made already.
		http.Redirect(w, r, s.link("/campaigns/"+string(out.Replay.Response)), http.StatusSeeOther)
		return
	}
	rc := out.Receipt
	p.showSend(w, r, s, http.StatusAccepted, &view{Form: map[string]string{"environment": form["environment"], "type": form["type"],
		"from": form["from"]}}, &rc)
}

// sendErrors renders a send's refusals on the form: field problems under
// their inputs, a short balance or another refusal above the form.
func sendErrors(err error) (map[string]string, bool) {
	if err == nil {
		return nil, false
	}
	if errs, ok := fieldErrors(err, nil); ok {
		return errs, true
	}
	if rf := (*domain.Refusal)(nil); errors.As(err, &rf) {
		return map[string]string{"": refusalText(rf.Code) + " " + rf.Detail}, true
	}
	switch {
	case errors.Is(err, intake.ErrInsufficientCredits):
		return map[string]string{"": "Not sent: the balance does not cover it. Nothing was charged; ask an operator to top up, or send in the test environment."}, true
	case errors.Is(err, intake.ErrIdempotencyConflict):
		return map[string]string{"": "This form was sent already with other values. Open the page again to send anew."}, true
	}
	return nil, false
}

func refusalText(code string) string {
	switch code {
	case "RECIPIENT_OPTED_OUT":
		return "Not sent: a recipient opted out."
	case "OUTSIDE_CONVERSATION_WINDOW":
		return "Not sent: outside the WhatsApp conversation window."
	case "DAILY_LIMIT_REACHED":
		return "Not sent: the daily limit is reached."
	}
	return "Not sent (" + code + ")."
}

type composerData struct {
	Senders []domain.Sender
	Key     string
	Preview *campaignPreview
	MaxText string
}

// campaignPreview is what a dry run found.
type campaignPreview struct {
	Receipt   intake.FileReceipt
	Variables []string
	Env       string
	Short     bool // live, and the balance does not cover it
}

func (p *Panel) composerPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showComposer(w, r, s, http.StatusOK, &view{Notice: sendNotice(r)}, nil)
}

func (p *Panel) showComposer(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, pv *campaignPreview) {
	if !p.needAccount(w, r, s) {
		return
	}
	senders, err := p.approvedSenders(r, s)
	if p.failed(w, r, s, err) {
		return
	}
	v.Title, v.Nav, v.S, v.Data = "Campaign from a file", "send", s, composerData{Senders: senders, Key: formKey(), Preview: pv, MaxText: thousands(campaign.MaxRows)}
	if r.Header.Get("X-Panel-Fragment") == "preview" {
		block := "preview"
		if pv == nil {
			block = "problems"
		}
		p.renderFragment(w, r, status, "campaign_new", block, v)
		return
	}
	p.render(w, r, status, "campaign_new", v)
}

// uploadCampaign reads the composer's multipart form as it streams (the
// file to disk), checks the form's token, then previews or sends.
func (p *Panel) uploadCampaign(w http.ResponseWriter, r *http.Request) {
	campaign.Extend(w)
	r.Body = http.MaxBytesReader(w, r.Body, campaign.MaxUpload)
	// The multipart body is read as a stream: taking its reader first
	// keeps the session's look-up (which reads ?account=) from parsing
	// the whole form into memory.
	mr, err := r.MultipartReader()
	if err != nil {
		p.fail(w, r, http.StatusBadRequest, "The form could not be read", "Open the page again and resend the form.")
		return
	}
	s, ok := p.session(w, r)
	if !ok {
		return
	}
	up, err := campaign.ReadUpload(r.Context(), mr, "")
	if err != nil {
		p.composerError(w, r, s, err)
		return
	}
	defer up.Close()
	if subtle.ConstantTimeCompare([]byte(up.Fields["csrf"]), []byte(s.CSRF)) != 1 {
		p.fail(w, r, http.StatusForbidden, "This form has expired",
			"The form did not come from this session's pages (it may be older than your last login). Open the page again and resend it.")
		return
	}
	f := up.Fields
	form := map[string]string{"text": f["text"], "type": f["type"], "from": f["from"], "environment": f["environment"],
		"scheduledAt": f["scheduledAt"]}
	dry := f["do"] != "send"
	in := sending.NewFileCampaign{File: up.File, Text: f["text"], Type: f["type"], From: f["from"], Environment: f["environment"],
		ScheduledAt: f["scheduledAt"], DryRun: dry}
	if !dry {
		in.IdempotencyKey = f["key"]
	}
	out, err := p.cfg.Sending.SendFileCampaign(r.Context(), s.Actor, s.Account, in)
	if errs, ok := sendErrors(err); ok {
		p.showComposer(w, r, s, http.StatusBadRequest, &view{Errors: errs, Form: form}, nil)
		return
	}
	if p.failed(w, r, s, err) {
		return
	}
	if out.Replay != nil {
		http.Redirect(w, r, s.link("/campaigns/"+replayedCampaign(out.Replay.Response)+"?done=campaignSent"), http.StatusSeeOther)
		return
	}
	if dry {
		pv := &campaignPreview{Receipt: out.Receipt, Env: envName(f["environment"])}
		if up.File != nil {
			pv.Variables = up.File.Variables()
		}
		pv.Short = pv.Env == "live" && out.Receipt.Credits > out.Receipt.Balance
		p.showComposer(w, r, s, http.StatusOK, &view{Form: form}, pv)
		return
	}
	http.Redirect(w, r, s.link("/campaigns/"+out.Receipt.Campaign.ID+"?done=campaignSent"), http.StatusSeeOther)
}

// replayedCampaign reads the campaign id from a remembered answer.
func replayedCampaign(body []byte) string {
	const k = `"campaignId":"`
	b := string(body)
	i := strings.Index(b, k)
	if i < 0 {
		return ""
	}
	b = b[i+len(k):]
	if j := strings.IndexByte(b, '"'); j >= 0 {
		return b[:j]
	}
	return ""
}

func envName(v string) string {
	if strings.EqualFold(strings.TrimSpace(v), "test") {
		return "test"
	}
	return "live"
}

// composerError shows an upload that could not be read: over a limit, or
// not a CSV the composer takes.
func (p *Panel) composerError(w http.ResponseWriter, r *http.Request, s *session, err error) {
	msg := ""
	switch {
	case errors.Is(err, campaign.ErrTooManyRows):
		msg = "The file names more than " + thousands(campaign.MaxRows) + " recipients: split it into several campaigns."
	case errors.Is(err, campaign.ErrTooLarge):
		msg = "The file is larger than " + thousands(campaign.MaxBytes>>20) + " MB: split it into several campaigns."
	}
	if msg != "" {
		p.showComposer(w, r, s, http.StatusRequestEntityTooLarge, &view{Errors: map[string]string{"file": msg}}, nil)
		return
	}
	if errs, ok := fieldErrors(err, nil); ok {
		p.showComposer(w, r, s, http.StatusBadRequest, &view{Errors: errs}, nil)
		return
	}
	p.actionError(w, r, s, err)
}

type campaignData struct {
	Page    sending.CampaignView
	Counts  []statusCount
	Done    int // messages that reached an end (delivered, read, failed, canceled)
	Percent int
	Cursor  string
	Next    string
}

type statusCount struct {
	Status  domain.Status
	N       int
	Percent float64
	X       float64 // where its bar starts, in percent
}

func (p *Panel) campaignPage(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.needAccount(w, r, s) {
		return
	}
	cursor := r.URL.Query().Get("after")
	pg, err := p.cfg.Sending.Campaign(r.Context(), s.Actor, s.Account, r.PathValue("id"), cursor, 50)
	if p.failed(w, r, s, err) {
		return
	}
	d := campaignData{Page: pg, Cursor: cursor, Next: pg.Next}
	total := pg.Campaign.Total
	x := 0.0
	// Held messages show only where there are some: most campaigns
	// never meet the fraud guard.
	statuses := domain.Statuses
	if pg.Counts[domain.Held] > 0 {
		statuses = append([]domain.Status{domain.Held}, statuses...)
	}
	for _, st := range statuses {
		n := pg.Counts[st]
		pc := 0.0
		if total > 0 {
			pc = float64(n) * 100 / float64(total)
		}
		d.Counts = append(d.Counts, statusCount{Status: st, N: n, Percent: pc, X: x})
		x += pc
		if st.Final() {
			d.Done += n
		}
	}
	if total > 0 {
		d.Percent = d.Done * 100 / total
	}
	v := &view{Title: "Campaign", Nav: "send", S: s, Notice: sendNotice(r), Data: d}
	p.render(w, r, http.StatusOK, "campaign", v)
}

func (p *Panel) cancelCampaign(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	_, err := p.cfg.Sending.CancelCampaign(r.Context(), s.Actor, s.Account, id)
	p.finish(w, r, s, err, s.link("/campaigns/"+id+"?done=campaignCanceled"))
}

// campaignNotices confirm this file's actions (?done=).
var campaignNotices = map[string]string{
	"campaignSent":     "The campaign was accepted: its messages go out as the progress below shows.",
	"campaignCanceled": "The campaign's waiting messages were canceled and refunded; those already handed to a provider go on.",
}

func sendNotice(r *http.Request) string {
	if n := campaignNotices[r.URL.Query().Get("done")]; n != "" {
		return n
	}
	return notice(r)
}

// renderFragment renders one block of a page (the composer's preview,
// which the page's script puts in place without leaving the page).
func (p *Panel) renderFragment(w http.ResponseWriter, r *http.Request, status int, page, block string, v *view) {
	var b bytes.Buffer
	if err := p.pages[page].ExecuteTemplate(&b, block, v); err != nil {
		p.cfg.Log.Error("render panel fragment", "page", page, "err", err)
		http.Error(w, "The preview could not be shown.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
