package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to read the journal

	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// multiNodeEnv is crashServeEnv for nodes that share one database: the
// carrier's journal on, so that the test can see every hand-over and the
// node that made it.
var multiNodeEnv = []string{
	"MSGSVC_WEBHOOK_ALLOW_PRIVATE=true",
	"MSGSVC_SIMULATOR_DELAY=150ms",
	"MSGSVC_WEBHOOK_RETRY_SCHEDULE=200ms,400ms,800ms,1s,1s,1s,1s,1s,1s,1s",
	"MSGSVC_DISPATCH_LEASE=2s",
	"MSGSVC_WEBHOOK_LEASE=6s",
	"MSGSVC_SIMULATOR_JOURNAL=true",
}

const (
	multiNodes    = 3
	multiVictim   = 1 // index of the node killed: node-2
	multiRequests = 600
	multiSenders  = 12
	multiKillAt   = multiRequests / 3 // accepted requests before SIGKILL
	// multiSettle bounds the wait after the kill. The dead node's claims
	// come back after the 2 s dispatch and 6 s webhook leases, its
	// unfinished carrier reports after the simulator's 5 s recovery scan.
	multiSettle = 60 * time.Second
)

// nodeName is the MSGSVC_NODE_ID of the node at index i.
func nodeName(i int) string { return fmt.Sprintf("node-%d", i+1) }

// TestMultiNodeTakeover runs three nodes on one PostgreSQL database under
// a load of sends spread over all of them, kills one with SIGKILL midway,
// and checks the scale-out promises: every message is handed to the
// carrier once (a resubmission is only allowed for what the dead node had
// handed over and not yet recorded), every event reaches the integrator,
// and the survivors take over the dead node's leases.
func TestMultiNodeTakeover(t *testing.T) {
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skipf("multi-node test needs PostgreSQL: set %s (e.g. postgres://postgres@127.0.0.1:5432/test)", storetest.PostgresEnv)
	}
	needBinary(t)
	ctx := t.Context()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	dsn := storetest.DSN(t, "postgres")
	acc := bootstrap(ctx, t, dsn, "test")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// Connect now: the snapshot right after the kill must be quick.
	if err := db.PingContext(ctx); err != nil {
		t.Fatal(err)
	}

	rcv := newReceiver(t, acc.WebhookSecret, receiverRefuses, 3, seed)
	reqs := loadRequests(seed, multiRequests, "multi-node", rcv.URL)
	nodes := make([]*server, multiNodes)
	apis := make([]*apiClient, multiNodes)
	for i := range nodes {
		env := append(slices.Clone(multiNodeEnv), "MSGSVC_NODE_ID="+nodeName(i))
		nodes[i] = startServer(ctx, t, dsn, t.TempDir(), env...)
		apis[i] = newAPIClient(nodes[i].URL, acc.Key)
		defer apis[i].close()
	}

	book := newSendBook()
	load := startLoad(ctx, apis, reqs, book)
	select {
	case <-load.killNow:
	case <-load.done:
		t.Fatalf("the load ended before %d requests were accepted", multiKillAt)
	case <-time.After(60 * time.Second):
		t.Fatalf("fewer than %d requests accepted in 60 s", multiKillAt)
	}
	load.victimDown.Store(true)
	nodes[multiVictim].Kill(t)
	killedAt := time.Now()
	accepted, _ := book.counts()
	held := victimLeases(ctx, t, db)
	t.Logf("SIGKILL %s (pid %d) after %d accepted requests; it held %d claimed messages (%d of them committed after "+
		"its death) and %d webhook events", nodeName(multiVictim), nodes[multiVictim].cmd.Process.Pid, accepted,
		len(held.messages), held.late, len(held.events))

	select {
	case <-load.done:
	case <-time.After(60 * time.Second):
		t.Fatal("senders still busy 60 s after the kill")
	}
	for _, p := range load.problems() {
		t.Error(p)
	}
	if t.Failed() {
		return
	}
	accepted, lost := book.counts()
	if accepted != multiRequests {
		t.Fatalf("%d of %d requests accepted", accepted, multiRequests)
	}
	msgs := book.messages()
	// Messages of requests whose answer was lost may exist all the same;
	// they must settle like the others.
	all := allMessages(ctx, t, db)
	unknown := map[string]string{}
	for id, to := range all {
		if _, ok := msgs[id]; !ok {
			unknown[id] = to
		}
	}
	for id := range msgs {
		if _, ok := all[id]; !ok {
			t.Errorf("accepted message %s is not in the messages table", id)
		}
	}
	if len(unknown) > 3*lost {
		t.Errorf("%d messages nobody was told about, but only %d requests lost their answer", len(unknown), lost)
	}
	t.Logf("%d requests accepted (%d messages), %d lost their answer in the kill and were resent (%d messages of those exist)",
		accepted, len(msgs), lost, len(unknown))

	final := waitSettled(ctx, t, apis[0], rcv, all, multiSettle)
	t.Logf("every message settled %v after the kill", time.Since(killedAt).Round(100*time.Millisecond))
	checkOutcomes(t, rcv, all, final)
	checkWebhookBodies(t, rcv)
	checkHandOvers(ctx, t, db, all, unknown, held, killedAt, lapsedLeases(nodes))

	for i, n := range nodes {
		if i == multiVictim {
			continue
		}
		if code := n.Stop(t, 20*time.Second); code != 0 {
			t.Errorf("%s exited %d after SIGTERM, want 0:\n%s", nodeName(i), code, n.logs.tail(40))
		}
	}
}

// load is the integrators' traffic: requests spread round-robin over the
// nodes by concurrent senders.
type load struct {
	killNow    chan struct{} // closed once multiKillAt requests were accepted
	done       chan struct{} // closed when every request was answered
	victimDown atomic.Bool   // set just before the kill: route around the victim

	mu    sync.Mutex
	issue []string
}

func (l *load) problem(format string, args ...any) {
	l.mu.Lock()
	l.issue = append(l.issue, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *load) problems() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.issue)
}

// startLoad sends every request, the i-th to node i mod 3. A request to
// the victim that got no answer once it is going down is resent to a live
// node, as an integrator would; if it may have reached the victim, its
// outcome is counted as unknown.
func startLoad(ctx context.Context, apis []*apiClient, reqs []sendRequest, book *sendBook) *load {
	l := &load{killNow: make(chan struct{}), done: make(chan struct{})}
	queue := make(chan int, len(reqs))
	for i := range reqs {
		queue <- i
	}
	close(queue)
	var trigger sync.Once
	var wg sync.WaitGroup
	for range multiSenders {
		wg.Go(func() {
			for i := range queue {
				l.send(ctx, apis, i, reqs[i], book, &trigger)
			}
		})
	}
	go func() { wg.Wait(); close(l.done) }()
	return l
}

func (l *load) send(ctx context.Context, apis []*apiClient, i int, req sendRequest, book *sendBook, trigger *sync.Once) {
	target := i % len(apis)
	for try := 0; try < 3; try++ {
		if target == multiVictim && l.victimDown.Load() {
			target = (multiVictim + 1 + i%2) % len(apis) // one of the live nodes
		}
		code, resp, raw, err := apis[target].send(ctx, req)
		switch {
		case err != nil && target == multiVictim && l.victimDown.Load():
			if !errors.Is(err, syscall.ECONNREFUSED) {
				book.lost() // it may have been accepted before the kill
			}
			continue
		case err != nil:
			l.problem("request %d to %s: %v", i, nodeName(target), err)
		case code != http.StatusAccepted:
			l.problem("request %d to %s: %d %s", i, nodeName(target), code, raw)
		default:
			if err := checkAccepted(req, resp); err != nil {
				l.problem("request %d to %s: %v", i, nodeName(target), err)
			}
			if book.accept(resp) == multiKillAt {
				trigger.Do(func() { close(l.killNow) })
			}
		}
		return
	}
	l.problem("request %d: no answer in 3 tries", i)
}

// heldLeases is what the victim had claimed and not finished when it died.
type heldLeases struct {
	messages map[string]bool
	events   map[string]bool
	// late counts the message claims that showed only after the first read.
	late int
	// released are the messages that left the dead node's leases while
	// they were read: a transaction it had sent whole before it died
	// (statements and COMMIT travel together) recorded their hand-over
	// after its death, or another node claimed them once the lease ran out.
	released map[string]bool
}

// victimLeases collects the dead node's leases before they lapse and
// another node takes them. It reads them several times over most of a
// dispatch lease: statements the node sent just before it died may still
// be committing in PostgreSQL when the process is gone, and their claims
// show only then.
func victimLeases(ctx context.Context, t *testing.T, db *sql.DB) heldLeases {
	t.Helper()
	h := heldLeases{messages: map[string]bool{}, events: map[string]bool{}, released: map[string]bool{}}
	const window, every = 1500 * time.Millisecond, 20 * time.Millisecond
	first := -1
	for range window / every {
		now := map[string]bool{}
		collectIDs(ctx, t, db, now, `SELECT id FROM messages WHERE lease_owner = $1`)
		for id := range h.messages {
			if !now[id] {
				h.released[id] = true
			}
		}
		for id := range now {
			h.messages[id] = true
		}
		if first < 0 {
			first = len(h.messages)
		}
		collectIDs(ctx, t, db, h.events, `SELECT id FROM webhook_events WHERE lease_owner = $1 AND state = 'pending'`)
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(every):
		}
	}
	h.late = len(h.messages) - first
	return h
}

// collectIDs adds to into the ids query returns for the victim.
func collectIDs(ctx context.Context, t *testing.T, db *sql.DB, into map[string]bool, query string) {
	t.Helper()
	rows, err := db.QueryContext(ctx, query, nodeName(multiVictim))
	if err != nil {
		t.Fatalf("victim's leases: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		into[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("victim's leases: %v", err)
	}
}

// allMessages maps every message in the database to its recipient.
func allMessages(ctx context.Context, t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.QueryContext(ctx, `SELECT id, to_phone FROM messages`)
	if err != nil {
		t.Fatalf("read messages: %v", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, to string
		if err := rows.Scan(&id, &to); err != nil {
			t.Fatal(err)
		}
		out[id] = to
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// journalRow is the simulated carrier's record of one message.
type journalRow struct {
	node          string // who handed it over first
	acceptedAt    int64  // ms
	resubmissions int
	lastNode      string
}

func readJournal(ctx context.Context, t *testing.T, db *sql.DB) map[string]journalRow {
	t.Helper()
	rows, err := db.QueryContext(ctx, `SELECT message_id, node, accepted_at, resubmissions, last_node FROM simulator_journal`)
	if err != nil {
		t.Fatalf("read journal: %v", err)
	}
	defer rows.Close()
	out := map[string]journalRow{}
	for rows.Next() {
		var id string
		var r journalRow
		if err := rows.Scan(&id, &r.node, &r.acceptedAt, &r.resubmissions, &r.lastNode); err != nil {
			t.Fatal(err)
		}
		out[id] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// claims is what the messages table says of one message's claims.
type claims struct {
	attempts  int   // how often a dispatcher claimed it
	createdAt int64 // ms
	status    string
}

func readClaims(ctx context.Context, t *testing.T, db *sql.DB) map[string]claims {
	t.Helper()
	// lease_owner is cleared once a hand-over is recorded, so it says
	// nothing about who claimed a message; the journal does.
	rows, err := db.QueryContext(ctx, `SELECT id, attempts, lease_owner, created_at, status FROM messages`)
	if err != nil {
		t.Fatalf("read claims: %v", err)
	}
	defer rows.Close()
	out := map[string]claims{}
	for rows.Next() {
		var id, owner string
		var c claims
		if err := rows.Scan(&id, &c.attempts, &owner, &c.createdAt, &c.status); err != nil {
			t.Fatal(err)
		}
		out[id] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read claims: %v", err)
	}
	return out
}

// lapsedLeases counts the messages a live node had to leave for a second
// claim, as the nodes logged it. An overloaded node (the race detector on
// a busy machine) may keep a message in memory, or behind a slow chunk,
// past its lease: it drops it and the table's claim takes it again. Or
// the carrier answers a hand-over too late: it is retried. Either way the
// message is claimed twice yet handed over once.
func lapsedLeases(nodes []*server) int {
	n := 0
	for _, s := range nodes {
		for _, line := range s.Logs() {
			var rec struct {
				Msg      string `json:"msg"`
				Rows     int    `json:"rows"`
				Messages int    `json:"messages"`
			}
			if json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			switch {
			case strings.HasPrefix(rec.Msg, "messages waited in memory past their lease"):
				n += rec.Rows
			case strings.HasPrefix(rec.Msg, "messages no longer leased to this dispatch"),
				strings.HasPrefix(rec.Msg, "hand-over failed for now"):
				n += rec.Messages
			}
		}
	}
	return n
}

// checkHandOvers compares the carrier's journal and the claim counters
// with what was sent: every message the carrier can take was taken once,
// and only the dead node's unfinished work was done twice, apart from at
// most lapsed messages claimed again after a live node logged that it had
// to leave them (see lapsedLeases), and handed over once all the same.
func checkHandOvers(ctx context.Context, t *testing.T, db *sql.DB, all, unknown map[string]string, held heldLeases, killedAt time.Time, lapsed int) {
	t.Helper()
	journal := readJournal(ctx, t, db)
	claimed := readClaims(ctx, t, db)
	victim := nodeName(multiVictim)

	var problems []string
	perNode := map[string]int{}
	dedup, retaken, relapsed := 0, 0, 0
	for id, r := range journal {
		perNode[r.node]++
		if _, ok := all[id]; !ok {
			problems = append(problems, fmt.Sprintf("journal has %s, which is in no send answer nor in the messages table", id))
		}
		if r.node == victim && r.acceptedAt > killedAt.UnixMilli() {
			problems = append(problems, fmt.Sprintf("%s handed %s over at %d ms, after it was killed (%d ms)",
				victim, id, r.acceptedAt, killedAt.UnixMilli()))
		}
		if r.resubmissions == 0 {
			continue
		}
		dedup += r.resubmissions
		// Only the dead node can have handed a message over without
		// recording it, and only once; the one that took it over is alive.
		if r.node != victim || r.resubmissions != 1 || r.lastNode == victim {
			problems = append(problems, fmt.Sprintf("%s handed over by %s, then %d more times, last by %s: "+
				"a duplicate hand-over while its first node was alive", id, r.node, r.resubmissions, r.lastNode))
		}
	}

	ids := slices.Sorted(maps.Keys(all))
	for _, id := range ids {
		to := all[id]
		r, inJournal := journal[id]
		refused := strings.HasSuffix(to, "0001") // the carrier refuses the number: nothing to journal
		switch {
		case refused && inJournal:
			problems = append(problems, fmt.Sprintf("%s to %s: the carrier journaled an invalid number", id, to))
		case !refused && !inJournal:
			problems = append(problems, fmt.Sprintf("%s to %s: never handed to the carrier", id, to))
		}
		c := claimed[id]
		switch {
		case c.attempts == 1:
		case c.attempts == 2 && (held.messages[id] || inJournal && r.resubmissions == 1):
			retaken++ // claimed by the dead node, then by a live one
		case c.attempts == 2 && r.resubmissions == 0 && relapsed < lapsed:
			relapsed++ // a node logged that it had to leave it; handed over once
		default:
			problems = append(problems, fmt.Sprintf("%s to %s: claimed %d times (created %d ms after the kill; journal %+v; "+
				"leased to %s at its death: %v)", id, to, c.attempts, c.createdAt-killedAt.UnixMilli(), r, victim, held.messages[id]))
		}
	}
	recordedLate := 0
	for id := range held.messages {
		// Claimed once, released while the leases were read, and past
		// SENDING: only the holder of the lease records a hand-over's
		// outcome, so the dead node's last commit recorded it.
		if c := claimed[id]; c.attempts < 2 && held.released[id] && c.status != "SENDING" {
			recordedLate++
			continue
		}
		if claimed[id].attempts < 2 {
			problems = append(problems, fmt.Sprintf("%s was leased to %s at its death but was not claimed again (attempts %d)",
				id, victim, claimed[id].attempts))
		}
	}
	report(t, problems)
	if len(held.messages) == 0 && len(held.events) == 0 && dedup == 0 && len(unknown) == 0 {
		t.Errorf("%s had nothing in flight when it was killed: the takeover was not exercised", victim)
	}
	t.Logf("carrier took %d messages (by node %v); it deduplicated %d resubmissions of %s's hand-overs; "+
		"%d messages were claimed again after the kill; %d hand-overs were recorded by a commit of %s that landed after its death; "+
		"%d messages were claimed again after a live node left them (%d such logged: lapsed leases, retried hand-overs)",
		len(journal), perNode, dedup, victim, retaken, recordedLate, victim, relapsed, lapsed)
}

// checkWebhookBodies asserts that a webhook-id names one event: every
// attempt carries the same bytes, and no two deliverers post it at once.
func checkWebhookBodies(t *testing.T, rcv *receiver) {
	t.Helper()
	deliveries, _ := rcv.snapshot()
	body := map[string]string{}
	var problems []string
	for _, d := range deliveries {
		if prev, ok := body[d.WebhookID]; ok && prev != d.Body {
			problems = append(problems, fmt.Sprintf("webhook-id %s carried %s and later %s", d.WebhookID, prev, d.Body))
		}
		body[d.WebhookID] = d.Body
	}
	for _, id := range rcv.concurrent() {
		problems = append(problems, fmt.Sprintf("webhook-id %s was posted again while a delivery of it was in progress", id))
	}
	report(t, problems)
}

// report fails the test with the first problems found.
func report(t *testing.T, problems []string) {
	t.Helper()
	const show = 30
	for i, p := range problems {
		if i == show {
			t.Errorf("... and %d more problems", len(problems)-show)
			break
		}
		t.Error(p)
	}
}
