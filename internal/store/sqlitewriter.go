package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"
)

// SQLite's writes run on one connection that the store takes from the
// writer pool once and keeps, issuing BEGIN IMMEDIATE, COMMIT and ROLLBACK
// itself, with its statements prepared on that connection.
//
// A database/sql transaction cost the writer more than its statements at
// small groups: BeginTx starts a goroutine to watch the transaction's
// context, every query run in a transaction starts another to watch it
// again, and each prepared statement had to be re-bound to the
// transaction (Tx.StmtContext: an allocation, a search of the statement's
// connections and two locks) before every use. A held connection needs
// none of that: the statements run straight on it, with the group's
// context, which is never cancelled (a queued write runs to its end
// whatever its caller does).
//
// Holding the connection also means a statement first met inside a
// transaction is prepared at once, on the connection the transaction runs
// on, rather than run unprepared and prepared after the commit.
//
// The statements run on the driver's connection itself (Conn.Raw),
// prepared there, with their arguments converted into a slice the writer
// keeps, and a query's rows read into one slice and scanned here
// (liteRows): database/sql converted each statement's arguments into a
// slice of its own, 7 % of the bytes a node allocated a message, and
// locked, checked and watched its way to the driver around every
// statement and every row.
type sqliteWriter struct {
	db *sql.DB
	// turn has room for one token: whoever put one in holds the
	// connection, until it takes the token back out.
	turn  chan struct{}
	conn  *sql.Conn             // nil until first used, and after a failure
	stmts map[string]*writeStmt // by the query as written ($N placeholders)
	// args is the arguments of the statement being run, converted for
	// the driver; reused by every statement (the holder of the turn runs
	// one at a time).
	args []driver.NamedValue
	// rows is where a query's rows are read before they are copied out
	// (liteRows.read), reused the same way.
	rows []driver.Value
}

// writeStmt is a statement prepared on the writer's connection (by the
// driver), with the order its "?" take the query's arguments in (see
// rewrite).
type writeStmt struct {
	ds    driver.Stmt
	sql   string
	order []int
	kept  bool // in stmts: prepared on first use and closed with the connection
}

func newSQLiteWriter(db *sql.DB) *sqliteWriter {
	return &sqliteWriter{db: db, turn: make(chan struct{}, 1)}
}

// acquire waits for the connection (or for ctx to end) and opens it when
// it is not open yet. The caller must release it.
func (w *sqliteWriter) acquire(ctx context.Context) error {
	select {
	case w.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := w.open(ctx); err != nil {
		<-w.turn
		return err
	}
	return nil
}

// open takes a connection from the pool unless one is held; the caller
// holds the turn.
func (w *sqliteWriter) open(ctx context.Context) error {
	if w.conn != nil {
		return nil
	}
	c, err := w.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("writer connection: %w", err)
	}
	w.conn, w.stmts = c, map[string]*writeStmt{}
	return nil
}

// again runs op, and runs it once more on a fresh connection if the held
// one turned out to be gone: database/sql reports that before anything
// was run (ErrConnDone, ErrBadConn), so nothing runs twice.
func (w *sqliteWriter) again(ctx context.Context, op func() error) error {
	err := op()
	if !lost(err) {
		return err
	}
	w.discard(err)
	if err := w.open(ctx); err != nil {
		return err
	}
	return op()
}

func (w *sqliteWriter) release() { <-w.turn }

// discard closes the connection, whatever state it is in, so that the
// next holder opens a fresh one: SQLite rolls back a transaction left
// open on a closed connection. It is what a failed COMMIT or ROLLBACK
// and a lost connection come to (err, the failure), so that a
// transaction never outlives its group.
func (w *sqliteWriter) discard(err error) {
	if w.conn == nil {
		return
	}
	// database/sql does not close the statements of a Conn whose driver
	// connection it closed, and finalizing them after the driver
	// connection is gone crashes the driver: they go with it.
	if !lost(err) {
		w.closeStmts()
	}
	// ErrBadConn from Raw has the pool close the driver connection
	// rather than take it back.
	_ = w.conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = w.conn.Close()
	w.conn, w.stmts = nil, nil
}

// close releases the connection for good (Store.Close).
func (w *sqliteWriter) close() {
	w.turn <- struct{}{}
	if w.conn != nil {
		w.closeStmts()
		_ = w.conn.Close()
		w.conn, w.stmts = nil, nil
	}
	<-w.turn
}

// closeStmts closes the statements prepared on the connection, which is
// still there.
func (w *sqliteWriter) closeStmts() {
	for _, ws := range w.stmts {
		if ws.ds != nil {
			_ = w.conn.Raw(func(any) error { return ws.ds.Close() })
		}
	}
}

// lost: the connection is gone; the next holder opens another.
func lost(err error) bool {
	return errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn)
}

// stmt finds query's statement, rewritten for SQLite; the caller holds
// the connection. Past maxCachedStmts a statement is not kept (and runs
// unprepared).
func (w *sqliteWriter) stmt(query string) *writeStmt {
	if ws, ok := w.stmts[query]; ok {
		return ws
	}
	r := rewrite(query)
	ws := &writeStmt{sql: r.sql, order: r.order}
	if len(w.stmts) < maxCachedStmts {
		ws.kept = true
		w.stmts[query] = ws
	}
	return ws
}

// exec runs a statement on the driver's connection; the caller holds it.
func (w *sqliteWriter) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ws := w.stmt(query)
	var res driver.Result
	err := w.conn.Raw(func(dc any) error {
		nv, err := w.bind(ctx, dc, ws, args)
		if err != nil {
			return err
		}
		defer clear(nv) // hold on to no argument past its statement
		if ws.ds == nil {
			e, ok := dc.(driver.ExecerContext)
			if !ok {
				return errors.New("the SQLite driver cannot run a statement unprepared")
			}
			res, err = e.ExecContext(ctx, ws.sql, nv)
			return err
		}
		x, ok := ws.ds.(driver.StmtExecContext)
		if !ok {
			return errors.New("the SQLite driver's statement cannot run with a context")
		}
		res, err = x.ExecContext(ctx, nv)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// query runs a query on the driver's connection and reads all its rows
// before it returns (the driver's rows may be read only while the
// connection is lent, inside Raw); the caller holds the connection. The
// writer's queries read a group's rows, a few hundred at most.
func (w *sqliteWriter) query(ctx context.Context, query string, args ...any) (rowsScanner, error) {
	ws := w.stmt(query)
	out := &liteRows{}
	err := w.conn.Raw(func(dc any) error {
		nv, err := w.bind(ctx, dc, ws, args)
		if err != nil {
			return err
		}
		defer clear(nv)
		var rows driver.Rows
		if ws.ds == nil {
			q, ok := dc.(driver.QueryerContext)
			if !ok {
				return errors.New("the SQLite driver cannot run a query unprepared")
			}
			rows, err = q.QueryContext(ctx, ws.sql, nv)
		} else {
			q, ok := ws.ds.(driver.StmtQueryContext)
			if !ok {
				return errors.New("the SQLite driver's statement cannot query with a context")
			}
			rows, err = q.QueryContext(ctx, nv)
		}
		if err != nil {
			return err
		}
		return out.read(rows, &w.rows)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (w *sqliteWriter) queryRow(ctx context.Context, query string, args ...any) rowScanner {
	rows, err := w.query(ctx, query, args...)
	return &firstRow{rows: rows, err: err}
}

// bind prepares ws on the driver's connection dc when it is kept and not
// prepared yet, and converts args for it into the writer's slice.
func (w *sqliteWriter) bind(ctx context.Context, dc any, ws *writeStmt, args []any) ([]driver.NamedValue, error) {
	if ws.ds == nil && ws.kept {
		p, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return nil, errors.New("the SQLite driver cannot prepare with a context")
		}
		ds, err := p.PrepareContext(ctx, ws.sql)
		if err != nil {
			return nil, err
		}
		ws.ds = ds
	}
	nv, err := namedValues(w.args[:0], ws.order, args)
	w.args = nv
	if err != nil {
		clear(nv)
		return nil, err
	}
	return nv, nil
}

// namedValues appends to buf, for each "?" of a statement in order, the
// argument it takes (see rewrite), converted for the driver as
// database/sql converts for a driver that checks none itself: the
// driver's own types as they are, ints widened, and anything else
// through driver.DefaultParameterConverter (a driver.Valuer's value, or a
// value of a basic kind). A "?" past the arguments takes NULL, as the
// rewritten arguments had it.
func namedValues(buf []driver.NamedValue, order []int, args []any) ([]driver.NamedValue, error) {
	for i, idx := range order {
		var a any
		if idx >= 0 && idx < len(args) {
			a = plain(args[idx])
		}
		var v driver.Value
		switch a := a.(type) {
		case nil, int64, float64, bool, []byte, string, time.Time:
			v = a
		case int:
			v = int64(a)
		case sql.NullInt64:
			// As its Value would give, without the trip through the
			// converter's reflection.
			if a.Valid {
				v = a.Int64
			}
		case sql.NullString:
			if a.Valid {
				v = a.String
			}
		default:
			var err error
			if v, err = driver.DefaultParameterConverter.ConvertValue(a); err != nil {
				return buf, fmt.Errorf("sql: converting argument $%d type: %w", i+1, err)
			}
		}
		buf = append(buf, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return buf, nil
}

// begin starts a write transaction, taking the write lock at once (as
// the DSN's _txlock=immediate did for database/sql's transactions): a
// transaction that upgraded a read lock later could fail busy midway.
func (w *sqliteWriter) begin(ctx context.Context) error {
	err := w.again(ctx, func() error {
		_, err := w.exec(ctx, "BEGIN IMMEDIATE")
		return err
	})
	if lost(err) {
		w.discard(err)
	}
	return err
}

func (w *sqliteWriter) commit(ctx context.Context) error {
	if _, err := w.exec(ctx, "COMMIT"); err != nil {
		// Whether SQLite kept the transaction open depends on the error;
		// a fresh connection starts from none.
		w.discard(err)
		return err
	}
	return nil
}

func (w *sqliteWriter) rollback(ctx context.Context) {
	if _, err := w.exec(ctx, "ROLLBACK"); err != nil {
		w.discard(err)
	}
}

// run runs a single statement outside a transaction (Store.wexec).
func (w *sqliteWriter) run(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := w.acquire(ctx); err != nil {
		return nil, err
	}
	defer w.release()
	var res sql.Result
	err := w.again(ctx, func() error {
		var err error
		res, err = w.exec(ctx, query, args...)
		return err
	})
	if lost(err) {
		w.discard(err)
	}
	return res, err
}

func (w *sqliteWriter) ping(ctx context.Context) error {
	if err := w.acquire(ctx); err != nil {
		return err
	}
	defer w.release()
	err := w.conn.PingContext(ctx)
	if err != nil {
		w.discard(err)
	}
	return err
}
