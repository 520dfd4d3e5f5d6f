package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// faultsEnv enables the long fault tests (repeated kills, a database or
// Redis taken away under load). They take minutes, so the README's test
// command skips them; .ci/run sets it.
const faultsEnv = "MSGSVC_TEST_FAULTS"

func needFaults(t *testing.T) {
	t.Helper()
	if os.Getenv(faultsEnv) == "" {
		t.Skipf("long fault test: set %s=1 to run it (CI does)", faultsEnv)
	}
}

const (
	killRequests = 900 // send requests in all
	killSenders  = 8   // concurrent integrators
	killCycles   = 5   // SIGKILLs in one run
	killEvery    = 150 // requests accepted between two kills
)

// TestRepeatedKills keeps a load of live sends and webhooks going while
// the node is killed with SIGKILL again and again (five times) and
// restarted on the same database and data directory each time. The
// integrators retry every request with its Idempotency-Key until it is
// answered. Afterwards: every message in the database was answered to its
// integrator, none twice; every one is final; every event was
// acknowledged by the receiver with one stable webhook-id and recorded as
// delivered; the balance is the ledger's sum and every message is charged
// exactly its price, or nothing when it failed before a provider took it.
func TestRepeatedKills(t *testing.T) {
	needFaults(t)
	needBinary(t)
	for _, dialect := range storetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			testRepeatedKills(t, storetest.DSN(t, dialect))
		})
	}
}

func testRepeatedKills(t *testing.T, dsn string) {
	ctx := t.Context()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	acc := bootstrap(ctx, t, dsn, "live")
	rcv := newReceiver(t, acc.WebhookSecret, receiverRefuses, 3, seed)
	reqs := loadRequests(seed, killRequests, "repeated kills", rcv.URL)
	data := t.TempDir()

	srv := startDev(ctx, t, dsn, data, crashServeEnv...)
	to := newTarget(newAPIClient(srv.URL, acc.Key))
	book := newSendBook()
	began := time.Now()
	in := startIntegrators(ctx, reqs, to, book, loadOptions{senders: killSenders, keyBase: fmt.Sprintf("kills-%d", seed)})
	var down []time.Duration
	for k := 1; k <= killCycles; k++ {
		if !in.waitDone(ctx, int64(k*killEvery), 90*time.Second) {
			_, summary := in.report()
			t.Fatalf("before kill %d: %s", k, summary)
		}
		srv.Kill(t)
		killed := time.Now()
		srv = startDev(ctx, t, dsn, data, crashServeEnv...)
		to.set(newAPIClient(srv.URL, acc.Key))
		down = append(down, time.Since(killed).Round(10*time.Millisecond))
	}
	lastStart := time.Now()
	if !in.wait(2 * time.Minute) {
		t.Fatal("the integrators were still sending 2 minutes after the last restart")
	}
	problems, summary := in.report()
	report(t, problems)
	t.Logf("%d kills (down %v each) in a load of %v; %s", killCycles, down, time.Since(began).Round(100*time.Millisecond), summary)

	audit(ctx, t, dsn, acc, to.get(), rcv, book, lastStart)
	if code := srv.Stop(t, 20*time.Second); code != 0 {
		t.Errorf("msgsvc exited %d after SIGTERM, want 0:\n%s", code, srv.logs.tail(40))
	}
}

// audit runs every check of a fault test on what the run left: the
// database holds exactly the messages the integrators were told about;
// each reaches its final status and the receiver acknowledges each of its
// webhooks, under one webhook-id per event; every event is recorded as
// delivered; the ledger balances. since is when the fault ended.
func audit(ctx context.Context, t *testing.T, dsn string, acc account, api *apiClient, rcv *receiver, book *sendBook, since time.Time) {
	t.Helper()
	began := time.Now()
	defer func() { t.Logf("the audit took %v", time.Since(began).Round(100*time.Millisecond)) }()
	st := openAudit(ctx, t, dsn)
	inDB := accountMessages(ctx, t, st, acc.ID)
	checkAllKnown(t, inDB, book.messages())
	msgs := recipients(inDB)
	settled := waitSettled(ctx, t, api, rcv, msgs, recoverWithin)
	t.Logf("%d messages settled %v after the last fault ended", len(settled), time.Since(since).Round(100*time.Millisecond))
	checkOutcomes(t, rcv, msgs, settled)
	checkWebhookBodies(t, rcv)
	events := checkEventsDelivered(ctx, t, dsn, acc.ID)
	t.Logf("%d webhook events, each recorded as delivered", events)
	inDB = accountMessages(ctx, t, st, acc.ID)
	t.Logf("ledger: %v", checkLedger(ctx, t, st, acc.ID, inDB))
}
