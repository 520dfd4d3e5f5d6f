package panel

import (
	"net/http"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/user"
)

// Users: an owner's list of the account's panel users.

type usersData struct {
	Users []domain.User
	Roles []string
	// New is the user just added and Password its generated password,
	// shown this once.
	New      *domain.User
	Password string
}

func (p *Panel) usersPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.showUsers(w, r, s, http.StatusOK, &view{Notice: notice(r)}, usersData{})
}

func (p *Panel) showUsers(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, d usersData) {
	if !p.needAccount(w, r, s) {
		return
	}
	list, err := p.cfg.Manage.Users(r.Context(), s.Actor, s.Account)
	if p.failed(w, r, s, err) {
		return
	}
	d.Users, d.Roles = list, []string{user.Viewer, user.Developer, user.Admin, user.Owner}
	v.Title, v.Nav, v.S, v.Data = "Users", "users", s, d
	p.render(w, r, status, "users", v)
}

func (p *Panel) addUser(w http.ResponseWriter, r *http.Request, s *session) {
	in := manage.NewUser{AccountID: s.Account, Email: strings.TrimSpace(r.PostForm.Get("email")), Role: r.PostForm.Get("role")}
	if in.Role == user.Operator {
		in.Role = ""
	}
	u, pw, err := p.cfg.Manage.CreateUser(r.Context(), s.Actor, in)
	if t, ok := manage.IsThrottled(err); ok {
		p.showUsers(w, r, s, http.StatusTooManyRequests, &view{Errors: map[string]string{"email": "Too many refused emails. Try again in " +
			retryIn(t.RetryAfter) + "."}, Form: map[string]string{"email": in.Email, "role": in.Role}}, usersData{})
		return
	}
	if errs, ok := fieldErrors(err, nil); ok {
		p.showUsers(w, r, s, http.StatusBadRequest, &view{Errors: errs, Form: map[string]string{"email": in.Email, "role": in.Role}}, usersData{})
		return
	}
	if p.failed(w, r, s, err) {
		return
	}
	p.showUsers(w, r, s, http.StatusCreated, &view{}, usersData{New: &u, Password: pw})
}

func (p *Panel) removeUser(w http.ResponseWriter, r *http.Request, s *session) {
	err := p.cfg.Manage.RemoveUser(r.Context(), s.Actor, s.Account, r.PathValue("id"))
	if errs, ok := fieldErrors(err, nil); ok {
		p.fail(w, r, http.StatusBadRequest, "The user cannot be removed", "This user "+errs["id"]+".")
		return
	}
	p.finish(w, r, s, err, s.link("/settings/users?done=userRemoved"))
}
