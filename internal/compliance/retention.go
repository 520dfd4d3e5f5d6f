package compliance

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
)

// RetentionStore is what the retention sweep needs from storage.
type RetentionStore interface {
	RetentionAccounts(ctx context.Context) (map[string]int, error)
	RetentionRows(ctx context.Context, kind, accountID, after, before string, limit int) ([]domain.RetentionRow, error)
	Redact(ctx context.Context, kind string, ids []string, r domain.Redaction) error
	DeleteConversationsBefore(ctx context.Context, accountID string, t time.Time) error
}

// Retention erases what accounts keep for a limited time (an account's
// retention days): for each account with a number of retention days, the text of
// messages and replies older than that is erased and their phone numbers
// replaced by the keyed hash, in webhook events too. Statuses, prices,
// counts and the ledger stay. A message still waiting for a provider is
// left until it has gone (or ended), and an event still being delivered
// until its delivery ends.
//
// It works in bounded batches: each round looks at no more than Batches
// batches of Batch rows per account and kind of row, each redacted in a
// transaction of its own, and remembers (in memory) how far everything is
// done, so later rounds start there. After a restart the first rounds walk
// the already redacted rows once more, changing nothing. Running it on
// every node is safe: redacting twice changes nothing.
type Retention struct {
	Store    RetentionStore
	Redactor *Redactor
	Now      func() time.Time
	Interval time.Duration // between rounds; default 1 minute
	Batch    int           // rows per batch; default 500
	Batches  int           // batches per account and kind per round; default 20
	Log      *slog.Logger

	mu    sync.Mutex
	marks map[string]string // account/kind -> every row with an id up to this one is done
}

// kinds are the rows that hold personal data, with the id prefix their
// ids carry (ids begin with their creation time).
var kinds = []struct {
	name, prefix string
}{{domain.RetainMessages, id.Message}, {domain.RetainInbound, id.Inbound}, {domain.RetainEvents, id.Event}}

// Run sweeps until ctx ends.
func (r *Retention) Run(ctx context.Context) {
	interval := r.Interval
	if interval <= 0 {
		interval = time.Minute
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	log := r.Log
	if log == nil {
		log = slog.Default()
	}
	for {
		if _, err := r.Sweep(ctx); err != nil && ctx.Err() == nil {
			log.Error("retention sweep", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep runs one round over every account with a retention period and
// returns how many rows it redacted.
func (r *Retention) Sweep(ctx context.Context) (int, error) {
	accounts, err := r.Store.RetentionAccounts(ctx)
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.marks == nil {
		r.marks = map[string]string{}
	}
	now := r.Now().UTC()
	total := 0
	var errs []error
	for accountID, days := range accounts {
		cutoff := now.Add(-time.Duration(days) * 24 * time.Hour)
		for _, k := range kinds {
			n, err := r.sweepKind(ctx, accountID, k.name, id.Floor(k.prefix, cutoff))
			total += n
			if err != nil {
				errs = append(errs, err)
			}
		}
		if err := r.Store.DeleteConversationsBefore(ctx, accountID, cutoff); err != nil {
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}

// sweepKind redacts one account's rows of a kind made before the id
// before, from where the last round stopped.
func (r *Retention) sweepKind(ctx context.Context, accountID, kind, before string) (int, error) {
	size, batches := r.Batch, r.Batches
	if size <= 0 {
		size = 500
	}
	if batches <= 0 {
		batches = 20
	}
	key := accountID + "/" + kind
	mark, after := r.marks[key], r.marks[key]
	waiting := false // a row that must wait was met: the mark stops before it
	total := 0
	for b := 0; b < batches; b++ {
		rows, err := r.Store.RetentionRows(ctx, kind, accountID, after, before, size)
		if err != nil {
			return total, err
		}
		var ids []string
		newMark := mark
		for _, row := range rows {
			switch {
			case r.waits(kind, row):
				waiting = true
			case !r.done(kind, row):
				ids = append(ids, row.ID)
			}
			if !waiting {
				newMark = row.ID
			}
		}
		if err := r.Store.Redact(ctx, kind, ids, r.Redactor.Redaction()); err != nil {
			return total, err
		}
		total += len(ids)
		mark = newMark
		r.marks[key] = mark
		if len(rows) < size {
			break
		}
		after = rows[len(rows)-1].ID
	}
	return total, nil
}

// waits reports whether a row is still in use and must keep its data for
// now: a message not yet handed over, an event still being delivered.
func (r *Retention) waits(kind string, row domain.RetentionRow) bool {
	switch kind {
	case domain.RetainMessages:
		return row.State == string(domain.Sending)
	case domain.RetainEvents:
		return row.State == domain.EventPending
	}
	return false
}

// done reports whether a row is already redacted.
func (r *Retention) done(kind string, row domain.RetentionRow) bool {
	if kind == domain.RetainEvents {
		body, err := r.Redactor.EventBody(row.Body)
		return err != nil || body == row.Body // a body that does not parse has nothing to redact
	}
	return Redacted(row.Phone)
}
