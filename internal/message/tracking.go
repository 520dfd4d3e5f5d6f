package message

import (
	"context"
	"slices"
	"time"

	"github.com/msgsvc/msgsvc/internal/batch"
	"github.com/msgsvc/msgsvc/internal/dlr"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/webhook"
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
}

// Tracker applies reports to messages: it moves statuses forward only,
// writes the webhook events of every change and the refunds, all in the
// same transaction, so no change can be recorded without its event.
// Concurrent reports are grouped into one transaction.
type Tracker struct {
	store   TrackerStore
	reports *batch.Batcher[[]Report, struct{}]
	now     func() time.Time
	events  func() // called after events were written
	due     func() // called after messages became due (opt-out confirmations)
	smpp    func() // called after reports were applied (receipts may wait)
	own     ownSenders
	handoff Handoff[domain.Event]
	expect  expectations
}

// TrackerStore is what the Tracker needs from storage.
type TrackerStore interface {
	Writer
	LatestMessageTo(ctx context.Context, accountID string, env domain.Environment, phone string, since time.Time) (domain.Message, error)
	MessageByID(ctx context.Context, messageID string) (domain.Message, error)
	SenderOwners(ctx context.Context, channel domain.Channel, value string) ([]string, error)
	Account(ctx context.Context, id string) (domain.Account, error)
	LatestMessageVia(ctx context.Context, provider, phone string, since time.Time) (domain.Message, error)
	KnownParkedRefs(ctx context.Context, limit int) (map[string][]string, error)
	HasSMPPUsers(ctx context.Context, accountID string, env domain.Environment) (bool, error)
}

// TrackerConfig sets up a Tracker.
type TrackerConfig struct {
	Store TrackerStore
	Now   func() time.Time
	// Events is called after webhook events were queued (wakes the deliverer).
	Events func()
	// Due is called after the tracker queued a message of its own (the
	// confirmation of an opt-out), to wake the dispatcher.
	Due func()
	// Workers is the number of parallel transaction loops.
	Workers int
	// Handoff, when set, gives the status events straight to a webhook
	// worker of this node instead of through a database claim.
	Handoff Handoff[domain.Event]
	// SMPP is called after reports or a reply were stored: receipts or
	// replies may wait for this node's SMPP binds (nil: none here).
	SMPP func()
	// OwnSender is the sender a provider's messages that name none go out
	// from ("" when the platform picks one); nil knows none. A receipt of
	// such a message is addressed to it.
	OwnSender func(provider string) string
}

// eventLease is how new events are written: unleased (zero) or leased to
// a local deliverer.
type eventLease struct {
	owner string
	until time.Time
}

// ownSenders is TrackerConfig.OwnSender; nil knows none.
type ownSenders func(provider string) string

func (o ownSenders) of(provider string) string {
	if o == nil {
		return ""
	}
	return o(provider)
}

// NewTracker starts a Tracker; Close stops it.
func NewTracker(c TrackerConfig) *Tracker {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Events == nil {
		c.Events = func() {}
	}
	if c.Due == nil {
		c.Due = func() {}
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.SMPP == nil {
		c.SMPP = func() {}
	}
	t := &Tracker{store: c.Store, now: c.Now, events: c.Events, due: c.Due, smpp: c.SMPP, own: c.OwnSender, handoff: c.Handoff}
	t.reports = batch.New(t.apply, 64, c.Workers)
	return t
}

// Close waits for running transactions.
func (t *Tracker) Close() { t.reports.Close() }

// Apply stores reports and returns once they are committed.
func (t *Tracker) Apply(ctx context.Context, reports []Report) error {
	if len(reports) == 0 {
		return nil
	}
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

// Unpark applies the parked reports whose provider id a message now
// carries (see store.KnownParkedRefs for how a report is left parked) and
// returns how many it applied. The sweeper calls it every second.
func (t *Tracker) Unpark(ctx context.Context) (int, error) {
	refs, err := t.store.KnownParkedRefs(ctx, 500)
	if err != nil || len(refs) == 0 {
		return 0, err
	}
	now := t.now().UTC()
	lease := t.eventLease(now)
	var queued []domain.Event
	n := 0
	err = t.store.Write(ctx, func(tx Tx) error {
		var reports []Report
		for p, rs := range refs {
			parked, err := tx.TakePendingReports(ctx, p, rs)
			if err != nil {
				return err
			}
			for _, pr := range parked {
				reports = append(reports, unparked(p, pr))
			}
		}
		n = len(reports)
		var err error
		queued, err = applyReports(ctx, tx, reports, now, lease, t.own)
		return err
	})
	if err != nil {
		return 0, err
	}
	t.deliver(ctx, queued, lease)
	return n, nil
}

// eventLease is how events written now are leased: to the local
// deliverer when there is one.
func (t *Tracker) eventLease(now time.Time) eventLease {
	if t.handoff == nil {
		return eventLease{}
	}
	return eventLease{owner: t.handoff.Owner(), until: now.Add(t.handoff.Lease())}
}

func (t *Tracker) apply(ctx context.Context, groups [][]Report) ([]struct{}, error) {
	var all []Report
	for _, g := range groups {
		all = append(all, g...)
	}
	var queued []domain.Event
	now := t.now().UTC()
	lease := t.eventLease(now)
	err := t.store.Write(ctx, func(tx Tx) error {
		var err error
		queued, err = applyReports(ctx, tx, all, now, lease, t.own)
		return err
	})
	if err != nil {
		return nil, err
	}
	t.deliver(ctx, queued, lease)
	t.smpp()
	return make([]struct{}, len(groups)), nil
}

// deliver gets newly written events going: in memory when they were
// leased to the local deliverer, else by waking it. An event written
// without the lease waits in the table for an earlier event of its
// message (InsertEvents took the lease off): the deliverer claims it when
// its turn comes.
func (t *Tracker) deliver(ctx context.Context, evs []domain.Event, lease eventLease) {
	evs = deliverable(evs)
	if len(evs) == 0 {
		return
	}
	if lease.owner == "" {
		t.events()
		return
	}
	held := func(ev domain.Event) bool { return ev.LeaseOwner == "" }
	leased := evs
	if slices.ContainsFunc(evs, held) {
		leased = slices.DeleteFunc(slices.Clone(evs), held)
		t.events()
	}
	t.handoff.Hand(ctx, leased)
}

// TrackTx is what applying reports needs of a write transaction: the
// messages to lock and change, the providers' ids of them and of their
// parts, reports parked until their message is known, refunds (ledger) and
// the webhook events the changes cause.
type TrackTx interface {
	ledger.Tx
	UsageTx
	LockMessages(ctx context.Context, ids []string) (map[string]domain.Message, error)
	MessageIDsByProviderRef(ctx context.Context, provider string, refs []string) (map[string]string, error)
	UpdateChangedMessages(ctx context.Context, before, after []domain.Message) error
	InsertEvents(ctx context.Context, evs []domain.Event) error
	InsertSMPPItems(ctx context.Context, items []domain.SMPPItem) error
	InsertParts(ctx context.Context, ps []domain.Part) error
	PartsByRef(ctx context.Context, provider string, refs []string) (map[string]domain.Part, error)
	SetPartStatus(ctx context.Context, provider, ref string, status domain.Status) ([]domain.Part, error)
	ParkReports(ctx context.Context, rs []domain.PendingReport) error
	TakePendingReports(ctx context.Context, provider string, refs []string) ([]domain.PendingReport, error)
}

// applyReports applies reports inside tx and returns the webhook events it
// queued, written under lease (when one is given).
func applyReports(ctx context.Context, tx TrackTx, reports []Report, now time.Time, lease eventLease, own ownSenders) ([]domain.Event, error) {
	reports, err := resolveRefs(ctx, tx, reports, now)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(reports))
	for _, r := range reports {
		ids = append(ids, r.MessageID)
	}
	msgs, err := tx.LockMessages(ctx, ids)
	if err != nil {
		return nil, err
	}
	// The changed messages as read, in the order they first changed: only
	// what the reports change is written, compared against these.
	var before []domain.Message
	changed := make(map[string]bool, len(msgs))
	events := make([]domain.Event, 0, 2*len(reports)) // most reports make one or two
	var usage []domain.UsageDelta
	var receipts []domain.SMPPItem
	var astray []domain.PendingReport
	for _, r := range reports {
		m, ok := msgs[r.MessageID]
		if !ok {
			continue // unknown message: a late report for a purged one
		}
		if r.Follows != "" && (m.ProviderRef != r.Follows || m.Provider != r.Provider) {
			// It rode with a hand-over whose report did not record its id.
			astray = append(astray, domain.PendingReport{Provider: r.Provider, Ref: r.Follows, Status: r.Status,
				ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage, ReportedAt: orNow(r.At, now), ReceivedAt: now})
			continue
		}
		at := r.At
		if at.IsZero() {
			at = now
		}
		was := m
		steps, refund := transition(&m, r, at)
		if len(steps) == 0 && !refund.changed {
			continue
		}
		usage = append(usage, domain.UsageChange(was, m)...)
		if dlr.Wanted(m, was.Status) {
			it := dlr.Item(m, at)
			if it.Dest == "" {
				// Sent from the route's own sender: the receipt comes from
				// the handset to it, as digits like every number we write.
				it.Dest = phone.Address(own.of(m.Provider))
			}
			receipts = append(receipts, it)
		}
		if err := ledger.Return(ctx, tx, m.AccountID, m.CampaignID, m.ID, refund.amount, refund.note, now); err != nil {
			return nil, err
		}
		if !changed[m.ID] {
			changed[m.ID] = true
			before = append(before, msgs[m.ID])
		}
		msgs[m.ID] = m
		events = appendStatusEvents(events, m, steps, at, lease)
	}
	updates := make([]domain.Message, len(before))
	for i, b := range before {
		updates[i] = msgs[b.ID]
	}
	if err := tx.UpdateChangedMessages(ctx, before, updates); err != nil {
		return nil, err
	}
	if err := tx.AddUsage(ctx, usage); err != nil {
		return nil, err
	}
	if err := tx.InsertEvents(ctx, events); err != nil {
		return nil, err
	}
	if len(receipts) > 0 {
		// The receipt is written with the status, so it cannot be lost
		// between the two.
		if err := tx.InsertSMPPItems(ctx, receipts); err != nil {
			return nil, err
		}
	}
	if err := tx.ParkReports(ctx, astray); err != nil {
		return nil, err
	}
	later, err := recordRefs(ctx, tx, reports, changed)
	if err != nil || len(later) == 0 {
		return events, err
	}
	// Receipts that overtook these submissions' answers, now that the ids
	// are known. They name no new ids, so this goes one level deep.
	more, err := applyReports(ctx, tx, later, now, lease, own)
	return append(events, more...), err
}

// resolveRefs fills in the message of reports that name only the
// provider's id. A receipt for one part of a long message becomes a report
// for the whole message once its parts decide it; a report for an id that
// no message carries yet is parked until the answer to its submission
// records the id. Reports left without a message are dropped from the
// result.
func resolveRefs(ctx context.Context, tx TrackTx, reports []Report, now time.Time) ([]Report, error) {
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
func partReport(ctx context.Context, tx TrackTx, r Report, part domain.Part) (Report, bool, error) {
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
func recordRefs(ctx context.Context, tx TrackTx, reports []Report, changed map[string]bool) ([]Report, error) {
	var ps []domain.Part
	byProvider := map[string][]string{}
	for _, r := range reports {
		if r.Kind != Accepted || !changed[r.MessageID] {
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

// appendStatusEvents appends the delivery_status events of the steps a
// message took to out. Every one is written, for the events feed; only
// those of a send with a callbackUrl are webhooks to deliver.
func appendStatusEvents(out []domain.Event, m domain.Message, steps []domain.Status, at time.Time, lease eventLease) []domain.Event {
	for _, st := range steps {
		ev := domain.Event{ID: id.New(id.Event, at), AccountID: m.AccountID, Env: m.Env, CampaignID: m.CampaignID, MessageID: m.ID,
			Event: webhook.DeliveryStatus, URL: m.CallbackURL, Body: webhook.StatusBody(m, st, at), NextAttemptAt: at,
			CreatedAt: at}
		if lease.owner != "" && m.CallbackURL != "" {
			ev.LeaseOwner, ev.NextAttemptAt = lease.owner, lease.until
		}
		out = append(out, ev)
	}
	return out
}

// deliverable keeps the events that are webhooks to deliver (their send
// had a callbackUrl); the others exist for the events feed only.
func deliverable(evs []domain.Event) []domain.Event {
	i := 0
	for i < len(evs) && evs[i].URL != "" {
		i++
	}
	if i == len(evs) {
		return evs // the usual case, every event a webhook: no copy
	}
	out := make([]domain.Event, i, len(evs)-1)
	copy(out, evs[:i])
	for _, ev := range evs[i+1:] {
		if ev.URL != "" {
			out = append(out, ev)
		}
	}
	return out
}
