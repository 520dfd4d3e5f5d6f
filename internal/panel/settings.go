package panel

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// Settings: API keys, security, senders, limits.

// needAccount sends an operator who has not chosen an account to the
// operator page, where the accounts are; ok is false then.
func (p *Panel) needAccount(w http.ResponseWriter, r *http.Request, s *session) bool {
	if s.Current == nil {
		http.Redirect(w, r, "/operator", http.StatusSeeOther)
		return false
	}
	return true
}

type keysData struct {
	Keys []keyRow
	// New is the key just made, shown this once.
	New     string
	NewName string
	Now     time.Time
}

func (p *Panel) keysPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showKeys(w, r, s, http.StatusOK, &view{Notice: notice(r)}, "", "")
}

func (p *Panel) showKeys(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, secret, name string) {
	if !p.needAccount(w, r, s) {
		return
	}
	keys, err := p.cfg.Manage.Keys(r.Context(), s.Actor, s.Account)
	if p.failed(w, r, s, err) {
		return
	}
	now := p.cfg.Now()
	d := keysData{New: secret, NewName: name, Now: now}
	for _, k := range keys {
		d.Keys = append(d.Keys, keyRow{APIKey: k, Old: k.RevokedAt.IsZero() && now.Sub(k.CreatedAt) > manage.KeyAgeWarning})
	}
	v.Title, v.Nav, v.S, v.Data = "API keys", "keys", s, d
	p.render(w, r, status, "keys", v)
}

func (p *Panel) createKey(w http.ResponseWriter, r *http.Request, s *session) {
	env, name := r.PostForm.Get("environment"), r.PostForm.Get("name")
	k, rec, err := p.cfg.Manage.CreateKey(r.Context(), s.Actor, s.Account, env, name)
	if errs, ok := fieldErrors(err, nil); ok {
		p.showKeys(w, r, s, http.StatusBadRequest, &view{Errors: errs, Form: map[string]string{"name": name, "environment": env}}, "", "")
		return
	}
	if p.failed(w, r, s, err) {
		return
	}
	// The key is shown in this answer only (never in a URL, never stored).
	p.showKeys(w, r, s, http.StatusCreated, &view{}, k.Secret, rec.Name)
}

func (p *Panel) revokeKey(w http.ResponseWriter, r *http.Request, s *session) {
	p.finish(w, r, s, p.cfg.Manage.RevokeKey(r.Context(), s.Actor, s.Account, r.PathValue("id")), s.link("/settings/keys?done=revoked"))
}

type securityData struct {
	Allowlist string
	Secret    *manage.Secret // revealed or just rotated
	Rotated   bool
}

func (p *Panel) securityPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showSecurity(w, r, s, http.StatusOK, &view{Notice: notice(r)}, nil, false)
}

func (p *Panel) showSecurity(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, secret *manage.Secret, rotated bool) {
	if !p.needAccount(w, r, s) {
		return
	}
	list, err := p.cfg.Manage.Allowlist(r.Context(), s.Actor, s.Account)
	if p.failed(w, r, s, err) {
		return
	}
	v.Title, v.Nav, v.S = "Security", "security", s
	v.Data = securityData{Allowlist: strings.Join(list, "\n"), Secret: secret, Rotated: rotated}
	p.render(w, r, status, "security", v)
}

// splitEntries reads the allow-list textarea: one entry per line (commas
// and spaces separate too).
func splitEntries(text string) []string {
	f := strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' || r == ' ' || r == '\t' })
	return append([]string{}, f...)
}

func (p *Panel) setAllowlist(w http.ResponseWriter, r *http.Request, s *session) {
	text := r.PostForm.Get("entries")
	entries := splitEntries(text)
	_, err := p.cfg.Manage.SetAllowlist(r.Context(), s.Actor, s.Account, entries)
	if errs, ok := fieldErrors(err, nil); ok {
		msg := ""
		for i, e := range entries {
			if m, bad := errs["entries["+strconv.Itoa(i)+"]"]; bad {
				msg += e + " " + m + ". "
			}
		}
		if m, bad := errs["entries"]; bad {
			msg += "The list " + m + "."
		}
		p.showSecurity(w, r, s, http.StatusBadRequest, &view{Errors: map[string]string{"entries": strings.TrimSpace(msg)},
			Form: map[string]string{"entries": text}}, nil, false)
		return
	}
	p.finish(w, r, s, err, s.link("/settings/security?done=allowlist"))
}

func (p *Panel) revealSecret(w http.ResponseWriter, r *http.Request, s *session) {
	sec, err := p.cfg.Manage.WebhookSecret(r.Context(), s.Actor, s.Account)
	if p.failed(w, r, s, err) {
		return
	}
	p.showSecurity(w, r, s, http.StatusOK, &view{}, &sec, false)
}

func (p *Panel) rotateSecret(w http.ResponseWriter, r *http.Request, s *session) {
	sec, err := p.cfg.Manage.RotateSecret(r.Context(), s.Actor, s.Account)
	if p.failed(w, r, s, err) {
		return
	}
	p.showSecurity(w, r, s, http.StatusOK, &view{}, &sec, true)
}

func (p *Panel) sendersPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showSenders(w, r, s, http.StatusOK, &view{Notice: notice(r)})
}

func (p *Panel) showSenders(w http.ResponseWriter, r *http.Request, s *session, status int, v *view) {
	if !p.needAccount(w, r, s) {
		return
	}
	list, err := p.cfg.Manage.Senders(r.Context(), s.Actor, s.Account)
	if p.failed(w, r, s, err) {
		return
	}
	v.Title, v.Nav, v.S, v.Data = "Senders", "senders", s, list
	p.render(w, r, status, "senders", v)
}

func (p *Panel) addSender(w http.ResponseWriter, r *http.Request, s *session) {
	in := manage.NewSender{Channel: r.PostForm.Get("channel"), Value: strings.TrimSpace(r.PostForm.Get("value")),
		Default: r.PostForm.Get("default") == "on"}
	sd, err := p.cfg.Manage.AddSender(r.Context(), s.Actor, s.Account, in)
	form := map[string]string{"channel": in.Channel, "value": in.Value}
	if errors.Is(err, manage.ErrSenderTaken) {
		p.showSenders(w, r, s, http.StatusConflict, &view{Errors: map[string]string{"value": "is already approved for another account on this channel"},
			Form: form})
		return
	}
	if errs, ok := fieldErrors(err, nil); ok {
		p.showSenders(w, r, s, http.StatusBadRequest, &view{Errors: errs, Form: form})
		return
	}
	if p.failed(w, r, s, err) {
		return
	}
	done := "sender"
	if sd.Status == domain.SenderApproved {
		done = "senderApproved"
	}
	http.Redirect(w, r, s.link("/settings/senders?done="+done), http.StatusSeeOther)
}

func (p *Panel) removeSender(w http.ResponseWriter, r *http.Request, s *session) {
	p.finish(w, r, s, p.cfg.Manage.RemoveSender(r.Context(), s.Actor, s.Account, r.PathValue("id")), s.link("/settings/senders?done=removed"))
}

type limitsData struct {
	Limits   manage.LimitsView
	Requests []domain.LimitRequest
	UseCases []string
}

func (p *Panel) limitsPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showLimits(w, r, s, http.StatusOK, &view{Notice: notice(r)})
}

func (p *Panel) showLimits(w http.ResponseWriter, r *http.Request, s *session, status int, v *view) {
	if !p.needAccount(w, r, s) {
		return
	}
	lv, err := p.cfg.Manage.Limits(r.Context(), s.Actor, s.Account)
	if p.failed(w, r, s, err) {
		return
	}
	reqs, err := p.cfg.Manage.LimitRequests(r.Context(), s.Actor, s.Account)
	if p.failed(w, r, s, err) {
		return
	}
	v.Title, v.Nav, v.S, v.Data = "Limits and quotas", "limits", s, limitsData{Limits: lv, Requests: reqs, UseCases: manage.UseCases}
	p.render(w, r, status, "limits", v)
}

func (p *Panel) requestLimits(w http.ResponseWriter, r *http.Request, s *session) {
	form := map[string]string{"volume": r.PostForm.Get("volume"), "useCase": r.PostForm.Get("useCase"),
		"justification": r.PostForm.Get("justification")}
	vol, perr := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(form["volume"]), ",", ""), 10, 64)
	if perr != nil {
		vol = 0
	}
	_, err := p.cfg.Manage.RequestLimits(r.Context(), s.Actor, s.Account, manage.NewLimitRequest{MonthlyVolume: vol,
		UseCase: form["useCase"], Justification: form["justification"]})
	if errs, ok := fieldErrors(err, map[string]string{"monthlyVolume": "volume"}); ok {
		p.showLimits(w, r, s, http.StatusBadRequest, &view{Errors: errs, Form: form})
		return
	}
	p.finish(w, r, s, err, s.link("/settings/limits?done=requested"))
}
