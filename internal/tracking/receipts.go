package tracking

import (
	"context"
	"log/slog"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// A receipt can be lost for good: a carrier drops it, or a node dies with
// a receipt it had read and not yet answered and the SMSC does not send it
// again. The message would stay SENT for ever. The ReceiptChecker asks the
// providers that can be asked (provider.Querier: SMPP's query_sm) about
// messages whose receipt is overdue, and records what they answer as if
// the receipt had come, through the Tracker (which never moves a message
// twice, so every node may run one).

// ReceiptStore is what the ReceiptChecker reads.
type ReceiptStore interface {
	AwaitingReport(ctx context.Context, provider string, since, before, afterAt time.Time, afterID string, limit int) ([]domain.Message, error)
	UnreportedParts(ctx context.Context, provider string, messageIDs []string) (map[string][]domain.Part, error)
}

// Defaults of the ReceiptChecker.
const (
	// DefaultReceiptOverdue is how long after its hand-over a message
	// waits for its receipt before the carrier is asked; receipts come
	// within seconds to a few minutes.
	DefaultReceiptOverdue = 10 * time.Minute
	// receiptQueryAge is when asking stops: past the longest validity
	// carriers keep a message, they no longer know it either.
	receiptQueryAge = 72 * time.Hour
	// maxReceiptBackoff bounds the wait between two questions about one
	// message.
	maxReceiptBackoff = 6 * time.Hour
	// receiptQueriesPerPass bounds the questions of one pass, so that a
	// backlog is asked about a slice at a time at the provider's pace.
	receiptQueriesPerPass = 500
)

// ReceiptChecker asks providers about overdue receipts.
type ReceiptChecker struct {
	Store ReceiptStore
	// Providers are the providers that can be asked, by name.
	Providers map[string]provider.Querier
	Tracker   interface {
		Statuses(ctx context.Context, providerName string, sts []provider.Status) error
	}
	// Overdue is how long a message waits for its receipt before its
	// provider is asked (default DefaultReceiptOverdue).
	Overdue time.Duration
	Now     func() time.Time
	Log     *slog.Logger

	// next is when to ask again about a message already asked about, by
	// id, with how many times it was asked; kept in memory: a restarted
	// node asks once more, which costs a query, not a status.
	next map[string]backoff
}

type backoff struct {
	at    time.Time
	times int
}

func (c *ReceiptChecker) overdue() time.Duration {
	if c.Overdue <= 0 {
		return DefaultReceiptOverdue
	}
	return c.Overdue
}

// Run checks every quarter of Overdue (at least every second, at most
// every minute) until ctx ends.
func (c *ReceiptChecker) Run(ctx context.Context) {
	if len(c.Providers) == 0 {
		return
	}
	t := time.NewTicker(min(max(c.overdue()/4, time.Second), time.Minute))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for name := range c.Providers {
			if n, err := c.Check(ctx, name); err != nil && ctx.Err() == nil {
				c.Log.Warn("asking a provider about overdue receipts", "provider", name, "err", err)
			} else if n > 0 {
				c.Log.Info("statuses learned by asking for overdue receipts", "provider", name, "messages", n)
			}
		}
	}
}

// Check asks one provider about its messages whose receipt is overdue and
// records the final statuses it answers; it returns how many it recorded.
func (c *ReceiptChecker) Check(ctx context.Context, name string) (int, error) {
	q := c.Providers[name]
	if q == nil {
		return 0, nil
	}
	if c.next == nil {
		c.next = map[string]backoff{}
	}
	now := c.Now()
	var due []domain.Message
	seen := map[string]bool{}
	var afterAt time.Time
	afterID := ""
	for len(due) < receiptQueriesPerPass {
		page, err := c.Store.AwaitingReport(ctx, name, now.Add(-receiptQueryAge), now.Add(-c.overdue()), afterAt, afterID, 500)
		if err != nil {
			return 0, err
		}
		for _, m := range page {
			seen[m.ID] = true
			if b, ok := c.next[m.ID]; ok && now.Before(b.at) {
				continue
			}
			if len(due) < receiptQueriesPerPass {
				due = append(due, m)
			}
		}
		if len(page) < 500 {
			// Forget what is no longer awaited (settled, or too old).
			for id := range c.next {
				if !seen[id] {
					delete(c.next, id)
				}
			}
			break
		}
		afterAt, afterID = page[len(page)-1].UpdatedAt, page[len(page)-1].ID
	}
	if len(due) == 0 {
		return 0, nil
	}
	ids := make([]string, len(due))
	for i, m := range due {
		ids[i] = m.ID
	}
	parts, err := c.Store.UnreportedParts(ctx, name, ids)
	if err != nil {
		return 0, err
	}
	var refs []provider.QueryRef
	for _, m := range due {
		if ps := parts[m.ID]; len(ps) > 0 {
			for _, p := range ps {
				refs = append(refs, provider.QueryRef{Ref: p.Ref, From: m.From})
			}
		} else if m.ProviderRef != "" {
			refs = append(refs, provider.QueryRef{Ref: m.ProviderRef, From: m.From})
		}
		b := c.next[m.ID]
		b.times++
		b.at = now.Add(min(c.overdue()<<min(b.times, 20), maxReceiptBackoff))
		c.next[m.ID] = b
	}
	sts, err := q.Query(ctx, refs)
	if len(sts) > 0 {
		if serr := c.Tracker.Statuses(ctx, name, sts); serr != nil {
			return 0, serr
		}
	}
	return len(sts), err
}
