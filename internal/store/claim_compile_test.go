//go:build !cgosqlite

package store

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"modernc.org/sqlite"
)

// TestClaimsAreNotCompiledPerLimit: the queues' claims bind how many rows
// they have room for, which differs from one claim to the next; a claim
// run again with another limit must use its prepared statement, not
// compile it anew (SQLite's authorizer is asked about a statement's
// writes each time it compiles it, and only then).
func TestClaimsAreNotCompiledPerLimit(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "msgsvc.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	compiled := map[string]*atomic.Int64{"webhook_events": {}, "messages": {}, "smpp_items": {}}
	// The authorizer goes on the connection the writes run on.
	if err := s.wr.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	err = s.wr.conn.Raw(func(dc any) error {
		return dc.(sqlite.AuthorizerRegisterer).RegisterAuthorizer(func(action sqlite.AuthorizerActionCode, table, _, _, _ string) sqlite.AuthorizerReturnCode {
			if n := compiled[table]; n != nil && action == sqlite.AuthUpdate {
				n.Add(1)
			}
			return sqlite.AuthorizerOK
		})
	})
	s.wr.release()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	claims := map[string]func(limit int) error{
		"webhook_events": func(limit int) error {
			_, err := s.ClaimEvents(ctx, "node-a", now, time.Minute, limit)
			return err
		},
		"messages": func(limit int) error {
			_, err := s.ClaimDue(ctx, "node-a", now, time.Minute, limit)
			return err
		},
		"smpp_items": func(limit int) error {
			_, err := s.ClaimSMPPItems(ctx, map[string]int{"smu_1": limit}, nil, "node-a", now, time.Minute, limit)
			return err
		},
	}
	for table, claim := range claims {
		// The first runs compile the statement and prepare it.
		for _, limit := range []int{5, 5} {
			if err := claim(limit); err != nil {
				t.Fatal(err)
			}
		}
		if compiled[table].Load() == 0 {
			t.Fatalf("%s: the authorizer never saw the claim compiled", table)
		}
		compiled[table].Store(0)
		for _, limit := range []int{7, 64, 1, 256} {
			if err := claim(limit); err != nil {
				t.Fatal(err)
			}
		}
		if n := compiled[table].Load(); n != 0 {
			t.Errorf("%s: the claim was compiled again for new limits (%d writes authorized)", table, n)
		}
	}
}
