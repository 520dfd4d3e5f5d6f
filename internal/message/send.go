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
	"msgsvc/internal/channel/rcs"
	"msgsvc/internal/channel/sms"
	"msgsvc/internal/channel/whatsapp"
	"msgsvc/internal/id"
	"msgsvc/internal/ledger"
	"msgsvc/internal/phone"
	"msgsvc/internal/store"
	"msgsvc/internal/webhook"
)

// Limits of a send request.
const (
	MaxRecipients   = 1000
	MaxTextChars    = whatsapp.MaxText // WhatsApp and RCS (rcs.MaxText) alike
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

	// Dry runs only. WhatsApp: whether the 24-hour window for free-form
	// messages is "open" or "closed", and whether the message would start a
	// new (charged) conversation.
	ConversationWindow string `json:"conversationWindow,omitempty"`
	NewConversation    *bool  `json:"newConversation,omitempty"`
	// RCS, when the device's capability is known from an earlier send:
	// whether it takes RCS, and whether the message would go out as SMS.
	RCSCapable *bool `json:"rcsCapable,omitempty"`
	Fallback   *bool `json:"fallback,omitempty"`
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
	store         Store
	commits       *batch.Batcher[store.Send, store.SendResult]
	picker        Picker
	phones        *phone.Validator
	media         MediaChecker
	templates     Templates
	capabilityTTL time.Duration
	now           func() time.Time
	allowPrivate  bool
	wake          func()
	events        func()
}

// Store is everything the message service reads and writes.
type Store interface {
	Sends
	ChannelStore
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
	// Media checks uploaded files and their fit to the channel; nil checks
	// the shape of media references only.
	Media MediaChecker
	// Templates renders WhatsApp templates; nil accepts any well-formed
	// template name (its text is then unknown to msgsvc).
	Templates Templates
	// CapabilityTTL is how long a cached RCS capability counts in dry runs
	// (default rcs.CapabilityTTL, as the dispatcher).
	CapabilityTTL time.Duration
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
	if c.CapabilityTTL <= 0 {
		c.CapabilityTTL = rcs.CapabilityTTL
	}
	s := &Service{phones: phone.NewValidator(10_000), store: c.Store, picker: c.Picker, media: c.Media, templates: c.Templates, capabilityTTL: c.CapabilityTTL,
		now: c.Now, allowPrivate: c.AllowPrivateCallbacks, wake: c.Wake, events: c.Events}
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
	plan, err := s.plan(ctx, caller, req, now, opt.DryRun)
	if err != nil {
		return SendResult{}, err
	}
	resp := sendResponse{Status: Sending, DryRun: opt.DryRun}
	var total int64
	for i, m := range plan.messages {
		total += m.Credits
		sm := SentMessage{To: m.To, Status: Sending, Segments: m.Segments, Encoding: m.Encoding, Credits: ledger.Credits(m.Credits)}
		if opt.DryRun {
			plan.explain(&sm, i)
		} else {
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
		if c := plan.conversations; c != nil && c.Limit > 0 {
			used, err := s.store.ConversationsOn(ctx, c.AccountID, c.Env, c.Day)
			if err != nil {
				return SendResult{}, err
			}
			if used+len(c.Phones) > c.Limit {
				return SendResult{}, dailyLimitRefusal(&store.DailyLimitError{Day: store.DayKey(c.Day), Limit: c.Limit,
					Used: used, Asked: len(c.Phones)}, caller.Account.WAQualityTier)
			}
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
	snd := store.Send{Campaign: plan.campaign, Messages: plan.messages, Conversations: plan.conversations}
	if opt.IdempotencyKey != "" {
		snd.Idem = &store.Idempotency{KeyID: caller.Key.ID, Key: opt.IdempotencyKey, RequestHash: opt.RequestHash,
			StatusCode: 202, Response: body, CreatedAt: now}
	}
	res, err := s.commits.Do(ctx, snd)
	if err != nil {
		return SendResult{}, fmt.Errorf("accept send: %w", err)
	}
	if errors.Is(res.Err, store.ErrDailyLimit) {
		return SendResult{}, dailyLimitRefusal(res.Err, caller.Account.WAQualityTier)
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
	campaign      store.Campaign
	messages      []store.Message
	conversations *store.Conversations // WhatsApp conversations the send opens
	dueNow        bool

	// What a dry run tells about each message.
	typ     string
	start   time.Time
	aud     audience
	hasFall bool
}

// explain adds what a dry run tells about message i beyond its price.
func (p sendPlan) explain(sm *SentMessage, i int) {
	to := p.messages[i].To
	switch p.typ {
	case WhatsApp:
		sm.ConversationWindow = "closed"
		if p.aud.windowOpen(to, p.start) {
			sm.ConversationWindow = "open"
		}
		fresh := p.aud.newConversation(to, p.start)
		sm.NewConversation = &fresh
	case RCS:
		if capable, known := p.aud.rcsCapable[to]; known {
			fb := !capable && p.hasFall
			sm.RCSCapable, sm.Fallback = &capable, &fb
		}
	}
}

// plan validates the request and builds the rows it will write.
func (s *Service) plan(ctx context.Context, caller Caller, req SendRequest, now time.Time, dry bool) (sendPlan, error) {
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
		n, err := s.phones.Parse(r)
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
	chk, err := s.checkContent(ctx, verr, caller, typ, req)
	if err != nil {
		return sendPlan{}, err
	}
	fbText, fbBody, hasFallback := sms.Analysis{}, "", false
	if typ == RCS {
		fbText, fbBody, hasFallback = fallbackText(verr, caller.Account, req, chk)
	}
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
	phones := make([]string, len(numbers))
	for i, n := range numbers {
		phones[i] = n.Digits
	}
	aud, err := s.lookAudience(ctx, caller, typ, phones, start, dry)
	if err != nil {
		return sendPlan{}, fmt.Errorf("read recipients' channel state: %w", err)
	}
	if typ == WhatsApp && !chk.template {
		var closed []int
		for i, p := range phones {
			if !aud.windowOpen(p, start) {
				closed = append(closed, i)
			}
		}
		if len(closed) > 0 {
			field := func(i int) string {
				if req.To != "" {
					return "to"
				}
				return fmt.Sprintf("recipients[%d]", i)
			}
			return sendPlan{}, windowRefusal(closed, field, phones, aud.lastInbound)
		}
	}
	campaign := store.Campaign{ID: id.New(id.Campaign, now), AccountID: caller.Account.ID, KeyID: caller.Key.ID,
		Env: caller.Key.Env, Type: typ, CallbackURL: req.CallbackURL, Total: len(numbers), CreatedAt: now}
	plan := sendPlan{campaign: campaign, dueNow: scheduled.IsZero(), typ: typ, start: start, aud: aud, hasFall: hasFallback}
	plan.messages = make([]store.Message, len(numbers))
	ids := id.Sequence(id.Message, now, len(numbers))
	var opened []string
	shared := chk.content(nil)
	for i, n := range numbers {
		dest, home := n.CountryCode, caller.Account.CountryCode
		content := shared
		var price int64
		switch typ {
		case SMS:
			price = prices.SMS(dest, home, chk.segments)
		case WhatsApp:
			fresh := aud.newConversation(n.Digits, start)
			if fresh {
				opened = append(opened, n.Digits)
			}
			price = prices.WhatsApp(dest, home, fresh)
		case RCS:
			price = prices.RCS(dest, home)
			if hasFallback {
				// The larger price is reserved; the difference to the
				// channel actually used is refunded when it is known.
				fb := &fallbackPlan{Type: SMS, Message: fbBody, Segments: fbText.Segments, Encoding: string(fbText.Encoding),
					SMSCredits: prices.SMS(dest, home, fbText.Segments), RCSCredits: price}
				price = max(price, fb.SMSCredits)
				content = chk.content(fb)
			}
		}
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
			To: n.Digits, CountryCode: n.CountryCode, Type: typ, Channel: typ, Body: chk.body, Content: content,
			Status: Sending, Segments: chk.segments, Encoding: chk.encoding, Credits: price, Charged: charged, Provider: provider,
			Reference: req.Reference, CallbackURL: req.CallbackURL, CreatedAt: now, UpdatedAt: now,
			ScheduledAt: scheduled, ExpiresAt: start.Add(time.Duration(validity) * time.Second), NextAttemptAt: start,
		}
	}
	if len(opened) > 0 {
		plan.conversations = &store.Conversations{AccountID: caller.Account.ID, Env: caller.Key.Env, Phones: opened,
			At: start, Day: now, Limit: whatsapp.DailyLimit(caller.Account.WAQualityTier)}
	}
	return plan, nil
}

// checkContent applies the channel's rules to the text and rich fields.
// Field problems go to verr; an error is a failure of a checker.
func (s *Service) checkContent(ctx context.Context, verr *ValidationError, caller Caller, typ string, req SendRequest) (checked, error) {
	out := checked{body: req.Message, encoding: "UTF-8", segments: 1}
	if req.Message == "" && !present(req.Template) {
		verr.add("message", "is required")
	}
	switch typ {
	case SMS:
		for _, f := range []struct {
			name string
			raw  json.RawMessage
		}{{"media", req.Media}, {"buttons", req.Buttons}, {"list", req.List}, {"cards", req.Cards}, {"template", req.Template}, {"fallback", req.Fallback}} {
			if present(f.raw) {
				verr.add(f.name, "is not available on SMS")
			}
		}
		if req.Message == "" {
			return out, nil
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
		out.encoding, out.segments = string(a.Encoding), a.Segments
		return out, nil
	case WhatsApp:
		out.parts = richParts(req)
		return out, s.checkWhatsApp(ctx, verr, caller.Account.ID, req, &out)
	case RCS:
		out.parts = richParts(req)
		return out, s.checkRCS(ctx, verr, caller.Account.ID, req, &out)
	}
	return out, nil
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

// IsValidation reports whether err is a validation error.
func IsValidation(err error) (*ValidationError, bool) {
	var v *ValidationError
	ok := errors.As(err, &v)
	return v, ok
}
