// Package tracking moves messages' statuses forward: it applies what
// providers, the dispatcher, the sweeper and integrators report about a
// message (transition.go is the one place a status changes), with the
// refunds and usage, in one transaction; it records recipients' replies and
// their opt-out words; it asks carriers about receipts that never came. What
// each front owes its clients for a change (a webhook event, an SMPP
// receipt) is written by the Notifier the front registered, in the same
// transaction (notify.go).
package tracking

import (
	"context"
	"slices"
	"time"

	"github.com/msgsvc/msgsvc/internal/batch"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/txn"
)

// Kind tells what a report says about a message.
type Kind int

const (
	// Accepted: a provider took the message (it becomes SENT).
	Accepted Kind = iota
	// Progress: a provider's delivery report (SENT, DELIVERED, READ, FAILED).
	Progress
	// Retry: handing over failed for now; try again at RetryAt.
	Retry
	// Rejected: handing over failed for good, before any provider took it.
	Rejected
	// Expire: the validity ran out.
	Expire
	// Cancel: the integrator canceled it.
	Cancel
	// Fallback: the device cannot take RCS; the message goes out as SMS
	// through Provider (its SMS route), at the SMS price.
	Fallback
	// Revoked: an RCS message still undelivered at its FallbackAt was taken
	// back by its provider; it goes out as SMS like Fallback, staying SENT.
	Revoked
	// Unrevoked: an RCS message waiting for its delivery will not fall
	// back (too late to take it back, or its provider cannot): it stays
	// RCS, priced as RCS, awaiting its reports.
	Unrevoked
	// Release: an operator let a message the fraud guard held go; it
	// becomes SENDING and due (By names the operator).
	Release
	// RejectHeld: an operator rejected a held message, or it waited
	// longer than domain.HoldFor (ErrorMessage "expired"): FAILED with
	// FRAUD_SUSPECTED, refunded at every level.
	RejectHeld
)

// Report is one thing that happened to a message.
type Report struct {
	Kind         Kind
	MessageID    string
	Provider     string
	Ref          string        // the provider's id; finds the message when MessageID is empty
	Parts        []string      // Accepted: the provider's id of every part, when it took the message in several
	Status       domain.Status // for Progress
	ErrorCode    string
	ErrorMessage string
	At           time.Time
	RetryAt      time.Time
	// FallbackAt, for Accepted: the provider's Result.FallbackAt.
	FallbackAt time.Time
	LeaseOwner string // for Accepted/Retry/Rejected/Revoked/Unrevoked: only the lease holder's word counts
	// Route, Cost and Currency, for Accepted (Route also for Rejected): the
	// route taken and what the hand-over costs.
	Route    string
	Cost     int64
	Currency string
	// Follows, for a receipt riding with the record of its hand-over (see
	// expectations): the provider's id that record must have given the
	// message; when it did not (the hand-over's report was refused), the
	// receipt is parked as if it had come alone.
	Follows string
	// By, for Release and RejectHeld: who decided (an operator's email,
	// or "sweeper").
	By string
}

// Tracker applies reports to messages: it moves statuses forward only and
// writes the refunds and usage of every change, and its notifiers write
// what the fronts owe for it, all in the same transaction, so no change can
// be recorded without its notifications. Concurrent reports are grouped
// into one transaction.
type Tracker struct {
	store   Store
	w       txn.Writer[Work]
	reports *batch.Batcher[[]Report, struct{}]
	now     func() time.Time
	due     func() // called after messages became due (opt-out confirmations)
	expect  expectations
}

// Store is what the Tracker reads outside its transactions.
type Store interface {
	LatestMessageTo(ctx context.Context, accountID string, env domain.Environment, phone string, since time.Time) (domain.Message, error)
	MessageByID(ctx context.Context, messageID string) (domain.Message, error)
	SenderOwners(ctx context.Context, channel domain.Channel, value string) ([]string, error)
	Account(ctx context.Context, id string) (domain.Account, error)
	LatestMessageVia(ctx context.Context, provider, phone string, since time.Time) (domain.Message, error)
	KnownParkedRefs(ctx context.Context, limit int) (map[string][]string, error)
}

// Config sets up a Tracker.
type Config struct {
	Store Store
	// Writer writes the tracker's transactions, with the fronts' notifiers
	// bound to them (see Bind).
	Writer txn.Writer[Work]
	Now    func() time.Time
	// Due is called after the tracker queued a message of its own (the
	// confirmation of an opt-out), to wake the dispatcher.
	Due func()
	// Workers is the number of parallel transaction loops.
	Workers int
	// Late gathers each group of reports when its transaction starts
	// (batch.NewLate), for a writer that runs one transaction at a time.
	Late bool
	// Hold is how long a group of reports that opens while an earlier
	// one is under way waits for more before it queues (batch.Hold), for
	// a Late tracker: zero queues each group at once.
	Hold time.Duration
	// ExpectHold bounds how long a receipt waits for the record of the
	// hand-over its provider announced (default 5 s).
	ExpectHold time.Duration
	// ExpectWait bounds how long the record of a hand-over waits for the
	// receipts its provider announced, to take them along (default 2 ms;
	// negative: never).
	ExpectWait time.Duration
}

// NewTracker starts a Tracker; Close stops it.
func NewTracker(c Config) *Tracker {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Due == nil {
		c.Due = func() {}
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	t := &Tracker{store: c.Store, w: c.Writer, now: c.Now, due: c.Due}
	t.expect.hold = c.ExpectHold
	t.expect.wait = c.ExpectWait
	if c.Late {
		t.reports = batch.NewLate(t.applyTaken, 64, c.Workers+2, batch.Clock(c.Now), batch.Hold(c.Hold))
	} else {
		t.reports = batch.New(t.apply, 64, c.Workers, batch.Clock(c.Now))
	}
	return t
}

// ReportStats reads how the loops that group reports went (batch.Stats).
func (t *Tracker) ReportStats() batch.Stats { return t.reports.Stats() }

// Close waits for running transactions.
func (t *Tracker) Close() { t.reports.Close() }

// Apply stores reports and returns once they are committed.
func (t *Tracker) Apply(ctx context.Context, reports []Report) error {
	if len(reports) == 0 {
		return nil
	}
	t.expect.await(ctx, reports)
	all := reports
	if riders := t.expect.take(reports); len(riders) > 0 {
		all = append(slices.Clip(reports), riders...)
	}
	_, err := t.reports.Do(ctx, all)
	t.expect.recorded(reports, err)
	return err
}

// Statuses implements provider.Sink. A report by a reference that its
// provider announced (Expect) but whose hand-over is not recorded yet
// rides with that record, or waits for it (see expectations).
func (t *Tracker) Statuses(ctx context.Context, providerName string, sts []provider.Status) error {
	reports := make([]Report, len(sts))
	for i, st := range sts {
		reports[i] = Report{Kind: Progress, MessageID: st.MessageID, Provider: providerName, Ref: st.Ref, Status: st.Status,
			ErrorCode: st.ErrorCode, ErrorMessage: st.ErrorMessage, At: st.At}
	}
	return t.expect.deliver(ctx, reports, t.Apply)
}

// Expect implements provider.Expecter: ref is the provider's id of a
// message it just took, whose hand-over this node's dispatcher is about to
// record.
func (t *Tracker) Expect(providerName, ref string) {
	t.expect.expect(providerName, ref, t.now())
}

// Expecting tells how many announced references await the record of
// their hand-over, how many receipts wait for one, and how many records
// took riders since the start.
func (t *Tracker) Expecting() (expected, waiting, carried int) {
	expected, waiting = t.expect.state()
	t.expect.mu.Lock()
	defer t.expect.mu.Unlock()
	return expected, waiting, t.expect.carried
}

// Riders tells, since the start, how many receipts waited to ride with
// the record of their hand-over and were applied on their own because no
// record took them in time (leftBehind: a record slower than 5 s, or one
// that never came), and how many were applied at once because too many
// waited already (overflowed). Either costs the receipt a parked row; a
// count of the first that keeps rising means records wait on something.
func (t *Tracker) Riders() (leftBehind, overflowed int) { return t.expect.counts() }

// Unpark applies the parked reports whose provider id a message now
// carries (see store.KnownParkedRefs for how a report is left parked) and
// returns how many it applied. The sweeper calls it every second.
func (t *Tracker) Unpark(ctx context.Context) (int, error) {
	refs, err := t.store.KnownParkedRefs(ctx, 500)
	if err != nil || len(refs) == 0 {
		return 0, err
	}
	now := t.now().UTC()
	n := 0
	err = t.write(ctx, func(w Work, emit emitter) error {
		var reports []Report
		for p, rs := range refs {
			parked, err := w.TakePendingReports(ctx, p, rs)
			if err != nil {
				return err
			}
			for _, pr := range parked {
				reports = append(reports, unparked(p, pr))
			}
		}
		n = len(reports)
		return applyReports(ctx, w, reports, now, emit)
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

func (t *Tracker) apply(ctx context.Context, groups [][]Report) ([]struct{}, error) {
	return t.applyTaken(ctx, func() [][]Report { return groups })
}

// applyTaken is apply for a group gathered when its transaction starts
// (batch.NewLate).
func (t *Tracker) applyTaken(ctx context.Context, take func() [][]Report) ([]struct{}, error) {
	var groups [][]Report
	var all []Report
	var now time.Time
	err := t.write(ctx, func(w Work, emit emitter) error {
		if groups == nil {
			groups = take()
			// One group, the usual case at low concurrency, is applied
			// as it came (applyReports changes no report in place).
			if len(groups) == 1 {
				all = groups[0]
			} else {
				n := 0
				for _, g := range groups {
					n += len(g)
				}
				all = make([]Report, 0, n)
				for _, g := range groups {
					all = append(all, g...)
				}
			}
			now = t.now().UTC()
		}
		return applyReports(ctx, w, all, now, emit)
	})
	if err != nil {
		return nil, err
	}
	return make([]struct{}, len(groups)), nil
}

// write runs fn in a transaction of the tracker, whose emit hands changes
// to the notifiers in it, and once it committed runs what the notifiers
// asked to run after it (handing their rows to this node's workers, waking
// them).
func (t *Tracker) write(ctx context.Context, fn func(w Work, emit emitter) error) error {
	var after []After
	err := t.w.Write(ctx, func(w Work) error {
		after = after[:0] // a transaction tried again starts afresh
		return fn(w, func(cs []Change) error {
			more, err := w.changed(ctx, cs)
			after = append(after, more...)
			return err
		})
	})
	if err != nil {
		return err
	}
	for _, f := range after {
		f(ctx)
	}
	return nil
}

// emitter hands the changes of one step of applying reports to the
// notifiers, in the transaction that records them.
type emitter func(cs []Change) error

// StatusTx is what applying reports needs of a write transaction: the
// messages to lock and change, the providers' ids of them and of their
// parts, reports parked until their message is known, refunds (ledger) and
// the usage counts. What the changes owe the fronts' clients is the
// notifiers' part (their own transaction interfaces).
type StatusTx interface {
	ledger.Tx
	UsageTx
	LockMessages(ctx context.Context, ids []string) (map[string]domain.Message, error)
	MessageIDsByProviderRef(ctx context.Context, provider string, refs []string) (map[string]string, error)
	UpdateChangedMessages(ctx context.Context, before, after []domain.Message) error
	InsertParts(ctx context.Context, ps []domain.Part) error
	PartsByRef(ctx context.Context, provider string, refs []string) (map[string]domain.Part, error)
	SetPartStatus(ctx context.Context, provider, ref string, status domain.Status) ([]domain.Part, error)
	ParkReports(ctx context.Context, rs []domain.PendingReport) error
	TakePendingReports(ctx context.Context, provider string, refs []string) ([]domain.PendingReport, error)
}

// applyReports applies reports inside tx and hands every status change to
// emit, in the order the reports made them.
func applyReports(ctx context.Context, tx StatusTx, reports []Report, now time.Time, emit emitter) error {
	reports, err := resolveRefs(ctx, tx, reports, now)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(reports))
	for _, r := range reports {
		ids = append(ids, r.MessageID)
	}
	msgs, err := tx.LockMessages(ctx, ids)
	if err != nil {
		return err
	}
	// The changed messages as read (before) and as the reports leave them
	// (after), in the order they first changed, and where each is in both:
	// only what the reports change is written, compared against before.
	// after never grows past its capacity (a message is added once), so
	// the changes can point into it rather than carry a copy each.
	before := make([]domain.Message, 0, len(msgs))
	after := make([]domain.Message, 0, len(msgs))
	changed := make(map[string]int, len(msgs))
	// latest[i] is the change that last pointed at after[i], -1 for none.
	latest := make([]int, 0, len(msgs))
	// kept holds a message as an earlier change left it, once a later
	// report of the batch moves the message on: one allocation for the
	// batch (each report past a message's first may add one). Its entries
	// never change, so a change may point at one even after it grows.
	var kept []domain.Message
	changes := make([]Change, 0, len(reports))
	var usage []domain.UsageDelta
	var astray []domain.PendingReport
	for _, r := range reports {
		i, seen := changed[r.MessageID]
		var prev domain.Message // the message before this report
		if seen {
			prev = after[i]
		} else if read, ok := msgs[r.MessageID]; ok {
			prev = read
		} else {
			continue // unknown message: a late report for a purged one
		}
		m := prev
		if r.Follows != "" && (m.ProviderRef != r.Follows || m.Provider != r.Provider) {
			// It rode with a hand-over whose report did not record its id.
			astray = append(astray, domain.PendingReport{Provider: r.Provider, Ref: r.Follows, Status: r.Status,
				ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage, ReportedAt: orNow(r.At, now), ReceivedAt: now})
			continue
		}
		at := orNow(r.At, now)
		steps, refund := transition(&m, r, at)
		if len(steps) == 0 && !refund.changed {
			continue
		}
		usage = append(usage, domain.UsageChange(&prev, &m)...)
		if err := ledger.Return(ctx, tx, m.AccountID, m.CampaignID, m.ID, refund.amount, refund.note, now); err != nil {
			return err
		}
		for l, amount := range refund.upline {
			// Every level that paid for the message gets its part back,
			// with a line naming the message.
			if err := ledger.Return(ctx, tx, m.Upline[l].AccountID, m.CampaignID, m.ID, amount, refund.note, now); err != nil {
				return err
			}
		}
		if !seen {
			i = len(after)
			changed[m.ID] = i
			before = append(before, prev)
			after = append(after, m)
			latest = append(latest, -1)
		} else {
			if c := latest[i]; c >= 0 {
				// An earlier change of this message keeps the message as
				// its own report left it.
				if kept == nil {
					kept = make([]domain.Message, 0, len(reports)-len(msgs))
				}
				kept = append(kept, after[i])
				changes[c].Message = &kept[len(kept)-1]
				latest[i] = -1
			}
			after[i] = m
		}
		if len(steps) > 0 {
			changes = append(changes, Change{Message: &after[i], Was: prev.Status, Steps: steps, Report: r, At: at, Recorded: now})
			latest[i] = len(changes) - 1
		}
	}
	if err := tx.UpdateChangedMessages(ctx, before, after); err != nil {
		return err
	}
	if err := tx.AddUsage(ctx, usage); err != nil {
		return err
	}
	if len(changes) > 0 {
		// The notifications are written with the status, so none can be
		// lost between the two.
		if err := emit(changes); err != nil {
			return err
		}
	}
	if err := tx.ParkReports(ctx, astray); err != nil {
		return err
	}
	later, err := recordRefs(ctx, tx, reports, changed)
	if err != nil || len(later) == 0 {
		return err
	}
	// Receipts that overtook these submissions' answers, now that the ids
	// are known. They name no new ids, so this goes one level deep.
	return applyReports(ctx, tx, later, now, emit)
}

// resolveRefs fills in the message of reports that name only the
// provider's id. A receipt for one part of a long message becomes a report
// for the whole message once its parts decide it; a report for an id that
// no message carries yet is parked until the answer to its submission
// records the id. Reports left without a message are dropped from the
// result.
func resolveRefs(ctx context.Context, tx StatusTx, reports []Report, now time.Time) ([]Report, error) {
	byProvider := map[string][]string{}
	for _, r := range reports {
		if r.MessageID == "" && r.Ref != "" {
			byProvider[r.Provider] = append(byProvider[r.Provider], r.Ref)
		}
	}
	if len(byProvider) == 0 {
		return reports, nil
	}
	partsOf := map[string]map[string]domain.Part{}
	ids := map[string]map[string]string{}
	for p, refs := range byProvider {
		var err error
		if partsOf[p], err = tx.PartsByRef(ctx, p, refs); err != nil {
			return nil, err
		}
		if ids[p], err = tx.MessageIDsByProviderRef(ctx, p, refs); err != nil {
			return nil, err
		}
	}
	out := make([]Report, 0, len(reports))
	var park []domain.PendingReport
	for _, r := range reports {
		if r.MessageID != "" || r.Ref == "" {
			out = append(out, r)
			continue
		}
		if part, ok := partsOf[r.Provider][r.Ref]; ok {
			whole, decided, err := partReport(ctx, tx, r, part)
			if err != nil {
				return nil, err
			}
			if decided {
				out = append(out, whole)
			}
			continue
		}
		if mid := ids[r.Provider][r.Ref]; mid != "" {
			r.MessageID = mid
			out = append(out, r)
			continue
		}
		if r.Kind == Progress {
			park = append(park, domain.PendingReport{Provider: r.Provider, Ref: r.Ref, Status: r.Status, ErrorCode: r.ErrorCode,
				ErrorMessage: r.ErrorMessage, ReportedAt: orNow(r.At, now), ReceivedAt: now})
		}
	}
	return out, tx.ParkReports(ctx, park)
}

// partReport records a receipt for one part and says what it means for the
// message: DELIVERED once every part is, FAILED as soon as one part fails;
// anything else decides nothing yet.
func partReport(ctx context.Context, tx StatusTx, r Report, part domain.Part) (Report, bool, error) {
	status := r.Status
	if status == domain.Read {
		status = domain.Delivered
	}
	all, err := tx.SetPartStatus(ctx, r.Provider, r.Ref, status)
	if err != nil {
		return Report{}, false, err
	}
	r.MessageID, r.Ref = part.MessageID, ""
	switch status {
	case domain.Failed:
		return r, true, nil
	case domain.Delivered:
		for _, p := range all {
			if p.Status != domain.Delivered {
				return Report{}, false, nil
			}
		}
		return r, len(all) == part.Parts, nil
	}
	return r, true, nil
}

// recordRefs records the parts of messages that providers took in several
// pieces, and takes the reports parked for the ids the accepted reports
// name.
func recordRefs(ctx context.Context, tx StatusTx, reports []Report, changed map[string]int) ([]Report, error) {
	var ps []domain.Part
	byProvider := map[string][]string{}
	for _, r := range reports {
		if _, ok := changed[r.MessageID]; r.Kind != Accepted || !ok {
			continue
		}
		// A provider whose reference is our own id reports by our id, so
		// nothing of its is ever parked: no need to look.
		if r.Ref != "" && r.Ref != r.MessageID {
			byProvider[r.Provider] = append(byProvider[r.Provider], r.Ref)
		}
		if len(r.Parts) < 2 {
			continue
		}
		for i, ref := range r.Parts {
			ps = append(ps, domain.Part{Provider: r.Provider, Ref: ref, MessageID: r.MessageID, Part: i + 1, Parts: len(r.Parts)})
			if i > 0 {
				byProvider[r.Provider] = append(byProvider[r.Provider], ref)
			}
		}
	}
	if err := tx.InsertParts(ctx, ps); err != nil {
		return nil, err
	}
	var later []Report
	for p, refs := range byProvider {
		parked, err := tx.TakePendingReports(ctx, p, refs)
		if err != nil {
			return nil, err
		}
		for _, pr := range parked {
			later = append(later, unparked(p, pr))
		}
	}
	return later, nil
}

// unparked is a parked report of a provider as a report again.
func unparked(provider string, pr domain.PendingReport) Report {
	return Report{Kind: Progress, Provider: provider, Ref: pr.Ref, Status: pr.Status, ErrorCode: pr.ErrorCode,
		ErrorMessage: pr.ErrorMessage, At: pr.ReportedAt}
}

func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return t
}
