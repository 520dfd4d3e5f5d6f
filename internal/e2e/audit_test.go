package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
)

// openAudit opens the database a node runs on, for reading what the run
// left there; it is closed when the test ends.
func openAudit(ctx context.Context, t *testing.T, dsn string) *store.Store {
	t.Helper()
	st, err := store.Open(ctx, dsn, store.Options{MaxConns: 2})
	if err != nil {
		t.Fatalf("open the database for the audit: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// accountMessages reads every message of an account.
func accountMessages(ctx context.Context, t *testing.T, st *store.Store, accountID string) map[string]domain.Message {
	t.Helper()
	out := map[string]domain.Message{}
	before := ""
	for {
		page, err := st.SearchMessages(ctx, domain.MessageFilter{AccountID: accountID, Before: before, Limit: 1000})
		if err != nil {
			t.Fatalf("read messages: %v", err)
		}
		for _, m := range page {
			out[m.ID] = m
		}
		if len(page) < 1000 {
			return out
		}
		before = page[len(page)-1].ID
	}
}

// recipients maps message ids to their recipients, as the webhook checks
// take them.
func recipients(msgs map[string]domain.Message) map[string]string {
	out := make(map[string]string, len(msgs))
	for id, m := range msgs {
		out[id] = m.To
	}
	return out
}

// checkAllKnown asserts that the database holds exactly the messages the
// integrators were told about: with an Idempotency-Key on every send and
// retries until an answer came, a send the service committed but whose
// answer was lost is answered (replayed) on the next try.
func checkAllKnown(t *testing.T, inDB map[string]domain.Message, told map[string]string) {
	t.Helper()
	var problems []string
	for id := range told {
		if _, ok := inDB[id]; !ok {
			problems = append(problems, fmt.Sprintf("accepted message %s is not in the database", id))
		}
	}
	for id, m := range inDB {
		if _, ok := told[id]; !ok {
			problems = append(problems, fmt.Sprintf("message %s to %s is in the database but no answer named it", id, m.To))
		}
	}
	sort.Strings(problems)
	report(t, problems)
}

// ledgerFigures sums up the audit of an account's ledger.
type ledgerFigures struct {
	balance, sum     int64 // micro-credits
	debits, refunds  int
	charged, settled int // messages still charged; messages charged nothing
}

func (f ledgerFigures) String() string {
	return fmt.Sprintf("balance %s = ledger sum %s; %d debits, %d refunds; %d messages charged, %d refunded in full",
		credits(f.balance), credits(f.sum), f.debits, f.refunds, f.charged, f.settled)
}

func credits(micro int64) string { return fmt.Sprintf("%.2f", float64(micro)/1e6) }

// checkLedger asserts the promises about credits on what a
// run left: the balance equals the ledger's sum and is not negative; every
// live message has exactly one debit of its price, at most one refund, and
// its lines add up to what the message row says is still charged: its
// price when a provider took it, nothing when it failed before
// (INVALID_NUMBER) and was refunded; every line names a message of the
// account or is the operator's top-up.
func checkLedger(ctx context.Context, t *testing.T, st *store.Store, accountID string, msgs map[string]domain.Message) ledgerFigures {
	t.Helper()
	a, err := st.Account(ctx, accountID)
	if err != nil {
		t.Fatalf("read the account: %v", err)
	}
	f := ledgerFigures{balance: a.Balance}
	if f.sum, err = st.LedgerSum(ctx, accountID); err != nil {
		t.Fatal(err)
	}
	if f.balance != f.sum {
		t.Errorf("balance %s but the ledger sums to %s", credits(f.balance), credits(f.sum))
	}
	if f.balance < 0 {
		t.Errorf("balance %s is negative", credits(f.balance))
	}
	type lines struct {
		net             int64
		debits, refunds int
		debit           int64
	}
	per := map[string]*lines{}
	var problems []string
	before := ""
	for {
		page, err := st.Ledger(ctx, accountID, before, 1000)
		if err != nil {
			t.Fatalf("read the ledger: %v", err)
		}
		for _, e := range page {
			if e.MessageID == "" {
				if e.Kind != ledger.TopUp {
					problems = append(problems, fmt.Sprintf("ledger line %s (%s %s) names no message", e.ID, e.Kind, credits(e.Amount)))
				}
				continue
			}
			l := per[e.MessageID]
			if l == nil {
				l = &lines{}
				per[e.MessageID] = l
			}
			l.net += e.Amount
			switch e.Kind {
			case ledger.Debit:
				l.debits++
				l.debit = -e.Amount
				f.debits++
			case ledger.Refund:
				l.refunds++
				f.refunds++
			default:
				problems = append(problems, fmt.Sprintf("ledger line %s of message %s is a %s", e.ID, e.MessageID, e.Kind))
			}
		}
		if len(page) < 1000 {
			break
		}
		before = page[len(page)-1].ID
	}
	for id, m := range msgs {
		if m.Env != domain.Live {
			continue
		}
		l := per[id]
		if l == nil {
			problems = append(problems, fmt.Sprintf("live message %s (%s) has no ledger line", id, m.Status))
			continue
		}
		if l.debits != 1 || l.debit != m.Credits || l.refunds > 1 {
			problems = append(problems, fmt.Sprintf("message %s (%s, price %s): %d debits (last %s), %d refunds",
				id, m.Status, credits(m.Credits), l.debits, credits(l.debit), l.refunds))
		}
		if -l.net != m.Charged {
			problems = append(problems, fmt.Sprintf("message %s (%s %s): its ledger lines sum to %s but it is charged %s",
				id, m.Status, m.ErrorCode, credits(l.net), credits(m.Charged)))
		}
		refunded := m.Status == domain.Failed && m.ErrorCode == domain.CodeInvalidNumber
		switch {
		case refunded && m.Charged != 0:
			problems = append(problems, fmt.Sprintf("message %s failed %s before a provider took it but is charged %s",
				id, m.ErrorCode, credits(m.Charged)))
		case !refunded && m.Charged != m.Credits:
			problems = append(problems, fmt.Sprintf("message %s ended %s but is charged %s of its price %s",
				id, m.Status, credits(m.Charged), credits(m.Credits)))
		}
		if m.Charged == 0 {
			f.settled++
		} else {
			f.charged++
		}
	}
	for id := range per {
		if _, ok := msgs[id]; !ok {
			problems = append(problems, fmt.Sprintf("ledger names message %s, which the account does not have", id))
		}
	}
	sort.Strings(problems)
	report(t, problems)
	return f
}

// checkEventsDelivered asserts that every webhook event of the account is
// recorded as delivered: none is still pending, failed or stopped. The
// receiver may have acknowledged an attempt whose outcome is still being
// written, so it polls for a while before it reports. It returns how many
// events there are. It reads the events table with one query: the store's
// per-message reads would cost thousands of queries, slow under -race.
func checkEventsDelivered(ctx context.Context, t *testing.T, dsn, accountID string) int {
	t.Helper()
	db := openSQL(t, dsn)
	var problems []string
	n := 0
	for deadline := time.Now().Add(30 * time.Second); ; {
		n, problems = undelivered(ctx, t, db, accountID)
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	report(t, problems)
	return n
}

// undelivered counts the account's events and lists those not recorded as
// delivered.
func undelivered(ctx context.Context, t *testing.T, db *sql.DB, accountID string) (int, []string) {
	t.Helper()
	rows, err := db.QueryContext(ctx, `SELECT id, message_id, state, attempts, last_status, last_error
		FROM webhook_events WHERE account_id = $1`, accountID)
	if err != nil {
		t.Fatalf("read events: %v", err)
	}
	defer rows.Close()
	n := 0
	var problems []string
	for rows.Next() {
		var id, mid, state, lastErr string
		var attempts, lastStatus int
		if err := rows.Scan(&id, &mid, &state, &attempts, &lastStatus, &lastErr); err != nil {
			t.Fatalf("read events: %v", err)
		}
		n++
		if state != domain.EventDelivered {
			problems = append(problems, fmt.Sprintf("event %s of message %s is %s after %d attempts (last %d %q)",
				id, mid, state, attempts, lastStatus, lastErr))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read events: %v", err)
	}
	sort.Strings(problems)
	return n, problems
}

// openSQL opens the database at dsn read-only for plain queries (the
// drivers are the store's); it is closed when the test ends.
func openSQL(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	driver, source := "sqlite", "file:"+dsn+"?mode=ro&_pragma=busy_timeout(10000)"
	if strings.HasPrefix(dsn, "postgres://") {
		driver, source = "pgx", dsn
	}
	db, err := sql.Open(driver, source)
	if err != nil {
		t.Fatalf("open %s: %v", driver, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
