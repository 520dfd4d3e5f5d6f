package message

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/msgsvc/msgsvc/internal/batch"
	"github.com/msgsvc/msgsvc/internal/channel/rcs"
	"github.com/msgsvc/msgsvc/internal/channel/whatsapp"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/webhook"
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

// Draft is a send request as the API decoded it: the fields as given, the
// rich content in its typed shape, and the problems the decoding already
// found (a wrong type, an unknown field), which are reported together with
// the ones the rules find.
type Draft struct {
	To          string
	Recipients  []string // nil when the request gave none
	Text        string
	From        string // the sender asked for; "" for the account's default
	Type        string // as given: SMS, WHATSAPP or RCS in any case
	CallbackURL string
	Content     domain.Content // its Fallback is never set here; see Fallback
	Fallback    *FallbackRequest
	ScheduledAt string
	Validity    *int
	Reference   string
	// SMPP marks a send that came in over SMPP (SMS only): its user gets
	// the receipt, when it asked for one.
	SMPP *domain.SMPPOrigin
	// UDH (hex) makes an SMS one part of a longer message, sent whole with
	// this header and counted as one segment.
	UDH      string
	Problems []domain.FieldError
}

// FallbackRequest is the fallback an RCS send asks for.
type FallbackRequest struct {
	Type    string
	Message *string // nil: the RCS text is sent as SMS
}

// SendOptions carry what comes with the request besides its body.
type SendOptions struct {
	DryRun bool
	// Idempotency, when set, makes the send answerable again: the same key
	// with the same request gets the remembered response.
	Idempotency *IdempotencyKey
}

// IdempotencyKey is a send's Idempotency-Key. Response renders the answer
// to remember; it runs inside the send's own transaction, so the answer is
// stored if and only if the send is.
type IdempotencyKey struct {
	Key         string
	RequestHash string
	Response    func(Receipt) (status int, body []byte, err error)
}

// Receipt is what an accepted (or dry-run) send did: its campaign and the
// message planned for each recipient, in request order.
type Receipt struct {
	Campaign domain.Campaign // zero on a dry run
	DryRun   bool
	Credits  int64 // the send's total price, micro-credits
	Messages []Planned
}

// Planned is one message of a receipt.
type Planned struct {
	Message domain.Message // no ID on a dry run
	// Dry runs only: what the channel rules know about the recipient.
	Window     string // WhatsApp: "open" or "closed"
	NewConv    *bool  // WhatsApp: whether it would start a charged conversation
	RCSCapable *bool  // RCS, when the device's capability is known
	Fallback   *bool  // RCS: whether it would go out as SMS
}

// Outcome is the result of Send: a new receipt, or the remembered answer
// to an earlier request with the same idempotency key.
type Outcome struct {
	Receipt Receipt
	Replay  *domain.Idempotency
}

// Picker chooses the provider for a message (provider.Router does).
type Picker interface {
	PickName(env domain.Environment, channel domain.Channel, countryCode string) string
}

// Store is everything the message service reads and writes.
type Store interface {
	Writer
	ChannelStore
	Message(ctx context.Context, accountID string, env domain.Environment, messageID string) (domain.Message, error)
	Campaign(ctx context.Context, accountID string, env domain.Environment, campaignID string) (domain.Campaign, error)
	CampaignCounts(ctx context.Context, campaignID string) (map[domain.Status]int, error)
	CampaignMessages(ctx context.Context, campaignID, after string, limit int) ([]domain.Message, error)
	CancelableMessageIDs(ctx context.Context, campaignID string) ([]string, error)
	SearchMessages(ctx context.Context, f domain.MessageFilter) ([]domain.Message, error)
	Feed(ctx context.Context, accountID string, env domain.Environment, after int64, limit int) ([]domain.FeedEvent, error)
	OptedOut(ctx context.Context, accountID string, env domain.Environment, phones []string) (map[string]bool, error)
	// Account reads an account as it is now (a caller's account may come
	// from a cache that does not follow its balance).
	Account(ctx context.Context, id string) (domain.Account, error)
}

// Service accepts sends. Concurrent sends are written together, one
// transaction per batch.
type Service struct {
	store         Store
	commits       *batch.Batcher[pendingSend, sendResult]
	picker        Picker
	phones        *phone.Validator
	media         MediaChecker
	templates     Templates
	capabilityTTL time.Duration
	now           func() time.Time
	allowPrivate  bool
	wake          func()
	events        func()
	redaction     *domain.Redaction
	dispatch      Handoff[domain.Message]
	changes       Changes
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
	// Dispatch, when set, hands messages due at once to a dispatcher of
	// this node in memory instead of through a database claim.
	Dispatch Handoff[domain.Message]
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
	// Redaction hashes numbers and rewrites webhook bodies for Redact; nil
	// refuses it.
	Redaction *domain.Redaction
	// Changes cancels and erases messages (the tracker).
	Changes Changes
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
	s := &Service{phones: phone.NewValidator(10_000), store: c.Store, picker: c.Picker, media: c.Media,
		templates: c.Templates, capabilityTTL: c.CapabilityTTL, now: c.Now, allowPrivate: c.AllowPrivateCallbacks,
		wake: c.Wake, events: c.Events, redaction: c.Redaction, dispatch: c.Dispatch, changes: c.Changes}
	s.commits = batch.New(s.commitSends, 128, c.CommitWorkers)
	return s
}

// Close waits for running commits and stops accepting sends.
func (s *Service) Close() { s.commits.Close() }

// Send validates, prices and accepts a send. The whole request is accepted
// or refused: an invalid recipient or a short balance writes nothing.
func (s *Service) Send(ctx context.Context, caller Caller, d Draft, opt SendOptions) (Outcome, error) {
	now := s.now().UTC()
	req, err := s.validate(ctx, caller, d, now)
	if err != nil {
		return Outcome{}, err
	}
	plan, err := s.plan(ctx, caller, req, now, opt.DryRun)
	if err != nil {
		return Outcome{}, err
	}
	if opt.DryRun {
		rc, err := s.dryRun(ctx, caller, plan)
		return Outcome{Receipt: rc}, err
	}
	return s.accept(ctx, caller, plan, opt.Idempotency, now)
}

// request is a draft that passed validation.
type request struct {
	draft     Draft
	typ       domain.Channel
	numbers   []phone.Number
	chk       checked
	from      string        // the sender, resolved
	fallback  *fallbackText // RCS with a fallback
	validity  time.Duration
	scheduled time.Time // zero: now
}

// validate applies every rule that needs no reading of the recipients'
// state; all problems found are reported at once.
func (s *Service) validate(ctx context.Context, caller Caller, d Draft, now time.Time) (request, error) {
	verr := &domain.ValidationError{Fields: append([]domain.FieldError(nil), d.Problems...)}
	req := request{draft: d}
	typ, err := domain.ParseChannel(d.Type)
	switch {
	case d.Type == "":
		verr.Add("type", "is required: SMS, WHATSAPP or RCS")
	case err != nil:
		verr.Add("type", "must be SMS, WHATSAPP or RCS")
	}
	req.typ = typ
	req.numbers = s.recipients(verr, d)
	chk, err := s.checkContent(ctx, verr, caller, typ, d)
	if err != nil {
		return request{}, err
	}
	req.chk = chk
	if typ != "" {
		req.from = resolveSender(verr, caller.Account, typ, d.From)
	}
	if typ == domain.RCS {
		req.fallback = resolveFallback(verr, caller.Account, d)
	}
	if d.CallbackURL != "" {
		if err := webhook.ValidateCallbackURL(d.CallbackURL, s.allowPrivate); err != nil {
			verr.Add("callbackUrl", "%v", err)
		}
	}
	req.validity = validity(verr, d.Validity)
	if utf8.RuneCountInString(d.Reference) > MaxReference {
		verr.Add("reference", "must be at most %d characters", MaxReference)
	}
	req.scheduled = schedule(verr, d.ScheduledAt, now)
	if verr.Failed() {
		return request{}, verr
	}
	return req, nil
}

// recipients parses to or recipients; each number may appear once.
func (s *Service) recipients(verr *domain.ValidationError, d Draft) []phone.Number {
	list := d.Recipients
	switch {
	case d.To != "" && d.Recipients != nil:
		verr.Add("to", "give either to or recipients, not both")
	case d.To != "":
		list = []string{d.To}
	case d.Recipients == nil:
		verr.Add("to", "is required (or recipients for a batch)")
	case len(d.Recipients) == 0:
		verr.Add("recipients", "must list 1 to %d numbers", MaxRecipients)
	case len(d.Recipients) > MaxRecipients:
		verr.Add("recipients", "must list at most %d numbers, got %d", MaxRecipients, len(d.Recipients))
		list = nil
	}
	numbers := make([]phone.Number, 0, len(list))
	seen := make(map[string]int, len(list))
	for i, r := range list {
		field := recipientField(d, i)
		n, err := s.phones.Parse(r)
		if err != nil {
			verr.Add(field, "%v", err)
			continue
		}
		// Compared as digits: "+447…" and "447…" are one number.
		if j, dup := seen[n.Digits]; dup {
			verr.Add(field, "repeats recipients[%d]; each number may appear once per request", j)
			continue
		}
		seen[n.Digits] = i
		numbers = append(numbers, n)
	}
	return numbers
}

// recipientField names recipient i as the request gave it.
func recipientField(d Draft, i int) string {
	if d.To != "" {
		return "to"
	}
	return fmt.Sprintf("recipients[%d]", i)
}

func validity(verr *domain.ValidationError, v *int) time.Duration {
	secs := MaxValidity
	if v != nil {
		secs = *v
		if secs < MinValidity || secs > MaxValidity {
			verr.Add("validity", "must be between %d and %d seconds", MinValidity, MaxValidity)
		}
	}
	return time.Duration(secs) * time.Second
}

// schedule reads scheduledAt; a time already past (within five minutes,
// for clock skew) means now.
func schedule(verr *domain.ValidationError, v string, now time.Time) time.Time {
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	switch {
	case err != nil:
		verr.Add("scheduledAt", "must be an RFC 3339 time, e.g. 2026-11-21T10:00:00Z")
	case t.After(now.Add(MaxScheduleDays * 24 * time.Hour)):
		verr.Add("scheduledAt", "must be at most %d days ahead", MaxScheduleDays)
	case t.Before(now.Add(-5 * time.Minute)):
		verr.Add("scheduledAt", "is in the past")
	case t.After(now):
		return t.UTC().Truncate(time.Millisecond)
	}
	return time.Time{}
}

func perPart(e string) int {
	if strings.HasPrefix(e, "GSM") {
		return 153
	}
	return 67
}
