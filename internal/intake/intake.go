// Package intake accepts sends: a typed request from a principal is
// validated (recipients, content under the channel's rules, sender,
// schedule, validity, callback), priced and planned into rows, and
// committed with concurrent sends in one transaction (idempotency, daily
// limits, the ledger, the rows). It speaks the domain's types; each front
// (REST, SMPP) reads its wire into a domain.SendRequest and maps the
// refusals, which name fields by domain path and code, back to its wire.
package intake

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/msgsvc/msgsvc/internal/batch"
	"github.com/msgsvc/msgsvc/internal/channel/rcs"
	"github.com/msgsvc/msgsvc/internal/channel/whatsapp"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/fraud"
	"github.com/msgsvc/msgsvc/internal/lease"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/txn"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// Limits of a send request.
const (
	MaxRecipients   = 1000
	MaxTextChars    = whatsapp.MaxText // WhatsApp and RCS (rcs.MaxText) alike
	MaxReference    = 128
	MinValidity     = 60 * time.Second
	MaxValidity     = 72 * time.Hour
	MaxScheduleDays = 35
)

// Errors of the send beyond validation and refusals.
var (
	ErrInsufficientCredits = ledger.ErrInsufficientCredits
	ErrIdempotencyConflict = domain.ErrIdempotencyConflict
	ErrDailyLimit          = domain.ErrDailyLimit
	ErrOutsideWindow       = errors.New("outside the WhatsApp conversation window")
	// ErrOptedOut: a recipient answered a stop word (the error of the
	// RECIPIENT_OPTED_OUT refusal).
	ErrOptedOut = errors.New("recipient opted out")
	// ErrStaleAuth: the principal's credential and account were read from
	// a cache at an auth counter that has moved since
	// (domain.Principal.AuthVersion); nothing was written, and the send
	// may be made again after authenticating afresh.
	ErrStaleAuth = errors.New("the key or its account changed since it was read")
	// ErrSuspended: the account (or one above it) is suspended; nothing
	// was written. A principal read from a cache before the suspension is
	// caught by the auth counter's check instead (ErrStaleAuth).
	ErrSuspended = domain.ErrSuspended
)

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

// Handoff is the dispatcher's queue of this node, which takes messages
// written already leased to it (see lease.Handoff).
type Handoff = lease.Handoff[domain.Message]

// Store is what a send reads outside its transaction.
type Store interface {
	ChannelStore
	OptedOut(ctx context.Context, accountID string, env domain.Environment, phones []string) (map[string]bool, error)
	// Account reads an account as it is now (a principal's account may
	// come from a cache that does not follow its balance).
	Account(ctx context.Context, id string) (domain.Account, error)
}

// Service accepts sends. Concurrent sends are written together, one
// transaction per batch.
type Service struct {
	store         Store
	writer        txn.Writer[SendTx]
	commits       *batch.Batcher[pendingSend, sendResult]
	picker        Picker
	phones        *phone.Validator
	media         MediaChecker
	templates     Templates
	capabilityTTL time.Duration
	guard         *fraud.Guard
	now           func() time.Time
	allowPrivate  bool
	wake          func()
	dispatch      Handoff
	pace          *Pace
}

// Config sets up a Service.
type Config struct {
	Store Store
	// Writer runs the group commits, each transaction seen as a SendTx.
	Writer txn.Writer[SendTx]
	// Picker chooses providers; messages without one fail with NO_ROUTE.
	Picker Picker
	Now    func() time.Time
	// AllowPrivateCallbacks permits http and private callback addresses.
	AllowPrivateCallbacks bool
	// Wake is called after messages became due, to start the dispatcher.
	Wake func()
	// Dispatch, when set, hands messages due at once to a dispatcher of
	// this node in memory instead of through a database claim.
	Dispatch Handoff
	// CommitWorkers is the number of parallel group-commit loops (1 suits
	// SQLite's single writer; PostgreSQL gains from a few).
	CommitWorkers int
	// Late gathers each group of sends when its transaction starts
	// (batch.NewLate), for a writer that runs one transaction at a time.
	Late bool
	// Media checks uploaded files and their fit to the channel; nil checks
	// the shape of media references only.
	Media MediaChecker
	// Templates renders WhatsApp templates; nil accepts any well-formed
	// template name (its text is then unknown to msgsvc).
	Templates Templates
	// CapabilityTTL is how long a cached RCS capability counts in dry runs
	// (default rcs.CapabilityTTL, as the dispatcher).
	CapabilityTTL time.Duration
	// Guard is the fraud guard, run in each group commit (nil: a guard
	// counting in the transaction).
	Guard *fraud.Guard
	// Pace holds sends back while the dispatcher of Dispatch is behind;
	// nil never does.
	Pace *Pace
}

// NewService starts a Service; Close stops it.
func NewService(c Config) *Service {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Wake == nil {
		c.Wake = func() {}
	}
	if c.CommitWorkers <= 0 {
		c.CommitWorkers = 1
	}
	if c.CapabilityTTL <= 0 {
		c.CapabilityTTL = rcs.CapabilityTTL
	}
	if c.Guard == nil {
		c.Guard = fraud.New(fraud.Config{})
	}
	s := &Service{phones: phone.NewValidator(10_000), store: c.Store, writer: c.Writer, picker: c.Picker, media: c.Media,
		templates: c.Templates, capabilityTTL: c.CapabilityTTL, guard: c.Guard, now: c.Now, allowPrivate: c.AllowPrivateCallbacks,
		wake: c.Wake, dispatch: c.Dispatch, pace: c.Pace}
	if c.Late {
		s.commits = batch.NewLate(s.commitTaken, 128, c.CommitWorkers+2, batch.Clock(c.Now))
	} else {
		s.commits = batch.New(s.commitSends, 128, c.CommitWorkers, batch.Clock(c.Now))
	}
	return s
}

// CommitStats reads how the loops that group sends went (batch.Stats).
func (s *Service) CommitStats() batch.Stats { return s.commits.Stats() }

// Close waits for running commits and stops accepting sends.
func (s *Service) Close() { s.commits.Close() }

// Send validates, prices and accepts a send. The whole request is accepted
// or refused: an invalid recipient or a short balance writes nothing.
func (s *Service) Send(ctx context.Context, who domain.Principal, r domain.SendRequest, opt SendOptions) (Outcome, error) {
	if who.Account.Suspended() {
		return Outcome{}, ErrSuspended
	}
	now := s.now().UTC()
	req, err := s.validate(ctx, who, r, now)
	if err != nil {
		return Outcome{}, err
	}
	if err := geo(who.Account, req.numbers); err != nil {
		return Outcome{}, err
	}
	plan, err := s.plan(ctx, who, req, now, opt.DryRun)
	if err != nil {
		return Outcome{}, err
	}
	if opt.DryRun {
		rc, err := s.dryRun(ctx, who, plan)
		return Outcome{Receipt: rc}, err
	}
	return s.accept(ctx, who, plan, opt.Idempotency, now)
}

// request is a send that passed validation.
type request struct {
	send      domain.SendRequest
	numbers   []phone.Number
	chk       checked
	from      string        // the sender, resolved
	fallback  *fallbackText // RCS with a fallback
	validity  time.Duration
	scheduled time.Time // zero: now
	// noLease writes the messages unleased, for the dispatcher to claim:
	// a campaign from a file is committed in chunks that are not kept in
	// memory to be handed over afterwards.
	noLease bool
}

// Paths the core checks in order, where a front's problem with that field
// is reported (see domain.SendRequest.Problems).
const (
	pathChannel    = "channel"
	pathRecipients = "recipients"
	pathSchedule   = "schedule"
)

// problems sorts the problems a front found: those of a field the core
// checks in order wait for that check, the rest come first.
type problems struct {
	first   []domain.FieldError
	waiting map[string][]domain.FieldError
}

func sortProblems(ps []domain.FieldError) problems {
	var out problems
	for _, p := range ps {
		switch p.Path {
		case pathChannel, pathRecipients, pathSchedule:
			if out.waiting == nil {
				out.waiting = map[string][]domain.FieldError{}
			}
			out.waiting[p.Path] = append(out.waiting[p.Path], p)
		default:
			out.first = append(out.first, p)
		}
	}
	return out
}

// at reports the front's problems with path into verr; it tells whether
// there were any, in which case the core's own check of it is moot.
func (p problems) at(verr *domain.ValidationError, path string) bool {
	ps := p.waiting[path]
	verr.Fields = append(verr.Fields, ps...)
	return len(ps) > 0
}

// validate applies every rule that needs no reading of the recipients'
// state; all problems found are reported at once.
func (s *Service) validate(ctx context.Context, who domain.Principal, r domain.SendRequest, now time.Time) (request, error) {
	front := sortProblems(r.Problems)
	verr := &domain.ValidationError{Fields: append([]domain.FieldError(nil), front.first...)}
	req := request{send: r}
	typ := r.Channel
	switch {
	case front.at(verr, pathChannel):
		typ = ""
	case typ == "":
		verr.AddAt(pathChannel, domain.FieldRequired, "is required: SMS, WHATSAPP or RCS")
	case typ != domain.SMS && typ != domain.WhatsApp && typ != domain.RCS:
		verr.AddAt(pathChannel, domain.FieldInvalid, "must be SMS, WHATSAPP or RCS")
		typ = ""
	}
	req.send.Channel = typ
	req.numbers = s.recipients(verr, front, r.Recipients)
	chk, err := s.checkContent(ctx, verr, who, req.send)
	if err != nil {
		return request{}, err
	}
	req.chk = chk
	if typ != "" {
		req.from = resolveSender(verr, who.Account, typ, r.Sender)
	}
	if typ == domain.RCS {
		req.fallback = resolveFallback(verr, who.Account, r)
	}
	if r.CallbackURL != "" {
		if err := webhook.ValidateCallbackURL(r.CallbackURL, s.allowPrivate); err != nil {
			verr.AddAt("callback", domain.FieldInvalid, "%v", err)
		}
	}
	req.validity = validity(verr, r.Validity)
	if utf8.RuneCountInString(r.Reference) > MaxReference {
		verr.AddAt("reference", domain.FieldRange, "must be at most %d characters", MaxReference)
	}
	if !front.at(verr, pathSchedule) {
		req.scheduled = schedule(verr, r.Schedule, now)
	}
	if verr.Failed() {
		return request{}, verr
	}
	return req, nil
}

// recipients parses the recipients; each number may appear once. A front
// that refused the list's shape (front.at) has its numbers checked all the
// same.
func (s *Service) recipients(verr *domain.ValidationError, front problems, list []string) []phone.Number {
	switch {
	case front.at(verr, pathRecipients):
	case list == nil:
		verr.AddAt(pathRecipients, domain.FieldRequired, "is required (or recipients for a batch)")
	case len(list) == 0:
		verr.AddAt(pathRecipients, domain.FieldRange, "must list 1 to %d numbers", MaxRecipients)
	case len(list) > MaxRecipients:
		verr.AddAt(pathRecipients, domain.FieldRange, "must list at most %d numbers, got %d", MaxRecipients, len(list))
		list = nil
	}
	numbers := make([]phone.Number, 0, len(list))
	seen := make(map[string]int, len(list))
	for i, r := range list {
		path := recipientPath(i)
		n, err := s.phones.Parse(r)
		if err != nil {
			verr.AddAt(path, domain.FieldInvalid, "%v", err)
			continue
		}
		// Compared as digits: "+447…" and "447…" are one number.
		if j, dup := seen[n.Digits]; dup {
			verr.AddAt(path, domain.FieldDuplicate, "repeats recipients[%d]; each number may appear once per request", j)
			continue
		}
		seen[n.Digits] = i
		numbers = append(numbers, n)
	}
	return numbers
}

// recipientPath names recipient i.
func recipientPath(i int) string { return fmt.Sprintf("recipients[%d]", i) }

// validity is how long a message may wait for its carrier: the request's,
// held between MinValidity and MaxValidity, else the longest.
func validity(verr *domain.ValidationError, v *time.Duration) time.Duration {
	if v == nil {
		return MaxValidity
	}
	if *v < MinValidity || *v > MaxValidity {
		verr.AddAt("validity", domain.FieldRange, "must be between %d and %d seconds", int(MinValidity/time.Second), int(MaxValidity/time.Second))
	}
	return *v
}

// schedule checks the time asked for; a time already past (within five
// minutes, for clock skew) means now.
func schedule(verr *domain.ValidationError, t, now time.Time) time.Time {
	switch {
	case t.IsZero():
	case t.After(now.Add(MaxScheduleDays * 24 * time.Hour)):
		verr.AddAt(pathSchedule, domain.FieldRange, "must be at most %d days ahead", MaxScheduleDays)
	case t.Before(now.Add(-5 * time.Minute)):
		verr.AddAt(pathSchedule, domain.FieldRange, "is in the past")
	case t.After(now):
		return t.UTC().Truncate(time.Millisecond)
	}
	return time.Time{}
}

// udhHex is the stored form of a user data header.
func udhHex(udh []byte) string { return hex.EncodeToString(udh) }

func perPart(e string) int {
	if strings.HasPrefix(e, "GSM") {
		return 153
	}
	return 67
}
