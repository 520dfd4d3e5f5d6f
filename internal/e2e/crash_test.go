package e2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// crashServeEnv makes the service fast enough to observe end to end:
// loopback callbacks, quick simulated carrier reports and quick retries.
var crashServeEnv = []string{
	"MSGSVC_WEBHOOK_ALLOW_PRIVATE=true",
	"MSGSVC_SIMULATOR_DELAY=200ms",
	"MSGSVC_WEBHOOK_RETRY_SCHEDULE=200ms,400ms,800ms,1s,1s,1s,1s,1s,1s,1s",
	// Short leases: the restarted node takes over the dead one's claims
	// after seconds rather than the production default of a minute.
	"MSGSVC_DISPATCH_LEASE=2s",
	"MSGSVC_WEBHOOK_LEASE=6s",
}

const (
	crashRequests   = 300 // send requests in all
	crashSenders    = 8   // concurrent integrators
	crashKillAfter  = 150 // accepted requests before SIGKILL
	invalidShare    = 0.1 // recipients ending 0001 (FAILED INVALID_NUMBER)
	receiverRefuses = 0.2 // webhook attempts answered 500
	// recoverWithin bounds the wait for every accepted message to settle
	// after the restart. Work a killed node had claimed is taken over only
	// when its lease lapses (30 s for dispatch, 60 s for webhooks), so
	// this must exceed the longest lease.
	recoverWithin = 90 * time.Second
)

// TestCrashRecovery kills the service with SIGKILL in the middle of a load
// of sends and webhook deliveries, restarts it on the same database, and
// checks that nothing accepted was lost: every message the API accepted
// reaches its final status, and the integrator's endpoint acknowledges a
// correctly signed webhook carrying it.
func TestCrashRecovery(t *testing.T) {
	needBinary(t)
	for _, dialect := range storetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			testCrashRecovery(t, storetest.DSN(t, dialect), crashServeEnv, recoverWithin)
		})
	}
}

// TestRestartTakesBackItsLeases is the crash test with production-length
// leases (30 s and a minute): the restarted node has the dead one's
// identity (DATA/node-id) and takes back its claims at once, so every
// message settles well before a lease could have run out.
func TestRestartTakesBackItsLeases(t *testing.T) {
	needBinary(t)
	env := append(append([]string(nil), crashServeEnv...), "MSGSVC_DISPATCH_LEASE=30s", "MSGSVC_WEBHOOK_LEASE=60s")
	testCrashRecovery(t, storetest.DSN(t, "sqlite"), env, 25*time.Second)
}

func testCrashRecovery(t *testing.T, dsn string, serveEnv []string, within time.Duration) {
	ctx := t.Context()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	acc := bootstrap(ctx, t, dsn, "test")
	rcv := newReceiver(t, acc.WebhookSecret, receiverRefuses, 3, seed)
	reqs := crashRequestsFor(seed, rcv.URL)
	book := newSendBook()
	data := t.TempDir()

	first := startServer(ctx, t, dsn, data, serveEnv...)
	leftover := sendUntilKill(ctx, t, first, acc.Key, reqs, book)
	accepted, unknown := book.counts()
	t.Logf("killed pid %d after %d accepted requests (%d messages); %d requests had no answer; %d not yet sent",
		first.cmd.Process.Pid, accepted, len(book.messages()), unknown, len(leftover))
	if accepted < crashKillAfter {
		t.Fatalf("only %d requests were accepted before the kill", accepted)
	}

	restarted := time.Now()
	second := startServer(ctx, t, dsn, data, serveEnv...)
	api := newAPIClient(second.URL, acc.Key)
	defer api.close()
	sendAll(ctx, t, api, leftover, reqs, book)

	msgs := book.messages()
	settled := waitSettled(ctx, t, api, rcv, msgs, within)
	t.Logf("%d accepted messages settled %v after the restart", len(settled), time.Since(restarted).Round(100*time.Millisecond))

	checkOutcomes(t, rcv, msgs, settled)

	if code := second.Stop(t, 20*time.Second); code != 0 {
		t.Errorf("msgsvc exited %d after SIGTERM, want 0:\n%s", code, second.logs.tail(40))
	}
}

// crashRequestsFor builds the sends: 1 to 3 distinct recipients each, some
// ending 0001, the others ending 0006-9999 (plain SENT then DELIVERED).
// Single recipients use "to", the rest "recipients".
func crashRequestsFor(seed uint64, callback string) []sendRequest {
	return loadRequests(seed, crashRequests, "crash test", callback)
}

// loadRequests builds n sends as crashRequestsFor describes, their text
// numbered after label.
func loadRequests(seed uint64, n int, label, callback string) []sendRequest {
	rng := rand.New(rand.NewPCG(seed, 1))
	reqs := make([]sendRequest, n)
	for i := range reqs {
		var to []string
		for n := 1 + rng.IntN(3); len(to) < n; {
			num := fmt.Sprintf("551199999%04d", 6+rng.IntN(9994))
			if rng.Float64() < invalidShare {
				num = "5511999990001"
			}
			if !slices.Contains(to, num) {
				to = append(to, num)
			}
		}
		r := sendRequest{Message: fmt.Sprintf("%s %d", label, i), Type: "SMS", CallbackURL: callback}
		if len(to) == 1 {
			r.To = to[0]
		} else {
			r.Recipients = to
		}
		reqs[i] = r
	}
	return reqs
}

// sendBook records what the API accepted.
type sendBook struct {
	mu       sync.Mutex
	accepted int               // 202 answers
	unknown  int               // requests with no answer
	to       map[string]string // messageId -> recipient, of accepted sends
}

func newSendBook() *sendBook { return &sendBook{to: map[string]string{}} }

// accept records a 202 and returns how many requests were accepted so far.
func (b *sendBook) accept(r sendResponse) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.accepted++
	for _, m := range r.Messages {
		b.to[m.MessageID] = m.To
	}
	return b.accepted
}

func (b *sendBook) lost() {
	b.mu.Lock()
	b.unknown++
	b.mu.Unlock()
}

func (b *sendBook) counts() (accepted, unknown int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.accepted, b.unknown
}

func (b *sendBook) messages() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]string, len(b.to))
	for k, v := range b.to {
		out[k] = v
	}
	return out
}

// checkAccepted validates a 202 answer against its request.
func checkAccepted(r sendRequest, resp sendResponse) error {
	want := r.Recipients
	if r.To != "" {
		want = []string{r.To}
	}
	if resp.CampaignID == "" || len(resp.Messages) != len(want) {
		return fmt.Errorf("202 for %d recipients has campaign %q and %d messages", len(want), resp.CampaignID, len(resp.Messages))
	}
	for _, m := range resp.Messages {
		if m.MessageID == "" || !slices.Contains(want, m.To) {
			return fmt.Errorf("202 lists message %q to %q, not one of %v", m.MessageID, m.To, want)
		}
	}
	return nil
}

// sendUntilKill sends reqs concurrently to srv and SIGKILLs it once
// crashKillAfter requests were accepted, with more in flight. It returns
// the indexes of the requests it did not get to send.
func sendUntilKill(ctx context.Context, t *testing.T, srv *server, key string, reqs []sendRequest, book *sendBook) []int {
	t.Helper()
	api := newAPIClient(srv.URL, key)
	defer api.close()
	queue := make(chan int, len(reqs))
	for i := range reqs {
		queue <- i
	}
	close(queue)

	var (
		killing  atomic.Bool // set just before SIGKILL: failures after it are expected
		killNow  = make(chan struct{})
		trigger  sync.Once
		mu       sync.Mutex
		leftover []int
		problems []string
		wg       sync.WaitGroup
	)
	for range crashSenders {
		wg.Go(func() {
			for i := range queue {
				if killing.Load() {
					mu.Lock()
					leftover = append(leftover, i)
					mu.Unlock()
					continue
				}
				code, resp, raw, err := api.send(ctx, reqs[i])
				var problem string
				switch {
				case err != nil:
					// No complete answer: the outcome is unknown, which
					// only the kill excuses.
					book.lost()
					if !killing.Load() {
						problem = fmt.Sprintf("request %d before the kill: %v", i, err)
					}
				case code != http.StatusAccepted:
					problem = fmt.Sprintf("request %d: %d %s", i, code, raw)
				default:
					if err := checkAccepted(reqs[i], resp); err != nil {
						problem = fmt.Sprintf("request %d: %v", i, err)
					}
					if book.accept(resp) == crashKillAfter {
						trigger.Do(func() { close(killNow) })
					}
				}
				if problem != "" {
					mu.Lock()
					problems = append(problems, problem)
					mu.Unlock()
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-killNow:
	case <-done:
	case <-time.After(60 * time.Second):
	}
	killing.Store(true)
	srv.Kill(t)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("senders still busy 30 s after the kill")
	}
	for _, p := range problems {
		t.Error(p)
	}
	slices.Sort(leftover)
	return leftover
}

// sendAll sends the requests at idx concurrently; every one must be accepted.
func sendAll(ctx context.Context, t *testing.T, api *apiClient, idx []int, reqs []sendRequest, book *sendBook) {
	t.Helper()
	queue := make(chan int, len(idx))
	for _, i := range idx {
		queue <- i
	}
	close(queue)
	var (
		mu       sync.Mutex
		problems []string
		wg       sync.WaitGroup
	)
	for range crashSenders {
		wg.Go(func() {
			for i := range queue {
				code, resp, raw, err := api.send(ctx, reqs[i])
				if err == nil && code == http.StatusAccepted {
					err = checkAccepted(reqs[i], resp)
					book.accept(resp)
				} else if err == nil {
					err = fmt.Errorf("%d %s", code, raw)
				}
				if err != nil {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("request %d after the restart: %v", i, err))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
}

// settled is a message's final state as the API reports it.
type settled struct {
	Status    string
	ErrorCode string
}

// expectation is how a test message must end, by its recipient.
type expectation struct {
	Status    string
	ErrorCode string
	Webhooks  []string // the delivery_status webhooks it must produce, and no others
}

func expectFor(to string) expectation {
	if strings.HasSuffix(to, "0001") {
		return expectation{Status: "FAILED", ErrorCode: "INVALID_NUMBER", Webhooks: []string{"FAILED"}}
	}
	return expectation{Status: "DELIVERED", Webhooks: []string{"SENT", "DELIVERED"}}
}

// waitSettled polls until every message in msgs has a final status and the
// receiver acknowledged a webhook carrying it, and the other webhooks its
// recipient calls for, or until within has passed. It returns the final
// states it saw.
func waitSettled(ctx context.Context, t *testing.T, api *apiClient, rcv *receiver, msgs map[string]string, within time.Duration) map[string]settled {
	t.Helper()
	const poll = 250 * time.Millisecond
	final := map[string]settled{}
	pending := make(map[string]bool, len(msgs))
	for id := range msgs {
		pending[id] = true
	}
	deadline := time.Now().Add(within)
	for round := 0; len(pending) > 0 && round <= int(within/poll); round++ {
		for id := range pending {
			if _, ok := final[id]; !ok {
				v, err := api.message(ctx, id)
				if err != nil {
					t.Errorf("status of %s: %v", id, err)
					delete(pending, id)
					continue
				}
				if finalStatuses[v.Status] {
					final[id] = settled{Status: v.Status, ErrorCode: v.ErrorCode}
				}
			}
			if s, ok := final[id]; ok && rcv.ackedStatus(id, s.Status) && rcv.ackedAll(id, expectFor(msgs[id]).Webhooks) {
				delete(pending, id)
			}
		}
		if len(pending) == 0 || time.Now().After(deadline) {
			break
		}
		if round > 0 && round%int(10*time.Second/poll) == 0 {
			logPending(t, rcv, msgs, final, pending)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(poll):
		}
	}
	return final
}

// logPending shows progress of a slow recovery, with an example of what
// is still missing.
func logPending(t *testing.T, rcv *receiver, msgs map[string]string, final map[string]settled, pending map[string]bool) {
	t.Helper()
	ids := slices.Sorted(maps.Keys(pending))
	var ex []string
	for _, id := range ids[:min(3, len(ids))] {
		acked, seen := rcv.statuses(id)
		ex = append(ex, fmt.Sprintf("%s to %s final %+v acked %v seen %v", id, msgs[id], final[id], acked, seen))
	}
	t.Logf("still waiting for %d messages, e.g. %s", len(ids), strings.Join(ex, "; "))
}

// checkOutcomes asserts that no accepted message was lost and that what
// the receiver saw is consistent.
func checkOutcomes(t *testing.T, rcv *receiver, msgs map[string]string, final map[string]settled) {
	t.Helper()
	deliveries, badSig := rcv.snapshot()
	for _, b := range badSig {
		t.Errorf("webhook failed verification: %s", b)
	}

	var problems []string
	ids := slices.Sorted(maps.Keys(msgs))
	for _, id := range ids {
		to := msgs[id]
		want := expectFor(to)
		wantStatus, wantCode, wantSeen := want.Status, want.ErrorCode, want.Webhooks
		got, ok := final[id]
		acked, seen := rcv.statuses(id)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s to %s: no final status (webhooks seen %v)", id, to, seen))
			continue
		case got.Status != wantStatus || got.ErrorCode != wantCode:
			problems = append(problems, fmt.Sprintf("%s to %s: final %s/%q, want %s/%q", id, to, got.Status, got.ErrorCode, wantStatus, wantCode))
		}
		if acked[got.Status] == 0 {
			problems = append(problems, fmt.Sprintf("%s to %s: final %s never acknowledged by the receiver (acked %v, seen %v)",
				id, to, got.Status, acked, seen))
		}
		for _, s := range wantSeen {
			if acked[s] == 0 {
				problems = append(problems, fmt.Sprintf("%s to %s: no acknowledged %s webhook (acked %v, seen %v)", id, to, s, acked, seen))
			}
		}
		for s := range seen {
			if !slices.Contains(wantSeen, s) {
				problems = append(problems, fmt.Sprintf("%s to %s: unexpected %s webhook for a message that ended %s (seen %v)",
					id, to, s, got.Status, seen))
			}
		}
	}
	report(t, problems)

	// One webhook-id is one event: its retries carry the same content.
	type content struct{ msgID, status, code string }
	byID := map[string]content{}
	ackedByID := map[string]int{}
	refused, strangers, duplicates := 0, map[string]bool{}, 0
	for _, d := range deliveries {
		if d.Event != "delivery_status" {
			t.Errorf("webhook %s: event %q, want delivery_status", d.WebhookID, d.Event)
		}
		c := content{d.MessageID, d.Status, d.ErrorCode}
		if prev, ok := byID[d.WebhookID]; ok && prev != c {
			t.Errorf("webhook-id %s carried %+v and later %+v", d.WebhookID, prev, c)
		}
		byID[d.WebhookID] = c
		if _, ok := msgs[d.MessageID]; !ok {
			strangers[d.MessageID] = true
		}
		if !d.Acked {
			refused++
			continue
		}
		if ackedByID[d.WebhookID]++; ackedByID[d.WebhookID] > 1 {
			duplicates++
		}
		if d.Status == "FAILED" && d.ErrorCode == "" {
			t.Errorf("webhook %s: FAILED without errorCode", d.WebhookID)
		}
	}
	if refused == 0 {
		t.Error("the receiver refused no attempt: retries were not exercised")
	}
	t.Logf("webhooks: %d attempts, %d events, %d refused with 500, %d duplicate acknowledged deliveries; "+
		"%d messages seen only in webhooks (their send had no answer)", len(deliveries), len(byID), refused, duplicates, len(strangers))
}
