// Package rbmtest is a stand-in for Google's RCS Business Messaging
// platform in tests: an HTTP server that answers the documented requests
// of RBM API v1 (the OAuth 2.0 token endpoint of a service account,
// phones.getCapabilities, phones.agentMessages.create and .delete,
// files.create on the upload URI) with the documented answers, and checks
// what it is sent as strictly as the platform does; and helpers that post
// signed Pub/Sub notifications as the platform's webhook calls are.
package rbmtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Scope is what the token endpoint requires the assertion to ask for.
const Scope = "https://www.googleapis.com/auth/rcsbusinessmessaging"

// Platform is a running fake RBM platform. Its zero state takes every
// phone as RCS-capable and every call as valid.
type Platform struct {
	URL         string // the server's root: the API is URL+"/v1"
	AgentID     string
	ClientEmail string
	t           testing.TB
	key         *rsa.PrivateKey
	keyID       string

	mu            sync.Mutex
	agents        map[string]bool
	now           func() time.Time
	tokens        map[string]bool
	tokenRequests int
	refuseTokens  int
	failNext      []int
	notCapable    map[string]bool // E.164 with +
	delivered     map[string]bool // message ids
	messages      []Message
	revoked       []string
	capabilities  []string
	files         map[string]File
	requests      []Request
}

// Message is an agent message the platform took.
type Message struct {
	ID    string // the messageId query parameter
	Phone string // E.164 with +
	Body  json.RawMessage
}

// File is an uploaded file.
type File struct {
	Name        string
	ContentType string
	Data        []byte
}

// Request is any API call the platform received.
type Request struct {
	Method, Path string
	Query        url.Values
}

// New starts a platform for an agent; it stops with the test.
func New(t testing.TB, agentID string) *Platform {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &Platform{AgentID: agentID, ClientEmail: "rbm-agent@msgsvc-test.iam.gserviceaccount.com", t: t, key: key,
		keyID: uuid.NewString(), agents: map[string]bool{agentID: true}, now: time.Now, tokens: map[string]bool{}, notCapable: map[string]bool{},
		delivered: map[string]bool{}, files: map[string]File{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("GET /v1/phones/{phone}/capabilities", p.api(p.capability))
	mux.HandleFunc("POST /v1/phones/{phone}/agentMessages", p.api(p.create))
	mux.HandleFunc("DELETE /v1/phones/{phone}/agentMessages/{id}", p.api(p.revoke))
	mux.HandleFunc("POST /upload/v1/files", p.api(p.upload))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// APIURL is the API base to configure (MSGSVC_RBM_API_URL).
func (p *Platform) APIURL() string { return p.URL + "/v1" }

// TokenURL is the token endpoint named by Credentials.
func (p *Platform) TokenURL() string { return p.URL + "/token" }

// Credentials is a service-account key file for this platform: its
// private key signs the assertions the token endpoint checks.
func (p *Platform) Credentials() []byte {
	der, err := x509.MarshalPKCS8PrivateKey(p.key)
	if err != nil {
		p.t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "msgsvc-test", "private_key_id": p.keyID,
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": p.ClientEmail, "client_id": "100000000000000000001",
		"auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": p.TokenURL()})
	return b
}

// AddAgent lets the service account act for another agent of its partner.
func (p *Platform) AddAgent(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.agents[id] = true
}

// NotCapable makes phones (digits, country code first) unreachable over
// RCS: capability checks and sends answer 404.
func (p *Platform) NotCapable(phones ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range phones {
		p.notCapable["+"+n] = true
	}
}

// Deliver marks a message delivered: revoking it answers 404.
func (p *Platform) Deliver(messageID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delivered[messageID] = true
}

// FailNext makes the next API calls answer these statuses (e.g. 429, 503)
// with Google's error body, one each, before answering normally.
func (p *Platform) FailNext(statuses ...int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failNext = append(p.failNext, statuses...)
}

// RefuseTokens makes the next n token requests answer 400 invalid_grant.
func (p *Platform) RefuseTokens(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuseTokens = n
}

// ForgetTokens revokes every access token issued: the API answers 401 to
// them.
func (p *Platform) ForgetTokens() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokens = map[string]bool{}
}

// Messages lists the agent messages taken, in order.
func (p *Platform) Messages() []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Message(nil), p.messages...)
}

// Revoked lists the message ids taken back, in order.
func (p *Platform) Revoked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.revoked...)
}

// CapabilityChecks lists the phones asked about, in order.
func (p *Platform) CapabilityChecks() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.capabilities...)
}

// Files lists the uploaded files by name.
func (p *Platform) Files() map[string]File {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.files)
}

// Requests lists every API call received (token requests aside).
func (p *Platform) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

// TokenRequests counts the token requests that got a token.
func (p *Platform) TokenRequests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokenRequests
}

// googleError answers as Google's APIs do: {"error": {code, message, status}}.
func googleError(w http.ResponseWriter, code int, status, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": fmt.Sprintf(format, args...), "status": status}})
}

var statusNames = map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	409: "ALREADY_EXISTS", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}

// api wraps an API method: bearer token, agentId, injected failures.
func (p *Platform) api(h func(w http.ResponseWriter, r *http.Request, body []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.requests = append(p.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query()})
		auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		known, agent := p.tokens[auth], p.agents[r.URL.Query().Get("agentId")]
		var fail int
		if known && len(p.failNext) > 0 {
			fail, p.failNext = p.failNext[0], p.failNext[1:]
		}
		p.mu.Unlock()
		switch {
		case !known:
			googleError(w, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
		case !agent:
			googleError(w, 403, "PERMISSION_DENIED", "The caller does not have permission for agent %q.", r.URL.Query().Get("agentId"))
		case fail != 0:
			if fail == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "0")
			}
			googleError(w, fail, statusNames[fail], "Injected failure.")
		default:
			h(w, r, body)
		}
	}
}

func (p *Platform) capability(w http.ResponseWriter, r *http.Request, _ []byte) {
	phone := r.PathValue("phone")
	if _, err := uuid.Parse(r.URL.Query().Get("requestId")); err != nil {
		googleError(w, 400, "INVALID_ARGUMENT", "requestId must be a UUID.")
		return
	}
	p.mu.Lock()
	p.capabilities = append(p.capabilities, phone)
	no := p.notCapable[phone]
	p.mu.Unlock()
	if no {
		googleError(w, 404, "NOT_FOUND", "Requested entity was not found.")
		return
	}
	writeJSON(w, map[string]any{"features": []string{"RICHCARD_STANDALONE", "RICHCARD_CAROUSEL", "ACTION_DIAL", "ACTION_OPEN_URL"}})
}

func (p *Platform) create(w http.ResponseWriter, r *http.Request, body []byte) {
	phone, id := r.PathValue("phone"), r.URL.Query().Get("messageId")
	if _, err := uuid.Parse(id); err != nil {
		googleError(w, 400, "INVALID_ARGUMENT", "messageId must be a UUID.")
		return
	}
	if !validPhone(phone) {
		googleError(w, 400, "INVALID_ARGUMENT", "%q is not an E.164 phone number.", phone)
		return
	}
	if r.Header.Get("Content-Type") != "application/json" {
		googleError(w, 400, "INVALID_ARGUMENT", "Content-Type must be application/json.")
		return
	}
	p.mu.Lock()
	files := p.files
	p.mu.Unlock()
	if err := checkAgentMessage(body, files); err != nil {
		googleError(w, 400, "INVALID_ARGUMENT", "Invalid AgentMessage: %v", err)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.notCapable[phone] {
		googleError(w, 404, "NOT_FOUND", "Requested entity was not found.")
		return
	}
	for _, m := range p.messages {
		if m.ID == id {
			googleError(w, 409, "ALREADY_EXISTS", "Message %s already exists.", id)
			return
		}
	}
	p.messages = append(p.messages, Message{ID: id, Phone: phone, Body: body})
	var out map[string]any
	_ = json.Unmarshal(body, &out)
	out["name"] = "phones/" + phone + "/agentMessages/" + id
	out["sendTime"] = p.now().UTC().Format(time.RFC3339Nano)
	writeJSON(w, out)
}

func (p *Platform) revoke(w http.ResponseWriter, r *http.Request, _ []byte) {
	id := r.PathValue("id")
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, m := range p.messages {
		if m.ID == id && m.Phone == r.PathValue("phone") && !p.delivered[id] {
			p.messages = append(p.messages[:i], p.messages[i+1:]...)
			p.revoked = append(p.revoked, id)
			writeJSON(w, map[string]any{})
			return
		}
	}
	googleError(w, 404, "NOT_FOUND", "Requested entity was not found.")
}

func (p *Platform) upload(w http.ResponseWriter, r *http.Request, body []byte) {
	ct := r.Header.Get("Content-Type")
	if !uploadTypes[ct] {
		googleError(w, 400, "INVALID_ARGUMENT", "Unsupported content type %q.", ct)
		return
	}
	if len(body) == 0 || (r.ContentLength >= 0 && r.ContentLength != int64(len(body))) {
		googleError(w, 400, "INVALID_ARGUMENT", "The file is empty or its length is wrong.")
		return
	}
	name := "files/" + strings.ReplaceAll(uuid.NewString(), "-", "")
	p.mu.Lock()
	p.files[name] = File{Name: name, ContentType: ct, Data: body}
	p.mu.Unlock()
	writeJSON(w, map[string]string{"name": name})
}

// uploadTypes are the file types files.create documents.
var uploadTypes = map[string]bool{"image/jpeg": true, "image/jpg": true, "image/gif": true, "image/png": true,
	"video/h263": true, "video/m4v": true, "video/mp4": true, "video/mpeg": true, "video/mpeg4": true, "video/webm": true,
	"application/pdf": true}

func validPhone(s string) bool {
	if !strings.HasPrefix(s, "+") || len(s) < 9 || len(s) > 16 {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
}
