package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// pgProbe measures a PostgreSQL server that runs on this machine for
// msgsvc bench: the CPU of the backends serving the nodes (found by their
// application name) and of the server's own writer processes, and the
// nodes' sessions waiting on locks.
type pgProbe struct {
	admin  *sql.DB
	app    string
	schema string
	clock  func() time.Time
	sleep  func(context.Context, time.Duration)
}

// localPostgres returns a probe when the server's processes are visible
// in this machine's /proc (same host, same process namespace), else nil:
// a remote server's CPU cannot be read from here.
func localPostgres(ctx context.Context, admin *sql.DB, app, schema string) DBProbe {
	var pid int
	if err := admin.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		return nil
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil || !strings.HasPrefix(string(comm), "postgres") {
		return nil
	}
	return &pgProbe{admin: admin, app: app, schema: schema, clock: time.Now, sleep: sleep}
}

// Processes implements DBProbe. The writer processes (WAL writer,
// background writer, checkpointer) serve every client of the server; on
// a machine where the benchmark is the main load, their work is its.
func (p *pgProbe) Processes(ctx context.Context) ([]int, error) {
	rows, err := p.admin.QueryContext(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1
		OR backend_type IN ('walwriter', 'background writer', 'checkpointer', 'autovacuum worker')`, p.app)
	if err != nil {
		return nil, fmt.Errorf("list database processes: %w", err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return nil, fmt.Errorf("list database processes: %w", err)
		}
		out = append(out, pid)
	}
	return out, rows.Err()
}

// LockWaits implements DBProbe.
func (p *pgProbe) LockWaits(ctx context.Context) (int, error) {
	var n int
	err := p.admin.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = $1
		AND wait_event_type = 'Lock'`, p.app).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count lock waits: %w", err)
	}
	return n, nil
}

// Writes implements WriteCounter: the rows written to the run's
// schema, from the server's table statistics, and the server's WAL
// position. A backend reports its statistics at most once a second while
// busy and about ten seconds after it goes idle, so the counts are read
// until they have held still for longer than that (at most 45 s).
func (p *pgProbe) Writes(ctx context.Context) (Writes, error) {
	const still, most = 11 * time.Second, 45 * time.Second
	start := p.clock()
	last, err := p.writes(ctx)
	if err != nil {
		return last, err
	}
	for since := p.clock(); p.clock().Sub(since) < still && p.clock().Sub(start) < most; {
		if p.sleep(ctx, time.Second); ctx.Err() != nil {
			return last, ctx.Err()
		}
		now, err := p.writes(ctx)
		if err != nil {
			return last, err
		}
		if !sameRows(now.Rows, last.Rows) {
			since = p.clock()
		}
		last = now
	}
	return last, nil
}

func (p *pgProbe) writes(ctx context.Context) (Writes, error) {
	w := Writes{Rows: map[string]int64{}}
	rows, err := p.admin.QueryContext(ctx, `SELECT relname, n_tup_ins + n_tup_upd + n_tup_del
		FROM pg_stat_user_tables WHERE schemaname = $1`, p.schema)
	if err != nil {
		return w, fmt.Errorf("table statistics: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var table string
		var n int64
		if err := rows.Scan(&table, &n); err != nil {
			return w, fmt.Errorf("table statistics: %w", err)
		}
		w.Rows[table] = n
	}
	if err := rows.Err(); err != nil {
		return w, fmt.Errorf("table statistics: %w", err)
	}
	err = p.admin.QueryRowContext(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint`).Scan(&w.WALBytes)
	if err != nil {
		return w, fmt.Errorf("WAL position: %w", err)
	}
	return w, nil
}

func sameRows(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
