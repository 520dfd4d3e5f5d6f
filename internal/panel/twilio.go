package panel

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// Settings → Twilio: the account SIDs and API keys its Twilio-compatible
// clients log in with (developers and above), beside the API keys.

type twilioData struct {
	Creds []domain.TwilioCredential
	// AccountSids are the account SIDs an API key may act for.
	AccountSids []domain.TwilioCredential
	// New is the credential just made, with its secret shown this once.
	New *domain.TwilioCredential
}

func (p *Panel) twilioPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showTwilio(w, r, s, http.StatusOK, &view{Notice: notice(r)}, nil)
}

func (p *Panel) showTwilio(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, made *domain.TwilioCredential) {
	if !p.needAccount(w, r, s) {
		return
	}
	creds, err := p.cfg.Manage.TwilioCredentials(r.Context(), s.Actor, s.Account)
	if err != nil {
		p.actionError(w, r, s, err)
		return
	}
	d := twilioData{Creds: creds, New: made}
	for _, c := range creds {
		if c.Kind == domain.TwilioAccountSid {
			d.AccountSids = append(d.AccountSids, c)
		}
	}
	v.Title, v.Nav, v.S, v.Data = "Twilio", "twilio", s, d
	p.render(w, r, status, "twilio", v)
}

// createTwilioCredential makes an account SID, or an API key when the
// form names the account SID it acts for.
func (p *Panel) createTwilioCredential(w http.ResponseWriter, r *http.Request, s *session) {
	env, name, parent := r.PostForm.Get("environment"), r.PostForm.Get("name"), strings.TrimSpace(r.PostForm.Get("accountSid"))
	in := manage.NewTwilioCredential{Environment: env, Name: name}
	form := map[string]string{"environment": env, "name": name}
	if r.PostForm.Get("kind") == "apiKey" {
		in = manage.NewTwilioCredential{APIKey: true, AccountSid: parent, Name: name}
		form = map[string]string{"accountSid": parent, "keyName": name}
	}
	c, err := p.cfg.Manage.CreateTwilioCredential(r.Context(), s.Actor, s.Account, in)
	var names map[string]string
	if in.APIKey {
		names = map[string]string{"name": "keyName"} // each form has its own name input
	}
	if errs, ok := fieldErrors(err, names); ok {
		p.showTwilio(w, r, s, http.StatusBadRequest, &view{Errors: errs, Form: form}, nil)
		return
	}
	var limit *manage.ErrTwilioCredentialLimit
	if errors.As(err, &limit) {
		p.showTwilio(w, r, s, http.StatusConflict, &view{Errors: map[string]string{"": "The account has " +
			strconv.Itoa(limit.Max) + " Twilio credentials, the most it may have: remove one before making another."}, Form: form}, nil)
		return
	}
	if err != nil {
		p.actionError(w, r, s, err)
		return
	}
	// The secret is shown in this answer only (never in a URL).
	p.showTwilio(w, r, s, http.StatusCreated, &view{}, &c)
}

func (p *Panel) removeTwilioCredential(w http.ResponseWriter, r *http.Request, s *session) {
	p.finish(w, r, s, p.cfg.Manage.RemoveTwilioCredential(r.Context(), s.Actor, s.Account, r.PathValue("sid")),
		s.link("/settings/twilio?done=twilioRemoved"))
}
