package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// delivery is one webhook POST as the receiver saw it.
type delivery struct {
	WebhookID string
	Event     string
	MessageID string
	Status    string
	ErrorCode string
	Body      string
	Acked     bool // answered 2xx, so the service may consider it delivered
}

// receiver is an integrator's webhook endpoint on loopback. It verifies
// every signature with the Standard Webhooks reference library, records
// what arrived, and refuses a share of the attempts with 500 so that the
// service's retries are exercised.
type receiver struct {
	URL string

	verifier *standardwebhooks.Webhook
	failRate float64
	// maxFails caps the refusals of one webhook-id, so that the retry
	// schedule cannot run out by bad luck and fail the test for nothing.
	maxFails int

	mu         sync.Mutex
	rng        *rand.Rand
	fails      map[string]int
	deliveries []delivery
	acked      map[string]map[string]int // messageId -> status -> 2xx answers
	seen       map[string]map[string]int // messageId -> status -> any answer
	badSig     []string
	// inFlight counts the requests of each webhook-id being answered; a
	// second one arriving meanwhile means two deliverers hold the event.
	inFlight map[string]int
	overlaps []string
}

// newReceiver starts a receiver for webhooks signed with secret; it stops
// when the test ends.
func newReceiver(t testing.TB, secret string, failRate float64, maxFails int, seed uint64) *receiver {
	t.Helper()
	v, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("webhook secret %q: %v", secret, err)
	}
	r := &receiver{verifier: v, failRate: failRate, maxFails: maxFails, rng: rand.New(rand.NewPCG(seed, 0x5eed)),
		fails: map[string]int{}, acked: map[string]map[string]int{}, seen: map[string]map[string]int{},
		inFlight: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(r.serveHTTP))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/hooks/msgsvc"
	return r
}

func (r *receiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id := req.Header.Get("webhook-id")
	r.mu.Lock()
	if r.inFlight[id]++; r.inFlight[id] > 1 {
		r.overlaps = append(r.overlaps, id)
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		if r.inFlight[id]--; r.inFlight[id] == 0 {
			delete(r.inFlight, id)
		}
		r.mu.Unlock()
	}()
	if err := r.verifier.Verify(body, req.Header); err != nil {
		r.mu.Lock()
		r.badSig = append(r.badSig, fmt.Sprintf("webhook-id %q: %v (signature %q, body %s)", id, err,
			req.Header.Get("webhook-signature"), body))
		r.mu.Unlock()
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var p struct {
		Event     string  `json:"event"`
		MessageID string  `json:"messageId"`
		Status    string  `json:"status"`
		ErrorCode *string `json:"errorCode"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		r.mu.Lock()
		r.badSig = append(r.badSig, fmt.Sprintf("webhook-id %q: body is not JSON: %v", id, err))
		r.mu.Unlock()
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	d := delivery{WebhookID: id, Event: p.Event, MessageID: p.MessageID, Status: p.Status, Body: string(body)}
	if p.ErrorCode != nil {
		d.ErrorCode = *p.ErrorCode
	}

	r.mu.Lock()
	refuse := r.fails[id] < r.maxFails && r.rng.Float64() < r.failRate
	if refuse {
		r.fails[id]++
	}
	d.Acked = !refuse
	r.deliveries = append(r.deliveries, d)
	count(r.seen, d.MessageID, d.Status)
	if d.Acked {
		count(r.acked, d.MessageID, d.Status)
	}
	r.mu.Unlock()

	if refuse {
		http.Error(w, "simulated outage", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func count(m map[string]map[string]int, msgID, status string) {
	if m[msgID] == nil {
		m[msgID] = map[string]int{}
	}
	m[msgID][status]++
}

// ackedStatus reports whether a webhook with status for msgID was answered
// with 2xx.
func (r *receiver) ackedStatus(msgID, status string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.acked[msgID][status] > 0
}

// ackedAll reports whether webhooks with every one of statuses for msgID
// were answered with 2xx.
func (r *receiver) ackedAll(msgID string, statuses []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range statuses {
		if r.acked[msgID][s] == 0 {
			return false
		}
	}
	return true
}

// statuses returns, for msgID, the statuses acknowledged and the statuses
// received at all, each with its number of deliveries.
func (r *receiver) statuses(msgID string) (acked, seen map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.acked[msgID]), maps.Clone(r.seen[msgID])
}

// snapshot returns every delivery so far and the signature failures.
func (r *receiver) snapshot() ([]delivery, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.deliveries...), append([]string(nil), r.badSig...)
}

// concurrent returns the webhook-ids that arrived while another request
// with the same id was being answered.
func (r *receiver) concurrent() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.overlaps...)
}
