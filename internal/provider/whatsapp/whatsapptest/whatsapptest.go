// Package whatsapptest is a stand-in for the WhatsApp Business Cloud API
// in tests: an HTTP server that records every request and answers sends
// and media uploads the way the platform does (a fresh wamid per message,
// an id per upload), unless a test decides otherwise. It also builds the
// platform's webhook notifications.
package whatsapptest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Request is one request the platform received.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	// Form holds the fields of a multipart upload; File its file part.
	Form     map[string]string
	File     []byte
	FileType string
}

// JSON decodes the body.
func (r Request) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Answer decides the answer to a request: ok false gives the default.
type Answer func(r Request) (status int, body string, ok bool)

// Platform is the fake Graph API. URL is its base, with the version, as
// Config.APIURL takes it.
type Platform struct {
	URL string

	mu      sync.Mutex
	reqs    []Request
	answer  Answer
	n       int
	release chan struct{}
}

// New starts a fake platform, stopped when the test ends.
func New(t testing.TB) *Platform {
	p := &Platform{release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(func() {
		close(p.release)
		srv.Close()
	})
	p.URL = srv.URL + "/v23.0"
	return p
}

// SetAnswer replaces how requests are answered (nil: the defaults).
func (p *Platform) SetAnswer(a Answer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answer = a
}

// Requests is every request so far, in order.
func (p *Platform) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.reqs...)
}

// Sends is the decoded body of every POST …/messages so far.
func (p *Platform) Sends() []map[string]any {
	var out []map[string]any
	for _, r := range p.Requests() {
		if strings.HasSuffix(r.Path, "/messages") {
			out = append(out, r.JSON())
		}
	}
	return out
}

// Uploads is every POST …/media so far.
func (p *Platform) Uploads() []Request {
	var out []Request
	for _, r := range p.Requests() {
		if strings.HasSuffix(r.Path, "/media") {
			out = append(out, r)
		}
	}
	return out
}

// Hang makes an answer wait until the request is abandoned (or the test
// ends): a platform that does not answer.
func (p *Platform) Hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-p.release:
	}
}

func (p *Platform) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == "multipart/form-data" {
		req.Form = map[string]string{}
		mr := multipart.NewReader(strings.NewReader(string(body)), params["boundary"])
		for part, err := mr.NextPart(); err == nil; part, err = mr.NextPart() {
			data, _ := io.ReadAll(part)
			if part.FormName() == "file" {
				req.File, req.FileType = data, part.Header.Get("Content-Type")
				continue
			}
			req.Form[part.FormName()] = string(data)
		}
	}
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.n++
	n, answer := p.n, p.answer
	p.mu.Unlock()
	if answer != nil {
		if status, out, ok := answer(req); ok {
			if status == 0 {
				p.Hang(r)
				return
			}
			write(w, status, out)
			return
		}
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/messages"):
		to, _ := req.JSON()["to"].(string)
		write(w, 200, fmt.Sprintf(`{"messaging_product":"whatsapp","contacts":[{"input":%q,"wa_id":%q}],"messages":[{"id":"wamid.TEST%06d"}]}`, to, to, n))
	case strings.HasSuffix(r.URL.Path, "/media"):
		write(w, 200, fmt.Sprintf(`{"id":"%d"}`, 4490709327384000+n))
	default:
		write(w, 404, `{"error":{"message":"Unknown path","type":"OAuthException","code":100}}`)
	}
}

func write(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// Error is the body of a Graph API error answer.
func Error(code int, message string) string {
	return fmt.Sprintf(`{"error":{"message":%q,"type":"OAuthException","code":%d,"fbtrace_id":"AbCdEf"}}`, message, code)
}

// Business is the business number a notification is addressed to.
type Business struct {
	DisplayPhoneNumber, PhoneNumberID string
}

// Status is a status notification for one of our messages; code, when
// not 0, is the error of a failed status.
func (b Business) Status(wamid, status, recipient string, at time.Time, code int, title string) []byte {
	st := map[string]any{"id": wamid, "status": status, "timestamp": fmt.Sprint(at.Unix()), "recipient_id": recipient}
	if code != 0 {
		st["errors"] = []any{map[string]any{"code": code, "title": title, "message": title,
			"error_data": map[string]any{"details": title + " (details)"}}}
	}
	return b.notification(map[string]any{"statuses": []any{st}})
}

// Message is a notification of a message a user sent, with an id of its
// own; msg is the message object without from, id and timestamp (e.g.
// {"type":"text","text":{…}}).
func (b Business) Message(from string, at time.Time, msg map[string]any) []byte {
	m := map[string]any{"from": from, "id": "wamid.IN" + rand.Text(), "timestamp": fmt.Sprint(at.Unix())}
	for k, v := range msg {
		m[k] = v
	}
	return b.notification(map[string]any{"contacts": []any{map[string]any{"profile": map[string]any{"name": "Test User"}, "wa_id": from}},
		"messages": []any{m}})
}

func (b Business) notification(value map[string]any) []byte {
	value["messaging_product"] = "whatsapp"
	value["metadata"] = map[string]any{"display_phone_number": b.DisplayPhoneNumber, "phone_number_id": b.PhoneNumberID}
	out, _ := json.Marshal(map[string]any{"object": "whatsapp_business_account", "entry": []any{map[string]any{
		"id": "419561257915477", "changes": []any{map[string]any{"field": "messages", "value": value}}}}})
	return out
}
