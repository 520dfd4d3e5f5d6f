package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

const (
	pgRequests = 600 // send requests in all
	pgSenders  = 8
	pgEvery    = 200 // requests accepted before each restart
	// pgFelt is how many failed attempts the integrators must have seen
	// before the database comes back, so that the outage happened under
	// load and not between two requests.
	pgFelt = 16
	// pgDown is how long the database stays away at least: longer than
	// the retries of a webhook outcome's write, the simulator's report
	// delay and a dispatch lease, so that each of them meets the outage.
	pgDown = 3 * time.Second
)

// TestPostgresRestart runs a node on a private PostgreSQL cluster and,
// under a sustained load of live sends and webhooks, stops the cluster
// twice: once cleanly ("fast": every session is ended) and once as a
// crash ("immediate": the next start replays the write-ahead log). Each
// time the database stays down for 3 s and until the integrators have felt
// it, then comes back on the same address. The node is never restarted. While the
// database is down /readyz answers 503 and sends fail with 500, which the
// integrators retry with their Idempotency-Key; once it is back the node
// reconnects by itself. Afterwards every check of the kill test holds:
// nothing lost, nothing doubled, every event delivered, the ledger
// balanced.
func TestPostgresRestart(t *testing.T) {
	needBinary(t)
	pg := startPGCluster(t)
	ctx := t.Context()
	dsn := pg.DSN()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d; private cluster on port %d", seed, pg.port)
	acc := bootstrap(ctx, t, dsn, "live")
	rcv := newReceiver(t, acc.WebhookSecret, receiverRefuses, 3, seed)
	reqs := loadRequests(seed, pgRequests, "database restart", rcv.URL)
	srv := startDev(ctx, t, dsn, t.TempDir(), crashServeEnv...)
	to := newTarget(newAPIClient(srv.URL, acc.Key))
	book := newSendBook()
	in := startIntegrators(ctx, reqs, to, book, loadOptions{senders: pgSenders, keyBase: fmt.Sprintf("pg-%d", seed)})

	var back time.Time
	for i, mode := range []string{"fast", "immediate"} {
		if !in.waitDone(ctx, int64((i+1)*pgEvery), 90*time.Second) {
			_, summary := in.report()
			t.Fatalf("before stopping PostgreSQL (%s): %s", mode, summary)
		}
		failed := in.noAnswer.Load() + in.serverErr.Load()
		pg.stop(mode)
		stopped := time.Now()
		code, body := readyz(ctx, t, to.get())
		if code != http.StatusServiceUnavailable {
			t.Errorf("/readyz with the database down: %d %v, want 503", code, body)
		}
		felt := waitFor(ctx, 30*time.Second, func() bool {
			return in.noAnswer.Load()+in.serverErr.Load() >= failed+pgFelt && time.Since(stopped) >= pgDown
		})
		pg.start()
		back = time.Now()
		accepted := in.done.Load()
		if !in.waitDone(ctx, accepted+1, 60*time.Second) && in.done.Load() < int64(len(reqs)) {
			t.Fatalf("no send accepted within 60 s of PostgreSQL's return (%s)", mode)
		}
		t.Logf("PostgreSQL stopped (%s) for %v (integrators felt it: %v, %d failed attempts); the next send was accepted %v after it was back",
			mode, back.Sub(stopped).Round(10*time.Millisecond), felt, in.noAnswer.Load()+in.serverErr.Load()-failed,
			time.Since(back).Round(10*time.Millisecond))
		select {
		case <-srv.exited:
			t.Fatalf("msgsvc exited when PostgreSQL went away (%v):\n%s", srv.waitErr, srv.logs.tail(40))
		default:
		}
	}
	if !in.wait(2 * time.Minute) {
		t.Fatal("the integrators were still sending 2 minutes after PostgreSQL came back")
	}
	problems, summary := in.report()
	report(t, problems)
	t.Log(summary)

	audit(ctx, t, dsn, acc, to.get(), rcv, book, back)
	if code, body := readyz(ctx, t, to.get()); code != http.StatusOK || body["storage"] != "ok" {
		t.Errorf("/readyz after the restarts: %d %v", code, body)
	}
	if code := srv.Stop(t, 20*time.Second); code != 0 {
		t.Errorf("msgsvc exited %d after SIGTERM, want 0:\n%s", code, srv.logs.tail(40))
	}
}

// readyz reads a node's /readyz.
func readyz(ctx context.Context, t *testing.T, api *apiClient) (int, map[string]any) {
	t.Helper()
	code, raw, err := api.do(ctx, http.MethodGet, "/readyz", nil)
	if err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("/readyz answered %d %s", code, raw)
	}
	return code, body
}

// waitFor polls cond every 20 ms until it holds or timeout passes, and
// reports whether it held.
func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}
