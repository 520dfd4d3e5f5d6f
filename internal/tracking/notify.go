package tracking

import (
	"context"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/txn"
)

// Change is one report's effect on a message's status, as the tracker
// recorded it: what a front tells its clients about.
type Change struct {
	// Message is the message as the report left it. Notifiers read it and
	// must not change it: it is also what the tracker writes.
	Message *domain.Message
	// Was is its status before the report.
	Was domain.Status
	// Steps are the statuses it passed through, in order (never empty).
	Steps  []domain.Status
	Report Report
	// At is when the change happened (the report's time, else Recorded).
	At time.Time
	// Recorded is when the tracker's transaction began.
	Recorded time.Time
}

// FirstSteps tells whether these are the first status steps of the
// message: it was SENDING before the change and never held by the fraud
// guard, and no transition leads such a message back to SENDING once it
// took a step (TestNoStatusLeadsBackBeforeAStep). So nothing a front wrote
// for an earlier step of the message can exist. (A held message may, in
// principle, step to SENDING on a provider's word: it is left out.)
func (c Change) FirstSteps() bool { return c.Was == domain.Sending && c.Message.HeldAt.IsZero() }

// Reply is a recipient's message as recorded for an account (one that
// belongs to no account notifies nobody).
type Reply struct {
	// Inbound is the row written: the account, environment, the
	// recipient's number (Phone), channel, text and the campaign it
	// answers ("" when none within ReplyWindow).
	Inbound domain.Inbound
	// To is the number or agent the recipient wrote to ("" when its
	// provider did not say).
	To string
	// At is when the recipient sent it.
	At time.Time
	// Answers is the account's latest message to that number within
	// ReplyWindow, zero when none: the campaign's callback, and the SMPP
	// user that sent it.
	Answers domain.Message
	// Recorded is when the tracker recorded it.
	Recorded time.Time
}

// After is what a notifier asks to run once the transaction it wrote in
// committed (hand the rows to this node's workers, wake them).
type After func(ctx context.Context)

// Notifier is a front's writer of what its clients are owed: for status
// changes and for replies, written in the transaction that records them and
// seen as T, the part of it the notifier declares. A new front adds a
// Notifier; the tracker does not change.
type Notifier[T any] interface {
	Changed(ctx context.Context, tx T, cs []Change) (After, error)
	Received(ctx context.Context, tx T, r Reply) (After, error)
}

// Tx is every part of a write transaction the tracker uses, what its
// Writer hands out; each use takes only its part (StatusTx, InboundTx,
// AlertTx, RedactTx), so a test fakes only that.
type Tx interface {
	StatusTx
	InboundTx
	AlertTx
	RedactMessages(ctx context.Context, ids []string, r domain.Redaction) error
}

// Work is a transaction as the tracker works in it: Tx, with the notifiers
// registered at construction bound to the same transaction.
type Work struct {
	Tx
	notes []bound
}

// bound is a notifier bound to one transaction.
type bound struct {
	changed  func(ctx context.Context, cs []Change) (After, error)
	received func(ctx context.Context, r Reply) (After, error)
}

// changed hands cs to every notifier, in the order they were registered.
func (w Work) changed(ctx context.Context, cs []Change) ([]After, error) {
	return w.each(func(n bound) (After, error) { return n.changed(ctx, cs) })
}

// received hands a reply to every notifier, in the order they were
// registered.
func (w Work) received(ctx context.Context, r Reply) ([]After, error) {
	return w.each(func(n bound) (After, error) { return n.received(ctx, r) })
}

// each calls every notifier and gathers what they ask to run after the
// commit.
func (w Work) each(call func(n bound) (After, error)) ([]After, error) {
	var out []After
	for _, n := range w.notes {
		f, err := call(n)
		if err != nil {
			return nil, err
		}
		if f != nil {
			out = append(out, f)
		}
	}
	return out, nil
}

// Note is a Notifier registered on storage whose transactions are S.
type Note[S any] struct{ bind func(tx S) bound }

// Notify registers n, which sees the storage's transaction through view
// (a conversion to the interface n declares).
func Notify[S, T any](view func(S) T, n Notifier[T]) Note[S] {
	return Note[S]{bind: func(tx S) bound {
		v := view(tx)
		return bound{
			changed:  func(ctx context.Context, cs []Change) (After, error) { return n.Changed(ctx, v, cs) },
			received: func(ctx context.Context, r Reply) (After, error) { return n.Received(ctx, v, r) },
		}
	}}
}

// Bind is the tracker's Writer over storage w whose transactions are S:
// each is seen by the tracker through view, and by each notifier through
// its own.
func Bind[S any](w interface {
	Write(ctx context.Context, fn func(tx S) error) error
}, view func(S) Tx, notes ...Note[S]) txn.Writer[Work] {
	return txn.As(w, func(tx S) Work {
		wk := Work{Tx: view(tx), notes: make([]bound, len(notes))}
		for i, n := range notes {
			wk.notes[i] = n.bind(tx)
		}
		return wk
	})
}
