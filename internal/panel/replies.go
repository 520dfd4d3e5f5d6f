package panel

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/msgsvc/msgsvc/internal/manage"
)

// Replies: what recipients wrote back (message_received), newest first,
// each with the message it answers.

type repliesData struct {
	Page manage.ReplyPage
	// NextLink is the next page's address ("" on the last page).
	NextLink string
	Searched bool
}

func (p *Panel) repliesPage(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.needAccount(w, r, s) {
		return
	}
	q := r.URL.Query()
	form := map[string]string{"phone": strings.TrimSpace(q.Get("phone")), "environment": q.Get("environment")}
	v := &view{Title: "Replies", Nav: "replies", S: s, Form: form}
	d := repliesData{Searched: form["phone"] != "" || form["environment"] != ""}
	page, err := p.cfg.Manage.Replies(r.Context(), s.Actor, s.Account, manage.ReplyQuery{
		Phone: strings.TrimPrefix(form["phone"], "+"), Environment: form["environment"], Cursor: q.Get("cursor")})
	status := http.StatusOK
	if fe, ok := fieldErrors(err, nil); ok {
		v.Errors, status = fe, http.StatusBadRequest
	} else if p.failed(w, r, s, err) {
		return
	}
	d.Page = page
	if page.Next != "" {
		next := url.Values{}
		for k, val := range q {
			next[k] = val
		}
		next.Set("cursor", page.Next)
		d.NextLink = "/replies?" + next.Encode()
	}
	v.Data = d
	p.render(w, r, status, "replies", v)
}
