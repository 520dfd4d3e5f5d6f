package panel

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// Messages: search, a message's history and webhooks, redelivery.

type messagesData struct {
	Page     manage.MessagePage
	Statuses []domain.Status
	// NextLink is the next page's address ("" on the last page).
	NextLink string
	Searched bool
}

// dayInput is the layout of the date inputs of the search form.
const dayInput = "2006-01-02"

func (p *Panel) messagesPage(w http.ResponseWriter, r *http.Request, s *session) {
	if s.Current == nil && s.Actor.Operator() {
		p.searchAll(w, r, s)
		return
	}
	if !p.needAccount(w, r, s) {
		return
	}
	q := r.URL.Query()
	form, mq, errs := messageQueryOf(q, "to", "status", "campaignId", "from", "until", "environment")
	v := &view{Title: "Messages", Nav: "messages", S: s, Form: form, Errors: errs}
	d := messagesData{Statuses: domain.Statuses, Searched: len(q) > 0}
	if len(errs) == 0 {
		page, err := p.cfg.Manage.SearchMessages(r.Context(), s.Actor, s.Account, mq)
		if fe, ok := fieldErrors(err, map[string]string{"createdFrom": "from", "createdTo": "until"}); ok {
			v.Errors = fe
		} else if err != nil {
			p.actionError(w, r, s, err)
			return
		}
		d.Page = page
		if page.Next != "" {
			next := url.Values{}
			for k, val := range q {
				next[k] = val
			}
			next.Set("cursor", page.Next)
			d.NextLink = "/messages?" + next.Encode()
		}
	}
	v.Data = d
	status := http.StatusOK
	if len(v.Errors) > 0 {
		status = http.StatusBadRequest
	}
	p.render(w, r, status, "messages", v)
}

func (p *Panel) messagePage(w http.ResponseWriter, r *http.Request, s *session) {
	if !p.needAccount(w, r, s) {
		return
	}
	d, err := p.cfg.Manage.Message(r.Context(), s.Actor, s.Account, r.PathValue("id"))
	if p.failed(w, r, s, err) {
		return
	}
	p.render(w, r, http.StatusOK, "message", &view{Title: "Message", Nav: "messages", S: s, Notice: notice(r), Data: ofDetail(d)})
}

// messageData is a message as its page shows it: whether retention erased
// its text, and each webhook with what it reported.
type messageData struct {
	Message  domain.Message
	Redacted bool
	Events   []eventCard
	Replies  []domain.Inbound
}

type eventCard struct {
	manage.EventAttempts
	// Carried is what the webhook reports: a delivery status, or that it
	// is a reply.
	Carried string
	// Unsent: the send had no callbackUrl, so this event is only in the
	// events feed and no webhook will ever be posted for it.
	Unsent bool
}

func ofDetail(d manage.MessageDetail) messageData {
	out := messageData{Message: d.Message, Redacted: compliance.Redacted(d.Message.To), Replies: d.Replies}
	for _, ev := range d.Events {
		out.Events = append(out.Events, eventCard{EventAttempts: ev, Carried: carried(ev.Event), Unsent: ev.Event.State == domain.EventNone})
	}
	return out
}

// carried reads what an event's body reports; the body is the webhook's
// JSON, whose shape depends on the event.
func carried(ev domain.Event) string {
	var body struct {
		Status string `json:"status"`
	}
	if json.Unmarshal([]byte(ev.Body), &body) == nil && body.Status != "" {
		return body.Status
	}
	if ev.Event == "message_received" {
		return "reply"
	}
	return ""
}

func (p *Panel) redeliver(w http.ResponseWriter, r *http.Request, s *session) {
	if err := p.cfg.Manage.Redeliver(r.Context(), s.Actor, s.Account, r.PostForm.Get("event")); err != nil {
		if errs, ok := fieldErrors(err, nil); ok {
			p.fail(w, r, http.StatusBadRequest, "The webhook cannot be redelivered", errs["id"])
			return
		}
		p.actionError(w, r, s, err)
		return
	}
	http.Redirect(w, r, s.link("/messages/"+url.PathEscape(r.PathValue("id"))+"?done=redeliver"), http.StatusSeeOther)
}

// messageQueryOf reads a message search's filters (the keys given) from
// the query: the form as typed, the query the service takes, and what is
// wrong with the dates.
func messageQueryOf(q url.Values, keys ...string) (map[string]string, manage.MessageQuery, map[string]string) {
	form := map[string]string{}
	for _, k := range keys {
		form[k] = strings.TrimSpace(q.Get(k))
	}
	mq := manage.MessageQuery{To: strings.TrimPrefix(form["to"], "+"), Status: form["status"], CampaignID: form["campaignId"],
		Reference: form["reference"], Environment: form["environment"], Limit: "50", Cursor: q.Get("cursor")}
	errs := map[string]string{}
	if form["from"] != "" {
		if t, err := time.Parse(dayInput, form["from"]); err == nil {
			mq.CreatedFrom = t.Format(time.RFC3339)
		} else {
			errs["from"] = "must be a date"
		}
	}
	if form["until"] != "" {
		if t, err := time.Parse(dayInput, form["until"]); err == nil {
			mq.CreatedTo = t.AddDate(0, 0, 1).Format(time.RFC3339) // the whole day
		} else {
			errs["until"] = "must be a date"
		}
	}
	return form, mq, errs
}
