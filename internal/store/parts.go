package store

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

var parts = newTable("message_parts", func(p *domain.Part, c cols) cols {
	return c.add(textCol("provider", &p.Provider), textCol("ref", &p.Ref), textCol("message_id", &p.MessageID),
		intCol("part", &p.Part), intCol("parts", &p.Parts), enumCol("status", &p.Status))
})

// InsertParts records the parts of messages, in the caller's transaction.
// A part already recorded (a resubmission) keeps its row.
func (tx *Tx) InsertParts(ctx context.Context, ps []domain.Part) error {
	return insertRows(ctx, tx, parts, ps, 500, ` ON CONFLICT (provider, ref) DO NOTHING`, false, "parts")
}

// PartsByRef finds the parts a provider's ids name, by id.
func (tx *Tx) PartsByRef(ctx context.Context, provider string, refs []string) (map[string]domain.Part, error) {
	out := map[string]domain.Part{}
	err := inChunks(refs, func(chunk []any) error {
		ps, err := parts.scanAll(tx.query(ctx, `SELECT `+parts.list+` FROM message_parts WHERE provider = $1 AND ref IN (`+
			tx.s.placeholders(2, len(chunk))+`)`, append([]any{provider}, chunk...)...))
		for _, p := range ps {
			out[p.Ref] = p
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetPartStatus records a receipt for one part and returns every part of
// its message as they now stand.
func (tx *Tx) SetPartStatus(ctx context.Context, provider, ref string, status domain.Status) ([]domain.Part, error) {
	var messageID string
	err := tx.queryRow(ctx, `UPDATE message_parts SET status = $3 WHERE provider = $1 AND ref = $2 RETURNING message_id`,
		provider, ref, status).Scan(&messageID)
	if err != nil {
		return nil, fmt.Errorf("set part status: %w", err)
	}
	return parts.scanAll(tx.query(ctx, `SELECT `+parts.list+` FROM message_parts WHERE message_id = $1 ORDER BY part`, messageID))
}

var pendingReports = newTable("pending_reports", func(p *domain.PendingReport, c cols) cols {
	return c.add(textCol("provider", &p.Provider), textCol("ref", &p.Ref), enumCol("status", &p.Status),
		textCol("error_code", &p.ErrorCode), textCol("error_message", &p.ErrorMessage),
		timeCol("reported_at", &p.ReportedAt), timeCol("received_at", &p.ReceivedAt))
})

// ParkReports keeps reports whose provider id is not known yet, in the
// caller's transaction. The same report twice is kept once.
func (tx *Tx) ParkReports(ctx context.Context, rs []domain.PendingReport) error {
	if len(rs) > 0 {
		tx.s.parked.mayHold() // before the insert: a check that starts now must not trust what it sees
	}
	return insertRows(ctx, tx, pendingReports, rs, 500, ` ON CONFLICT (provider, ref, status) DO NOTHING`, false, "pending reports")
}

// TakePendingReports removes and returns the parked reports for these
// provider ids, oldest first. One DELETE … RETURNING takes exactly what it
// returns: a SELECT followed by a DELETE of the same ids would also remove
// a report parked between the two by a transaction running beside this one
// (PostgreSQL), and that report would be lost.
func (tx *Tx) TakePendingReports(ctx context.Context, provider string, refs []string) ([]domain.PendingReport, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	if tx.pg == nil {
		none, err := tx.noParkedReports(ctx)
		if err != nil || none {
			return nil, err
		}
		tx.tookReports = true
	}
	var out []domain.PendingReport
	err := inChunks(refs, func(chunk []any) error {
		rs, err := pendingReports.scanAll(tx.query(ctx, `DELETE FROM pending_reports WHERE provider = $1 AND ref IN (`+
			tx.s.placeholders(2, len(chunk))+`) RETURNING `+pendingReports.list,
			append([]any{provider}, chunk...)...))
		if err != nil {
			return fmt.Errorf("take pending reports: %w", err)
		}
		out = append(out, rs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ReportedAt.Before(out[j].ReportedAt) })
	return out, nil
}

// KnownParkedRefs lists, by provider, up to limit ids of parked reports
// that a message or a message part now carries. Normally the transaction
// that records an id takes the reports parked for it; but on PostgreSQL a
// receipt's transaction and its submission answer's run side by side, and
// when each looks before the other commits, the receipt is parked for an
// id that is recorded an instant later, and nobody takes it.
func (s *Store) KnownParkedRefs(ctx context.Context, limit int) (map[string][]string, error) {
	out := map[string][]string{}
	var provider, ref string
	err := rowsOf(s.rquery(ctx, `SELECT DISTINCT p.provider, p.ref FROM pending_reports p
		WHERE EXISTS (SELECT 1 FROM messages m WHERE m.provider = p.provider AND m.provider_ref = p.ref AND m.provider_ref <> '')
			OR EXISTS (SELECT 1 FROM message_parts mp WHERE mp.provider = p.provider AND mp.ref = p.ref)
		LIMIT $1`, limit)).scan([]any{&provider, &ref}, func() { out[provider] = append(out[provider], ref) })
	if err != nil {
		return nil, fmt.Errorf("known parked refs: %w", err)
	}
	if len(out) > 0 {
		// Reports parked by another process on the same file are news
		// to this one's writer: its takes look in the table again.
		s.parked.mayHold()
	}
	return out, nil
}

// parkedState is what a SQLite node's writer knows of pending_reports:
// usually that it is empty, which spares the take of every hand-over's
// record a statement (most providers' receipts come after the answer, or
// ride with its record). PostgreSQL's nodes park reports for each other,
// so there every take looks.
//
// The table is known empty when a check found it so and nothing may have
// been parked since: every ParkReports, and every KnownParkedRefs that
// found rows (another process's, on the same file), moves gen before
// anything is written. A check runs at most every parkedCheckEvery, in a
// write transaction that has taken no report yet, so what it sees empty
// is the committed table (its own transaction parked nothing, or gen
// moved) and stays empty whatever becomes of that transaction. A report
// another process parks while this one believes the table empty waits
// for the sweeper's Unpark (every second), which finds it through
// KnownParkedRefs.
type parkedState struct {
	mu        sync.Mutex
	gen       uint64
	empty     bool // the table was seen empty at emptyGen
	emptyGen  uint64
	checkedAt time.Time
}

// parkedCheckEvery bounds how often a writer that does not know the table
// empty looks whether it is.
const parkedCheckEvery = time.Second

// mayHold records that reports may have been parked.
func (p *parkedState) mayHold() {
	p.mu.Lock()
	p.gen++
	p.mu.Unlock()
}

// noParkedReports tells whether pending_reports is known empty (SQLite),
// checking it when the last check is old enough.
func (tx *Tx) noParkedReports(ctx context.Context) (bool, error) {
	p, now := &tx.s.parked, tx.s.now()
	p.mu.Lock()
	gen := p.gen
	if p.empty && p.emptyGen == gen {
		p.mu.Unlock()
		return true, nil
	}
	check := !tx.tookReports && (p.checkedAt.IsZero() || now.Sub(p.checkedAt) >= parkedCheckEvery || now.Before(p.checkedAt))
	if check {
		p.checkedAt = now
	}
	p.mu.Unlock()
	if !check {
		return false, nil
	}
	var held bool
	if err := tx.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pending_reports)`).Scan(&held); err != nil {
		return false, fmt.Errorf("parked reports: %w", err)
	}
	if held {
		return false, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen != gen {
		return false, nil // parked meanwhile
	}
	p.empty, p.emptyGen = true, gen
	return true, nil
}

// DeletePendingReportsBefore drops parked reports received before t: their
// submission's answer never came.
func (s *Store) DeletePendingReportsBefore(ctx context.Context, t time.Time) (int64, error) {
	res, err := s.wexec(ctx, `DELETE FROM pending_reports WHERE received_at < $1`, ms(t))
	if err != nil {
		return 0, fmt.Errorf("delete pending reports: %w", err)
	}
	return res.RowsAffected()
}

// UnreportedParts lists, by message, the parts of messages that no receipt
// has named yet (the ids to ask a provider about).
func (s *Store) UnreportedParts(ctx context.Context, provider string, messageIDs []string) (map[string][]domain.Part, error) {
	out := map[string][]domain.Part{}
	err := inChunks(messageIDs, func(chunk []any) error {
		ps, err := parts.scanAll(s.rquery(ctx, `SELECT `+parts.list+` FROM message_parts WHERE message_id IN (`+
			s.placeholders(2, len(chunk))+`) AND provider = $1 AND status = ''`,
			append([]any{provider}, chunk...)...))
		if err != nil {
			return fmt.Errorf("unreported parts: %w", err)
		}
		for _, p := range ps {
			out[p.MessageID] = append(out[p.MessageID], p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
