package api

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/message"
)

// listMessages is GET /messages: the key's environment's messages, newest
// first, filtered and paged.
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	q, err := queryParams(r, "status", "to", "campaignId", "reference", "createdFrom", "createdTo", "limit", "cursor")
	if err != nil {
		return err
	}
	f, err := listFilter(q)
	if err != nil {
		return err
	}
	p, err := s.cfg.Messages.List(r.Context(), c.Scope(), f)
	if err != nil {
		return err
	}
	out := view.MessageList{Messages: view.Listed(p.Messages)}
	if p.Next != "" {
		next := base64.RawURLEncoding.EncodeToString([]byte(p.Next))
		out.NextCursor = &next
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// listFilter reads the list's query parameters, naming every bad one.
func listFilter(q url.Values) (message.ListFilter, error) {
	var f message.ListFilter
	var bad []domain.FieldError
	fail := func(field, msg string) { bad = append(bad, domain.FieldError{Field: field, Message: msg}) }
	var err error
	if v := q.Get("status"); v != "" {
		if f.Status, err = domain.ParseStatus(strings.ToUpper(v)); err != nil {
			fail("status", "must be one of SENDING, SENT, DELIVERED, READ, FAILED, CANCELED")
		}
	}
	if v := q.Get("to"); v != "" {
		// Numbers are kept as digits; one leading "+" (E.164) names the same one.
		v = strings.TrimPrefix(v, "+")
		if len(v) < 8 || len(v) > 15 || strings.Trim(v, "0123456789") != "" {
			fail("to", "must be 8 to 15 digits, country code first, with at most one leading +")
		}
		f.To = v
	}
	f.CampaignID, f.Reference = q.Get("campaignId"), q.Get("reference")
	if len(f.Reference) > 128 {
		fail("reference", "must be at most 128 characters")
	}
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"createdFrom", &f.CreatedFrom}, {"createdTo", &f.CreatedTo}} {
		if v := q.Get(t.name); v != "" {
			if *t.dst, err = time.Parse(time.RFC3339Nano, v); err != nil {
				fail(t.name, "must be an RFC 3339 time, e.g. 2030-01-31T09:00:00Z")
			}
		}
	}
	if !f.CreatedFrom.IsZero() && !f.CreatedTo.IsZero() && !f.CreatedTo.After(f.CreatedFrom) {
		fail("createdTo", "must be later than createdFrom")
	}
	if f.Limit, err = limitParam(q); err != nil {
		fail("limit", "must be a whole number from 1 to 1000")
	}
	if cur := q.Get("cursor"); cur != "" {
		b, err := base64.RawURLEncoding.DecodeString(cur)
		if err != nil || !strings.HasPrefix(string(b), "msg_") {
			fail("cursor", "is not a cursor this API returned; pass nextCursor as it came")
		}
		f.After = string(b)
	}
	if len(bad) > 0 {
		return f, validation("The list parameters are not valid.", bad...)
	}
	return f, nil
}

// listEvents is GET /events: the key's environment's events after a
// cursor, oldest first.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	q, err := queryParams(r, "after", "limit")
	if err != nil {
		return err
	}
	limit, err := limitParam(q)
	if err != nil {
		return fieldError("limit", "must be a whole number from 1 to 1000")
	}
	var after int64
	if cur := q.Get("after"); cur != "" {
		if after, err = decodeFeedCursor(cur); err != nil {
			return fieldError("after", "is not a cursor this API returned; pass nextCursor as it came")
		}
	}
	p, err := s.cfg.Messages.Events(r.Context(), c.Scope(), after, limit)
	if err != nil {
		return err
	}
	out := view.EventList{Events: make([]view.Event, len(p.Events)), NextCursor: encodeFeedCursor(p.Next)}
	for i, e := range p.Events {
		out.Events[i] = view.Event{ID: e.ID, Type: e.Event.Event, CreatedAt: view.Time(e.CreatedAt), Data: json.RawMessage(e.Body)}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// The feed's cursor is a position in it, versioned so that its form may
// change without breaking the cursors integrators keep.
const feedCursorPrefix = "f1."

func encodeFeedCursor(pos int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(feedCursorPrefix + strconv.FormatInt(pos, 10)))
}

func decodeFeedCursor(cur string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(cur)
	if err != nil {
		return 0, err
	}
	v, ok := strings.CutPrefix(string(b), feedCursorPrefix)
	if !ok {
		return 0, strconv.ErrSyntax
	}
	pos, err := strconv.ParseInt(v, 10, 64)
	if err != nil || pos < 0 {
		return 0, strconv.ErrSyntax
	}
	return pos, nil
}

// limitParam reads ?limit= (default 100, 1 to 1000).
func limitParam(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return 100, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1000 {
		return 0, strconv.ErrRange
	}
	return n, nil
}

// queryParams parses the query string and refuses parameters the
// operation does not take or that are given twice: a misspelt filter
// would otherwise quietly list everything.
func queryParams(r *http.Request, allowed ...string) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, validation("The query string is malformed: "+err.Error()+".", domain.FieldError{Field: "query", Message: "is malformed"})
	}
	var bad []domain.FieldError
	for _, k := range slices.Sorted(maps.Keys(q)) {
		switch {
		case !slices.Contains(allowed, k):
			bad = append(bad, domain.FieldError{Field: k, Message: "is not a parameter of this operation (it takes " + strings.Join(allowed, ", ") + ")"})
		case len(q[k]) > 1:
			bad = append(bad, domain.FieldError{Field: k, Message: "is given more than once"})
		}
	}
	if len(bad) > 0 {
		return nil, validation("The query parameters are not valid.", bad...)
	}
	return q, nil
}
