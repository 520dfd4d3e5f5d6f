package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// checkpointGap is the least time between two checkpoints of the SQLite
// log: the pages a busy writer changes again and again are copied once
// per checkpoint, so checkpoints in a row would copy them more often
// than SQLite's own (every thousand pages of log, about as often at the
// rates measured).
const checkpointGap = 100 * time.Millisecond

// checkpointer copies the SQLite write-ahead log back into the database
// on a connection of its own. SQLite checkpoints in the connection whose
// commit crossed the log's threshold, so the writer, between two
// transactions, used to stop to copy a thousand pages and to sync the
// log and the database file twice: every write of the node waited for
// it. The writer's connection does not checkpoint (wal_autocheckpoint
// 0); after a commit it kicks this loop, which runs a passive checkpoint
// (it waits for no reader and no writer, and the writer restarts the log
// from its start once a checkpoint has copied all of it) at most every
// checkpointGap, beside the writer.
type checkpointer struct {
	db   *sql.DB
	kick chan struct{}
	quit chan struct{}
	done chan struct{}
}

func startCheckpointer(db *sql.DB) *checkpointer {
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// committed tells the loop that the log grew; it never blocks the writer.
func (c *checkpointer) committed() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	for {
		select {
		case <-c.kick:
		case <-c.quit:
			return
		}
		// A failed checkpoint leaves the log longer, and the next kick
		// tries again; the writer's commits do not depend on it.
		_ = c.checkpoint(context.Background())
		select {
		case <-time.After(checkpointGap):
		case <-c.quit:
			return
		}
	}
}

func (c *checkpointer) checkpoint(ctx context.Context) error {
	var busy, log, done int
	if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// stop ends the loop and closes its connection.
func (c *checkpointer) stop() error {
	close(c.quit)
	<-c.done
	return c.db.Close()
}
