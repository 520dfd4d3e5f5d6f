package panel

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// Settings → SMPP: the account's SMPP users (developers and above).

type smppData struct {
	Users  []smppRow
	Totals smppTotals
	// New is the user just made, with its password shown this once.
	New      *domain.SMPPUser
	Password string
}

// smppRow is an SMPP user with what it does: open binds, last bind and
// recent refusals, which operators and the account's developers read to
// see why a peer cannot bind or send.
type smppRow struct {
	domain.SMPPUser
	domain.SMPPActivity
	// BindRefusals and SubmitRefusals split Refusals: a peer that cannot
	// bind and one whose sends are refused are different problems.
	BindRefusals, SubmitRefusals []domain.SMPPRefusal
}

// smppTotals sum the page's users: what an operator reads first.
type smppTotals struct {
	Binds, Bound, BindRefusals, SubmitRefusals int
}

func (p *Panel) smppPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showSMPP(w, r, s, http.StatusOK, &view{Notice: notice(r)}, nil, "")
}

func (p *Panel) showSMPP(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, made *domain.SMPPUser, pw string) {
	if !p.needAccount(w, r, s) {
		return
	}
	users, err := p.cfg.Manage.SMPPUsers(r.Context(), s.Actor, s.Account)
	if p.failed(w, r, s, err) {
		return
	}
	activity, err := p.cfg.Manage.SMPPActivity(r.Context(), s.Actor, s.Account)
	if p.failed(w, r, s, err) {
		return
	}
	rows := make([]smppRow, 0, len(users))
	var t smppTotals
	for _, u := range users {
		row := smppRow{SMPPUser: u, SMPPActivity: activity[u.ID]}
		for _, rf := range row.Refusals {
			if strings.HasPrefix(rf.Command, "bind") {
				row.BindRefusals = append(row.BindRefusals, rf)
			} else {
				row.SubmitRefusals = append(row.SubmitRefusals, rf)
			}
		}
		t.Binds += len(row.Binds)
		if len(row.Binds) > 0 {
			t.Bound++
		}
		t.BindRefusals += len(row.BindRefusals)
		t.SubmitRefusals += len(row.SubmitRefusals)
		rows = append(rows, row)
	}
	v.Title, v.Nav, v.S, v.Data = "SMPP", "smpp", s, smppData{Users: rows, Totals: t, New: made, Password: pw}
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
	var limit *manage.ErrSMPPUserLimit
	if errors.As(err, &limit) {
		p.showSMPP(w, r, s, http.StatusConflict, &view{Errors: map[string]string{"": "The account has " +
			strconv.Itoa(limit.Max) + " SMPP users, the most it may have: remove one before making another."},
			Form: map[string]string{"environment": env, "systemId": sys, "maxBinds": binds}}, nil, "")
		return
	}
	if p.failed(w, r, s, err) {
		return
	}
	// The password is shown in this answer only (never in a URL, never stored).
	p.showSMPP(w, r, s, http.StatusCreated, &view{}, &u, pw)
}

func (p *Panel) removeSMPPUser(w http.ResponseWriter, r *http.Request, s *session) {
	p.finish(w, r, s, p.cfg.Manage.RemoveSMPPUser(r.Context(), s.Actor, s.Account, r.PathValue("id")), s.link("/settings/smpp?done=smppRemoved"))
}
