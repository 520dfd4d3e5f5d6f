package app

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"

	"msgsvc/internal/bench"
)

// pgProbe measures a PostgreSQL server that runs on this machine for
// msgsvc bench: the CPU of the backends serving the nodes (found by their
// application name) and of the server's own writer processes, and the
// nodes' sessions waiting on locks.
type pgProbe struct {
	admin *sql.DB
	app   string
}

// localPostgres returns a probe when the server's processes are visible
// in this machine's /proc (same host, same process namespace), else nil:
// a remote server's CPU cannot be read from here.
func localPostgres(ctx context.Context, admin *sql.DB, app string) bench.DBProbe {
	var pid int
	if err := admin.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		return nil
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil || !strings.HasPrefix(string(comm), "postgres") {
		return nil
	}
	return &pgProbe{admin: admin, app: app}
}

// Processes implements bench.DBProbe. The writer processes (WAL writer,
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

// LockWaits implements bench.DBProbe.
func (p *pgProbe) LockWaits(ctx context.Context) (int, error) {
	var n int
	err := p.admin.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = $1
		AND wait_event_type = 'Lock'`, p.app).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count lock waits: %w", err)
	}
	return n, nil
}
