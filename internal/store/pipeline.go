package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/msgsvc/msgsvc/internal/batch"
)

// On PostgreSQL every statement is a network round trip, and a grouped
// write transaction used to cost one for BEGIN, one per statement, two per
// savepoint and one for COMMIT. A pipeline sends them in pgx batches
// instead: control statements (BEGIN, SAVEPOINT, RELEASE) and writes whose
// result nobody reads (the multi-row inserts and updates of the hot path,
// Tx.execLater) wait in pending and travel with the next statement whose
// result is needed, or with COMMIT. A group of sends, reports and webhook
// outcomes then costs a few round trips instead of dozens.
//
// A queued write that fails surfaces only when its batch is sent, perhaps
// while another function of the group runs, so its error cannot be pinned
// on its own function. The pipeline then gives up the transaction and the
// group runs again with every write sent at once (careful), which
// attributes each error to its function as before. Queued writes are
// inserts of fresh ids and updates by primary key: they do not fail but
// for conflicts, which re-run the group anyway.
type pipeline struct {
	conn    *pgx.Conn
	careful bool
	pending []queued
	sent    int   // statements sent so far (pending indexes continue from here)
	failed  error // a queued statement failed: the transaction is lost
}

type queued struct {
	sql  string
	args []any
}

// errPipeline marks a transaction lost to a queued statement's failure.
type errPipeline struct{ err error }

func (e errPipeline) Error() string { return "pipelined statement: " + e.err.Error() }
func (e errPipeline) Unwrap() error { return e.err }

func (p *pipeline) queue(query string, args ...any) {
	p.pending = append(p.pending, queued{sql: query, args: args})
}

// mark is the position of the next queued statement.
func (p *pipeline) mark() int { return p.sent + len(p.pending) }

// send sends the pending statements, then query when it is not empty, in
// one round trip. The pending ones are read here; the caller reads
// query's result from the returned batch and closes it.
func (p *pipeline) send(ctx context.Context, query string, args []any) (pgx.BatchResults, error) {
	if p.failed != nil {
		return nil, p.failed
	}
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(p.pending)+1)}
	for _, q := range p.pending {
		b.Queue(q.sql, q.args...)
	}
	n := len(p.pending)
	p.sent += n
	p.pending = p.pending[:0]
	if query != "" {
		b.Queue(query, args...)
		p.sent++
	}
	br := p.conn.SendBatch(ctx, b)
	for i := 0; i < n; i++ {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			p.failed = errPipeline{err}
			return nil, p.failed
		}
	}
	return br, nil
}

func (p *pipeline) exec(ctx context.Context, query string, args []any) (sql.Result, error) {
	br, err := p.send(ctx, query, args)
	if err != nil {
		return nil, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return pgResult(tag), nil
}

// execLater queues a write whose result nobody reads.
func (p *pipeline) execLater(ctx context.Context, query string, args []any) error {
	if p.careful {
		_, err := p.exec(ctx, query, args)
		return err
	}
	p.queue(query, args...)
	return nil
}

func (p *pipeline) query(ctx context.Context, query string, args []any) (rowsScanner, error) {
	br, err := p.send(ctx, query, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (p *pipeline) queryRow(ctx context.Context, query string, args []any) rowScanner {
	rows, err := p.query(ctx, query, args)
	return &firstRow{rows: rows, err: err}
}

// undo takes back the writes of a function that failed, since the
// savepoint queued at mark: if the savepoint was never sent, nothing of
// the function was, and its statements are simply dropped (it reports
// false: no savepoint to release); otherwise the function's unsent
// statements are dropped and the savepoint rolled back at once: a failed
// statement leaves the transaction refusing everything, even the
// preparation of the next batch's new statements, until then.
func (p *pipeline) undo(ctx context.Context, mark int) (bool, error) {
	if mark >= p.sent {
		p.pending = p.pending[:mark-p.sent]
		return false, nil
	}
	p.pending = p.pending[:0]
	_, err := p.exec(ctx, "ROLLBACK TO SAVEPOINT w", nil)
	return true, err
}

// commit sends what is pending with COMMIT.
func (p *pipeline) commit(ctx context.Context) error {
	br, err := p.send(ctx, "COMMIT", nil)
	if err != nil {
		return err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if tag.String() != "COMMIT" {
		return errors.New("commit: the transaction was rolled back")
	}
	return nil
}

// rollback ends the transaction without its writes.
func (p *pipeline) rollback(ctx context.Context) {
	p.pending = p.pending[:0]
	if p.sent == 0 {
		return // not even BEGIN went out
	}
	p.failed = nil
	if br, err := p.send(ctx, "ROLLBACK", nil); err == nil {
		_, _ = br.Exec()
		_ = br.Close()
	}
}

// pgWriteOnce runs a group of write functions in one transaction on a
// connection of its own, pipelined (see pipeline).
func (s *Store) pgWriteOnce(ctx context.Context, fns []func(tx *Tx) error, careful bool) ([]error, error) {
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("connection: %w", err)
	}
	defer conn.Close()
	var results []error
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres: unexpected driver connection %T", dc)
		}
		var err error
		results, err = s.pgGroup(ctx, &pipeline{conn: c.Conn(), careful: careful}, fns)
		return err
	})
	return results, err
}

func (s *Store) pgGroup(ctx context.Context, p *pipeline, fns []func(tx *Tx) error) ([]error, error) {
	begun := s.now()
	p.queue("BEGIN")
	tx := &Tx{s: s, pg: p}
	if s.holder != "" {
		// A write loop runs one transaction at a time: its share of a
		// balance is never locked by another of this node's transactions.
		tx.holder = s.holder + "/" + strconv.Itoa(batch.Worker(ctx))
	}
	results := make([]error, len(fns))
	grouped := len(fns) > 1
	for i, fn := range fns {
		mark := p.mark()
		if grouped {
			p.queue("SAVEPOINT w")
		}
		results[i] = fn(tx)
		if p.failed != nil {
			err := p.failed
			p.rollback(ctx)
			return nil, err
		}
		if results[i] == nil {
			if grouped {
				p.queue("RELEASE SAVEPOINT w")
			}
			continue
		}
		if retryable(results[i]) || !grouped {
			p.rollback(ctx)
			if retryable(results[i]) {
				return nil, results[i]
			}
			return results, nil
		}
		undone, err := p.undo(ctx, mark)
		if err != nil {
			p.rollback(ctx)
			return nil, fmt.Errorf("rollback to savepoint: %w", err)
		}
		if undone {
			p.queue("RELEASE SAVEPOINT w")
		}
	}
	executed := s.now()
	if err := p.commit(ctx); err != nil {
		p.rollback(ctx)
		return nil, err
	}
	s.txTimes.add(executed.Sub(begun), s.now().Sub(executed))
	s.offerAuth(tx, results)
	return results, nil
}

// pgResult is a command's outcome as database/sql reports it.
type pgResult pgconn.CommandTag

func (r pgResult) LastInsertId() (int64, error) {
	return 0, errors.New("postgres: no LastInsertId")
}

func (r pgResult) RowsAffected() (int64, error) { return pgconn.CommandTag(r).RowsAffected(), nil }

// batchRows are a query's rows read from a batch, which closes with them.
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
}

func (r *batchRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.Rows.Close()
	err := r.Rows.Err()
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// firstRow is the first row of a query, as *sql.Row reads it.
type firstRow struct {
	rows rowsScanner
	err  error
}

func (r *firstRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	return r.rows.Close()
}
