package twilio

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/twilio/sid"
	"github.com/msgsvc/msgsvc/internal/twilio/vocab"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// maxForm bounds a request's form body.
const maxForm = 1 << 20

func readForm(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		return nil, badRequest(codeInvalidParameter, "The request body is not a form (application/x-www-form-urlencoded): %v", err)
	}
	return r.PostForm, nil
}

// testNumbers are Twilio's magic To numbers for test credentials, which
// fail as Twilio documents whatever msgsvc's test world would do.
var testNumbers = map[string]*Error{
	"15005550001": badRequest(codeInvalidTo, "The 'To' number +15005550001 is not a valid phone number."),
	"15005550002": badRequest(codeUnreachable, "The 'To' phone number +15005550002 is not currently reachable via SMS."),
	"15005550003": badRequest(codeRegionNotEnabled, "Permission to send an SMS has not been enabled for the region indicated by the 'To' number: +15005550003."),
	"15005550004": badRequest(codeOptedOut, "Attempt to send to unsubscribed recipient: +15005550004."),
	"15005550009": badRequest(codeNotMobile, "The 'To' number +15005550009 is not a mobile number."),
}

// unsupported are the create parameters msgsvc refuses rather than send
// something other than what was asked (docs/twilio.md); the others that
// tune Twilio's own machinery are taken and ignored.
var unsupported = []string{"ContentSid", "ContentVariables", "ApplicationSid"}

// sendRequest reads a create form into the core's request.
func (h *Handler) sendRequest(form url.Values, c caller) (domain.SendRequest, error) {
	if form.Get("MessagingServiceSid") != "" {
		return domain.SendRequest{}, badRequest(codeServiceNotFound,
			"The Messaging Service %s does not exist: msgsvc has no Messaging Services; send with From.", form.Get("MessagingServiceSid"))
	}
	for _, p := range unsupported {
		if form.Get(p) != "" {
			return domain.SendRequest{}, badRequest(codeInvalidParameter, "%s is not supported by msgsvc; send the text in Body.", p)
		}
	}
	to, from := strings.TrimSpace(form.Get("To")), strings.TrimSpace(form.Get("From"))
	if to == "" {
		return domain.SendRequest{}, badRequest(codeToRequired, "A 'To' phone number is required.")
	}
	if from == "" {
		return domain.SendRequest{}, badRequest(codeFromRequired, "A 'From' phone number is required.")
	}
	toWA, fromWA := strings.HasPrefix(to, "whatsapp:"), strings.HasPrefix(from, "whatsapp:")
	if toWA != fromWA {
		return domain.SendRequest{}, badRequest(codeChannelMismatch, "Invalid From and To pair: From and To must be on the same channel.")
	}
	req := domain.SendRequest{Channel: domain.SMS, Recipients: []string{strings.TrimPrefix(to, "whatsapp:")}, Single: true,
		Text: form.Get("Body"), Sender: senderOf(strings.TrimPrefix(from, "whatsapp:"))}
	if toWA {
		req.Channel = domain.WhatsApp
	}
	origin := &domain.TwilioOrigin{AccountSid: c.accountSid}
	if cb := form.Get("StatusCallback"); cb != "" {
		if err := webhook.ValidateCallbackURL(cb, h.cfg.AllowPrivate); err != nil {
			return domain.SendRequest{}, badRequest(codeStatusCallback, "The StatusCallback URL %s is not valid: %v", cb, err)
		}
		origin.StatusCallback = cb
	}
	req.Origin = domain.Origin{Front: domain.FrontTwilio, Twilio: origin}
	switch media := form["MediaUrl"]; {
	case len(media) > 1:
		return domain.SendRequest{}, badRequest(codeTooManyMedia, "msgsvc sends at most one MediaUrl per message; %d were given.", len(media))
	case len(media) == 1:
		req.Content.Media = &domain.Media{URL: media[0]}
	}
	if v := form.Get("ValidityPeriod"); v != "" {
		secs, err := strconv.Atoi(v)
		if err != nil {
			return domain.SendRequest{}, badRequest(codeInvalidValidity, "ValidityPeriod must be a whole number of seconds; got %q.", v)
		}
		d := time.Duration(secs) * time.Second
		req.Validity = &d
	}
	sendAt, schedType := form.Get("SendAt"), form.Get("ScheduleType")
	switch {
	case sendAt == "" && schedType == "":
	case schedType != "fixed":
		return domain.SendRequest{}, badRequest(codeSendAt, "To schedule a message, give SendAt with ScheduleType=fixed.")
	case sendAt == "":
		return domain.SendRequest{}, badRequest(codeSendAt, "ScheduleType=fixed needs SendAt, the time to send at (ISO 8601, UTC).")
	default:
		t, err := time.Parse(time.RFC3339, sendAt)
		if err != nil {
			return domain.SendRequest{}, badRequest(codeSendAt, "SendAt must be an ISO 8601 time such as 2026-05-15T14:30:00Z; got %q.", sendAt)
		}
		if !t.After(h.cfg.Now()) {
			return domain.SendRequest{}, badRequest(codeSendAt, "SendAt must be in the future.")
		}
		req.Schedule = t.UTC()
	}
	return req, nil
}

// senderOf is a From as msgsvc names senders: a number as its digits, a
// sender ID as it is.
func senderOf(from string) string {
	if d, ok := strings.CutPrefix(from, "+"); ok && d != "" && strings.Trim(d, "0123456789") == "" {
		return d
	}
	return from
}

// digitsOf is a To as msgsvc stores recipients.
func digitsOf(to string) string {
	return strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(to), "whatsapp:"), "+")
}

func (h *Handler) createMessage(w http.ResponseWriter, r *http.Request, c caller) error {
	form, err := readForm(w, r)
	if err != nil {
		return err
	}
	req, err := h.sendRequest(form, c)
	if err != nil {
		return err
	}
	if c.env == domain.Test {
		if e, ok := testNumbers[digitsOf(form.Get("To"))]; ok {
			return e
		}
	}
	out, err := h.cfg.Sender.Send(r.Context(), c.principal(), req, intake.SendOptions{})
	if err != nil && c.version != 0 && (errors.Is(err, intake.ErrStaleAuth) || toError(err).Status < 500) {
		// The credential came from the cache unchecked and the send found
		// the counter moved, or refused on the strength of account
		// settings that may have changed since: nothing was written. Read
		// the credential afresh and send again.
		fresh, aerr := h.authenticate(r, false)
		if aerr != nil {
			return aerr
		}
		if fresh.accountSid != c.accountSid {
			return errAuth
		}
		c = fresh
		out, err = h.cfg.Sender.Send(r.Context(), c.principal(), req, intake.SendOptions{})
	}
	if err != nil {
		return err
	}
	if len(out.Receipt.Messages) != 1 {
		return errors.New("twilio: a send of one recipient planned other than one message")
	}
	writeJSON(w, http.StatusCreated, ofMessage(out.Receipt.Messages[0].Message, c.accountSid, c.account.Currency, h.cfg.Now()))
	return nil
}

// deletedPrefix marks the recipient of a message deleted through this
// front: a DELETE redacts the message as the native redaction does (its
// number hashed, its text erased, its status, price and ledger kept), and
// this mark, which is still a redacted number to every reader, tells this
// front to answer 404 for it from then on. A redacted message (Body=)
// stays readable, as Twilio's does.
const deletedPrefix = compliance.RedactedPrefix + "deleted:"

func deleted(m domain.Message) bool { return strings.HasPrefix(m.To, deletedPrefix) }

// deleteRedaction is the node's redaction with the deleted mark.
func (h *Handler) deleteRedaction() domain.Redaction {
	base := h.cfg.Redaction
	return domain.Redaction{EventBody: base.EventBody, Phone: func(p string) string {
		if strings.HasPrefix(p, deletedPrefix) {
			return p
		}
		hashed := p
		if base.Phone != nil {
			hashed = base.Phone(p)
		}
		return deletedPrefix + strings.TrimPrefix(hashed, compliance.RedactedPrefix)
	}}
}

// lookup reads one of the caller's messages by SID; another account's,
// another environment's or a deleted message is not found.
func (h *Handler) lookup(r *http.Request, c caller, smSid string) (domain.Message, error) {
	id := sid.ToNative(sid.Message, "msg", smSid)
	if id == "" {
		return domain.Message{}, errNotFound
	}
	m, err := h.cfg.Messages.Get(r.Context(), c.scope(), id)
	if err != nil {
		return domain.Message{}, err
	}
	if deleted(m) {
		return domain.Message{}, errNotFound
	}
	return m, nil
}

func (h *Handler) fetchMessage(w http.ResponseWriter, r *http.Request, c caller, smSid string) error {
	m, err := h.lookup(r, c, smSid)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ofMessage(m, c.accountSid, c.account.Currency, h.cfg.Now()))
	return nil
}

// updateMessage: Status=canceled cancels a message not yet handed over;
// Body= (empty) redacts it.
func (h *Handler) updateMessage(w http.ResponseWriter, r *http.Request, c caller, smSid string) error {
	form, err := readForm(w, r)
	if err != nil {
		return err
	}
	m, err := h.lookup(r, c, smSid)
	if err != nil {
		return err
	}
	status, hasStatus := form["Status"]
	body, hasBody := form["Body"]
	switch {
	case hasStatus && (len(status) != 1 || status[0] != vocab.Canceled):
		return badRequest(codeInvalidParameter, "Status can only be set to canceled.")
	case hasBody && (len(body) != 1 || body[0] != ""):
		return badRequest(codeInvalidParameter, "Body can only be set to the empty string, which redacts the message.")
	}
	if hasStatus {
		if m, err = h.cfg.Messages.Cancel(r.Context(), c.scope(), m.ID); err != nil {
			return err
		}
	}
	if hasBody {
		if m, err = h.cfg.Messages.Redact(r.Context(), c.scope(), m.ID); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, ofMessage(m, c.accountSid, c.account.Currency, h.cfg.Now()))
	return nil
}

func (h *Handler) deleteMessage(w http.ResponseWriter, r *http.Request, c caller, smSid string) error {
	m, err := h.lookup(r, c, smSid)
	if err != nil {
		return err
	}
	if h.cfg.Eraser == nil {
		return errors.New("twilio: no eraser configured")
	}
	if _, err := h.cfg.Eraser.Redact(r.Context(), m.ID, h.deleteRedaction()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Paging.
const (
	defaultPageSize = 50
	maxPageSize     = 1000
	// maxScan bounds the messages one list request reads to fill a page
	// that filters msgsvc cannot apply in the store (From, deleted): past
	// it, the page is answered short with its next page's link.
	maxScan = 5000
	// pageTokenPrefix begins a page token: the cursor (the last message
	// of the page before) spelt as a SID.
	pageTokenPrefix = "PA"
)

type listQuery struct {
	filter   message.ListFilter
	from     string
	pageSize int
	page     int
	token    string
}

func (h *Handler) readListQuery(q url.Values) (listQuery, error) {
	lq := listQuery{pageSize: defaultPageSize}
	if v := q.Get("PageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			return lq, badRequest(codeInvalidParameter, "PageSize must be a whole number from 1 to %d.", maxPageSize)
		}
		lq.pageSize = n
	}
	if v := q.Get("Page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return lq, badRequest(codeInvalidParameter, "Page must be a whole number from 0.")
		}
		lq.page = n
	}
	if v := q.Get("PageToken"); v != "" {
		after := sid.ToNative(pageTokenPrefix, "msg", v)
		if after == "" {
			return lq, badRequest(codeInvalidParameter, "PageToken is not a token this API returned.")
		}
		lq.token, lq.filter.After = v, after
	}
	if v := q.Get("To"); v != "" {
		lq.filter.To = digitsOf(v)
	}
	if v := q.Get("From"); v != "" {
		lq.from = senderOf(strings.TrimPrefix(strings.TrimSpace(v), "whatsapp:"))
	}
	for _, p := range []struct {
		name string
		set  func(from, to time.Time)
	}{
		// DateSent names a day, whatever time of it the client wrote (the
		// SDKs write a date as a time).
		{"DateSent", func(from, _ time.Time) {
			day := from.Truncate(24 * time.Hour)
			lq.filter.CreatedFrom, lq.filter.CreatedTo = day, day.Add(24*time.Hour)
		}},
		{"DateSent<", func(_, to time.Time) { lq.filter.CreatedTo = to }},
		{"DateSent>", func(from, _ time.Time) { lq.filter.CreatedFrom = from }},
	} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		from, to, err := dateRange(v)
		if err != nil {
			return lq, badRequest(codeInvalidParameter, "%s must be a date (YYYY-MM-DD) or an ISO 8601 time; got %q.", p.name, v)
		}
		p.set(from, to)
	}
	return lq, nil
}

// dateRange is the span a date filter names: a whole UTC day for a bare
// date, else the instant (to its second).
func dateRange(v string) (time.Time, time.Time, error) {
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, t.Add(24 * time.Hour), nil
	}
	t, err := vocab.ParseDate(v)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	return t, t.Add(time.Second), nil
}

func (h *Handler) listMessages(w http.ResponseWriter, r *http.Request, c caller) error {
	q := r.URL.Query()
	lq, err := h.readListQuery(q)
	if err != nil {
		return err
	}
	f := lq.filter
	skip := 0
	if lq.token == "" {
		// A page by number alone (no token) is found by walking to it.
		skip = lq.page * lq.pageSize
	}
	var got []domain.Message
	more, scanned := false, 0
	for {
		f.Limit = lq.pageSize
		if lq.from != "" || skip > 0 {
			f.Limit = min(max(lq.pageSize, 100), maxPageSize)
		}
		p, err := h.cfg.Messages.List(r.Context(), c.scope(), f)
		if err != nil {
			return err
		}
		i := 0
		for ; i < len(p.Messages) && len(got) < lq.pageSize; i++ {
			m := p.Messages[i]
			f.After = m.ID
			scanned++
			if deleted(m) || lq.from != "" && m.From != lq.from {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			got = append(got, m)
		}
		more = i < len(p.Messages) || p.Next != ""
		if !more || len(got) == lq.pageSize {
			break
		}
		if scanned >= maxScan {
			break // a short page; its next link carries on from here
		}
	}
	now := h.cfg.Now()
	out := messagePage{Messages: make([]messageResource, 0, len(got))}
	for _, m := range got {
		out.Messages = append(out.Messages, ofMessage(m, c.accountSid, c.account.Currency, now))
	}
	path := accountURI(c.accountSid) + "/Messages.json"
	out.page = pageOf(path, q, lq.page, lq.pageSize, len(got))
	if more {
		next := pageURI(path, q, lq.page+1, lq.pageSize, sid.FromNative(pageTokenPrefix, f.After))
		out.NextPageURI = &next
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// pageOf is the page envelope of a page of n items.
func pageOf(path string, q url.Values, pageNo, size, n int) page {
	start := pageNo * size
	return page{
		FirstPageURI: pageURI(path, q, 0, size, ""),
		URI:          pageURI(path, q, pageNo, size, q.Get("PageToken")),
		Page:         pageNo,
		PageSize:     size,
		Start:        start,
		End:          start + max(n-1, 0),
	}
}

// pageURI links a page with the request's filters.
func pageURI(path string, q url.Values, pageNo, size int, token string) string {
	v := url.Values{}
	for k, vs := range q {
		switch k {
		case "Page", "PageSize", "PageToken":
		default:
			v[k] = vs
		}
	}
	v.Set("PageSize", strconv.Itoa(size))
	v.Set("Page", strconv.Itoa(pageNo))
	if token != "" {
		v.Set("PageToken", token)
	}
	return path + "?" + v.Encode()
}
