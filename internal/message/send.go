package message

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"msgsvc/internal/batch"
	"msgsvc/internal/channel/sms"
	"msgsvc/internal/id"
	"msgsvc/internal/ledger"
	"msgsvc/internal/phone"
	"msgsvc/internal/store"
	"msgsvc/internal/webhook"
)

// Limits of a send request.
const (
	MaxRecipients   = 1000
	MaxTextChars    = 1000 // WhatsApp and RCS
	MaxReference    = 128
	MinValidity     = 60
	MaxValidity     = 259200
	MaxScheduleDays = 35
)

// SendRequest is the body of POST /messages.
type SendRequest struct {
	To          string          `json:"to"`
	Recipients  []string        `json:"recipients"`
	Message     string          `json:"message"`
	Type        string          `json:"type"`
	CallbackURL string          `json:"callbackUrl"`
	Media       json.RawMessage `json:"media"`
	Buttons     json.RawMessage `json:"buttons"`
	List        json.RawMessage `json:"list"`
	Cards       json.RawMessage `json:"cards"`
	Template    json.RawMessage `json:"template"`
	Fallback    json.RawMessage `json:"fallback"`
	ScheduledAt string          `json:"scheduledAt"`
	Validity    *int            `json:"validity"`
	Reference   string          `json:"reference"`
}

// FieldError names one invalid field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// ValidationError is a refused request, with every field problem found.
type ValidationError struct {
	Detail string
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	if e.Detail != "" {
		return e.Detail
	}
	if len(e.Fields) > 0 {
		return e.Fields[0].Field + " " + e.Fields[0].Message
	}
	return "invalid request"
}

func (e *ValidationError) add(field, format string, args ...any) {
	e.Fields = append(e.Fields, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Caller is who makes a request: the account and the key used.
type Caller struct {
	Account store.Account
	Key     store.APIKey
}

// Test reports whether the caller uses a test key.
func (c Caller) Test() bool { return c.Key.Env != "live" }

// SendOptions carry what comes with the request besides its body.
type SendOptions struct {
	IdempotencyKey string
	RequestHash    string
	DryRun         bool
}

// SendResult is the response to a send, as JSON, and whether it was
// replayed from an earlier request with the same idempotency key.
type SendResult struct {
	Status   int
	Body     []byte
	Replayed bool
}

// SentMessage is one message in a send response.
type SentMessage struct {
	MessageID *string `json:"messageId"`
	To        string  `json:"to"`
	Status    string  `json:"status"`
	Segments  int     `json:"segments"`
	Encoding  string  `json:"encoding"`
	Credits   float64 `json:"credits"`
}

type sendResponse struct {
	CampaignID *string       `json:"campaignId"`
	Status     string        `json:"status"`
	Credits    float64       `json:"credits"`
	DryRun     bool          `json:"dryRun,omitempty"`
	Messages   []SentMessage `json:"messages"`
}

// Picker chooses the provider for a message (provider.Router does).
type Picker interface {
	PickName(env, channel, countryCode string) string
}

// Sends is what Service needs from storage.
type Sends interface {
	CommitSends(ctx context.Context, sends []store.Send) ([]store.SendResult, error)
}

// Service accepts sends. Concurrent sends are written together, one
// transaction per batch.
type Service struct {
	store        Store
	commits      *batch.Batcher[store.Send, store.SendResult]
	picker       Picker
	now          func() time.Time
	allowPrivate bool
	wake         func()
	events       func()
}

// Store is everything the message service reads and writes.
type Store interface {
	Sends
	Message(ctx context.Context, accountID, messageID string) (store.Message, error)
	Campaign(ctx context.Context, accountID, campaignID string) (store.Campaign, error)
	CampaignCounts(ctx context.Context, campaignID string) (map[string]int, error)
	CampaignMessages(ctx context.Context, campaignID, after string, limit int) ([]store.Message, error)
	CancelableMessageIDs(ctx context.Context, campaignID string) ([]string, error)
	Write(ctx context.Context, fn func(tx *store.Tx) error) error
}

// Config sets up a Service.
type Config struct {
	Store Store
	// Picker chooses providers; messages without one fail with NO_ROUTE.
	Picker Picker
	Now    func() time.Time
	// AllowPrivateCallbacks permits http and private callback addresses.
	AllowPrivateCallbacks bool
	// Wake is called after messages became due, to start the dispatcher.
	Wake func()
	// Events is called after webhook events were queued.
	Events func()
	// CommitWorkers is the number of parallel group-commit loops (1 suits
	// SQLite's single writer; PostgreSQL gains from a few).
	CommitWorkers int
}

// NewService starts a Service; Close stops it.
func NewService(c Config) *Service {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Wake == nil {
		c.Wake = func() {}
	}
	if c.Events == nil {
		c.Events = func() {}
	}
	if c.CommitWorkers <= 0 {
		c.CommitWorkers = 1
	}
	s := &Service{store: c.Store, picker: c.Picker, now: c.Now, allowPrivate: c.AllowPrivateCallbacks, wake: c.Wake, events: c.Events}
	s.commits = batch.New(c.Store.CommitSends, 128, c.CommitWorkers)
	return s
}

// Close waits for running commits and stops accepting sends.
func (s *Service) Close() { s.commits.Close() }

// Errors of Send beyond validation.
var (
	ErrInsufficientCredits = store.ErrInsufficientCredits
	ErrIdempotencyConflict = store.ErrIdempotencyConflict
)

// Send validates, prices and accepts a send request. The whole request
// is accepted or refused: an invalid recipient or a short balance writes
// nothing.
func (s *Service) Send(ctx context.Context, caller Caller, req SendRequest, opt SendOptions) (SendResult, error) {
	now := s.now().UTC()
	plan, err := s.plan(caller, req, now)
	if err != nil {
		return SendResult{}, err
	}
	resp := sendResponse{Status: Sending, DryRun: opt.DryRun}
	var total int64
	for _, m := range plan.messages {
		total += m.Credits
		sm := SentMessage{To: m.To, Status: Sending, Segments: m.Segments, Encoding: m.Encoding, Credits: ledger.Credits(m.Credits)}
		if !opt.DryRun {
			mid := m.ID
			sm.MessageID = &mid
		}
		resp.Messages = append(resp.Messages, sm)
	}
	resp.Credits = ledger.Credits(total)
	if opt.DryRun {
		if !caller.Test() && total > caller.Account.Balance {
			return SendResult{}, ErrInsufficientCredits
		}
		body, err := json.Marshal(resp)
		return SendResult{Status: 200, Body: body}, err
	}
	cid := plan.campaign.ID
	resp.CampaignID = &cid
	body, err := json.Marshal(resp)
	if err != nil {
		return SendResult{}, fmt.Errorf("encode response: %w", err)
	}
	snd := store.Send{Campaign: plan.campaign, Messages: plan.messages}
	if opt.IdempotencyKey != "" {
		snd.Idem = &store.Idempotency{KeyID: caller.Key.ID, Key: opt.IdempotencyKey, RequestHash: opt.RequestHash,
			StatusCode: 202, Response: body, CreatedAt: now}
	}
	res, err := s.commits.Do(ctx, snd)
	if err != nil {
		return SendResult{}, fmt.Errorf("accept send: %w", err)
	}
	if res.Err != nil {
		return SendResult{}, res.Err
	}
	if res.Replay != nil {
		return SendResult{Status: res.Replay.StatusCode, Body: res.Replay.Response, Replayed: true}, nil
	}
	if plan.dueNow {
		s.wake()
	}
	return SendResult{Status: 202, Body: body}, nil
}

type sendPlan struct {
	campaign store.Campaign
	messages []store.Message
	dueNow   bool
}

// plan validates the request and builds the rows it will write.
func (s *Service) plan(caller Caller, req SendRequest, now time.Time) (sendPlan, error) {
	verr := &ValidationError{}
	typ := strings.ToUpper(strings.TrimSpace(req.Type))
	switch typ {
	case SMS, WhatsApp, RCS:
	case "":
		verr.add("type", "is required: SMS, WHATSAPP or RCS")
	default:
		verr.add("type", "must be SMS, WHATSAPP or RCS")
	}
	recipients := req.Recipients
	switch {
	case req.To != "" && req.Recipients != nil:
		verr.add("to", "give either to or recipients, not both")
	case req.To != "":
		recipients = []string{req.To}
	case req.Recipients == nil:
		verr.add("to", "is required (or recipients for a batch)")
	case len(req.Recipients) == 0:
		verr.add("recipients", "must list 1 to %d numbers", MaxRecipients)
	case len(req.Recipients) > MaxRecipients:
		verr.add("recipients", "must list at most %d numbers, got %d", MaxRecipients, len(req.Recipients))
		recipients = nil
	}
	numbers := make([]phone.Number, 0, len(recipients))
	seen := make(map[string]int, len(recipients))
	for i, r := range recipients {
		field := "to"
		if req.To == "" {
			field = fmt.Sprintf("recipients[%d]", i)
		}
		n, err := phone.Parse(r)
		if err != nil {
			verr.add(field, "%v", err)
			continue
		}
		if j, dup := seen[r]; dup {
			verr.add(field, "repeats recipients[%d]; each number may appear once per request", j)
			continue
		}
		seen[r] = i
		numbers = append(numbers, n)
	}
	content, enc, segments := s.checkContent(verr, typ, req)
	if req.CallbackURL != "" {
		if err := webhook.ValidateCallbackURL(req.CallbackURL, s.allowPrivate); err != nil {
			verr.add("callbackUrl", "%v", err)
		}
	}
	validity := MaxValidity
	if req.Validity != nil {
		validity = *req.Validity
		if validity < MinValidity || validity > MaxValidity {
			verr.add("validity", "must be between %d and %d seconds", MinValidity, MaxValidity)
		}
	}
	if utf8.RuneCountInString(req.Reference) > MaxReference {
		verr.add("reference", "must be at most %d characters", MaxReference)
	}
	var scheduled time.Time
	if req.ScheduledAt != "" {
		t, err := time.Parse(time.RFC3339Nano, req.ScheduledAt)
		switch {
		case err != nil:
			verr.add("scheduledAt", "must be an RFC 3339 time, e.g. 2026-11-21T10:00:00Z")
		case t.After(now.Add(MaxScheduleDays * 24 * time.Hour)):
			verr.add("scheduledAt", "must be at most %d days ahead", MaxScheduleDays)
		case t.Before(now.Add(-5 * time.Minute)):
			verr.add("scheduledAt", "is in the past")
		case t.After(now):
			scheduled = t.UTC().Truncate(time.Millisecond)
		}
	}
	if len(verr.Fields) > 0 || verr.Detail != "" {
		return sendPlan{}, verr
	}

	prices, err := ledger.Parse(caller.Account.Prices)
	if err != nil {
		return sendPlan{}, fmt.Errorf("account %s: %w", caller.Account.ID, err)
	}
	start := now
	if !scheduled.IsZero() {
		start = scheduled
	}
	campaign := store.Campaign{ID: id.New(id.Campaign, now), AccountID: caller.Account.ID, KeyID: caller.Key.ID,
		Env: caller.Key.Env, Type: typ, CallbackURL: req.CallbackURL, Total: len(numbers), CreatedAt: now}
	plan := sendPlan{campaign: campaign, dueNow: scheduled.IsZero()}
	plan.messages = make([]store.Message, len(numbers))
	ids := id.Sequence(id.Message, now, len(numbers))
	for i, n := range numbers {
		price := s.price(prices, typ, n.CountryCode, caller.Account.CountryCode, segments)
		charged := price
		if caller.Test() {
			charged = 0 // test keys show the cost but never pay it
		}
		provider := ""
		if s.picker != nil {
			provider = s.picker.PickName(caller.Key.Env, typ, n.CountryCode)
		}
		plan.messages[i] = store.Message{
			ID: ids[i], CampaignID: campaign.ID, AccountID: caller.Account.ID, Env: caller.Key.Env,
			To: n.Digits, CountryCode: n.CountryCode, Type: typ, Channel: typ, Body: req.Message, Content: content,
			Status: Sending, Segments: segments, Encoding: enc, Credits: price, Charged: charged, Provider: provider,
			Reference: req.Reference, CallbackURL: req.CallbackURL, CreatedAt: now, UpdatedAt: now,
			ScheduledAt: scheduled, ExpiresAt: start.Add(time.Duration(validity) * time.Second), NextAttemptAt: start,
		}
	}
	return plan, nil
}

func (s *Service) price(p ledger.Prices, typ, dest, home string, segments int) int64 {
	switch typ {
	case SMS:
		return p.SMS(dest, home, segments)
	case RCS:
		return p.RCS(dest, home)
	default:
		// Every WhatsApp send outside an open window starts a conversation.
		return p.WhatsApp(dest, home, true)
	}
}

// checkContent applies the channel's text rules and returns the stored
// rich content, the encoding and the segment count.
func (s *Service) checkContent(verr *ValidationError, typ string, req SendRequest) (string, string, int) {
	if req.Message == "" && len(req.Template) == 0 {
		verr.add("message", "is required")
		return "", "", 0
	}
	switch typ {
	case SMS:
		for _, f := range []struct {
			name string
			raw  json.RawMessage
		}{{"media", req.Media}, {"buttons", req.Buttons}, {"list", req.List}, {"cards", req.Cards}, {"template", req.Template}, {"fallback", req.Fallback}} {
			if len(f.raw) > 0 && string(f.raw) != "null" {
				verr.add(f.name, "is not available on SMS")
			}
		}
		a := sms.Analyze(req.Message)
		if a.Segments > sms.MaxSegments {
			msg := fmt.Sprintf("is %d segments long; at most %d are allowed (%s, %d per segment when split)",
				a.Segments, sms.MaxSegments, a.Encoding, perPart(a.Encoding))
			if a.Encoding == sms.UCS2 {
				msg += "; these characters need UCS-2: " + strings.Join(limit(a.NonGSM, 10), " ")
			}
			verr.add("message", "%s", msg)
		}
		return "", string(a.Encoding), a.Segments
	default:
		if n := utf8.RuneCountInString(req.Message); n > MaxTextChars {
			verr.add("message", "must be at most %d characters on %s, got %d", MaxTextChars, typ, n)
		}
		if typ == "" {
			return "", "", 1
		}
		return richContent(req), "UTF-8", 1
	}
}

func perPart(e sms.Encoding) int {
	if e == sms.GSM7 {
		return 153
	}
	return 67
}

func limit(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// richContent keeps the rich parts of a request as the provider will need
// them; plain text stores nothing.
func richContent(req SendRequest) string {
	parts := map[string]json.RawMessage{}
	for k, v := range map[string]json.RawMessage{"media": req.Media, "buttons": req.Buttons, "list": req.List,
		"cards": req.Cards, "template": req.Template, "fallback": req.Fallback} {
		if len(v) > 0 && string(v) != "null" {
			parts[k] = v
		}
	}
	if len(parts) == 0 {
		return ""
	}
	b, _ := json.Marshal(parts)
	return string(b)
}

// IsValidation reports whether err is a validation error.
func IsValidation(err error) (*ValidationError, bool) {
	var v *ValidationError
	ok := errors.As(err, &v)
	return v, ok
}
