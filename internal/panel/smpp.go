package panel

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// Settings → SMPP: the account's SMPP users (developers and above).

type smppData struct {
	Users []domain.SMPPUser
	// New is the user just made, with its password shown this once.
	New      *domain.SMPPUser
	Password string
}

func (p *Panel) smppPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showSMPP(w, r, s, http.StatusOK, &view{Notice: notice(r)}, nil, "")
}

func (p *Panel) showSMPP(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, made *domain.SMPPUser, pw string) {
	if !p.needAccount(w, r, s) {
		return
	}
	users, err := p.cfg.Manage.SMPPUsers(r.Context(), s.Actor, s.Account)
	if err != nil {
		p.actionError(w, r, s, err)
		return
	}
	v.Title, v.Nav, v.S, v.Data = "SMPP", "smpp", s, smppData{Users: users, New: made, Password: pw}
	p.render(w, r, status, "smpp", v)
}

func (p *Panel) createSMPPUser(w http.ResponseWriter, r *http.Request, s *session) {
	env, sys, binds := r.PostForm.Get("environment"), strings.TrimSpace(r.PostForm.Get("systemId")), r.PostForm.Get("maxBinds")
	in := manage.NewSMPPUser{Environment: env, SystemID: sys}
	if binds != "" {
		n, err := strconv.Atoi(binds)
		if err != nil || n == 0 {
			n = -1 // out of range: the action names the field
		}
		in.MaxBinds = n
	}
	u, pw, err := p.cfg.Manage.CreateSMPPUser(r.Context(), s.Actor, s.Account, in)
	if errs, ok := fieldErrors(err, nil); ok {
		p.showSMPP(w, r, s, http.StatusBadRequest, &view{Errors: errs,
			Form: map[string]string{"environment": env, "systemId": sys, "maxBinds": binds}}, nil, "")
		return
	}
	if err != nil {
		p.actionError(w, r, s, err)
		return
	}
	// The password is shown in this answer only (never in a URL, never stored).
	p.showSMPP(w, r, s, http.StatusCreated, &view{}, &u, pw)
}

func (p *Panel) removeSMPPUser(w http.ResponseWriter, r *http.Request, s *session) {
	if err := p.cfg.Manage.RemoveSMPPUser(r.Context(), s.Actor, s.Account, r.PathValue("id")); err != nil {
		p.actionError(w, r, s, err)
		return
	}
	http.Redirect(w, r, s.link("/settings/smpp?done=smppRemoved"), http.StatusSeeOther)
}
