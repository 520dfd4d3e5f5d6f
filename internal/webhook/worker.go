package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/lease"
)

// RotationGrace is how long a rotated-out secret keeps signing, so that
// receivers can switch to the new one without dropping events.
const RotationGrace = 24 * time.Hour

// responseSnippet bounds what is kept of a receiver's answer per attempt.
const responseSnippet = 1024

// Store is what the Worker needs from storage.
type Store interface {
	ReleaseEvents(ctx context.Context, owner string, ids []string, now time.Time) error
	ClaimEvents(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]domain.Event, error)
	RecordAttempts(ctx context.Context, owner string, outs []domain.AttemptOutcome) error
	Account(ctx context.Context, id string) (domain.Account, error)
	StopEventsForURL(ctx context.Context, accountID, url string) (int64, error)
	HurryEvents(ctx context.Context, accountID, url string, now time.Time) (int64, error)
}

// Observer is told the outcome of every attempt (metrics).
type Observer func(ev domain.Event, statusCode int, d time.Duration, delivered bool)

// EventQueueConfig sets up the queue of webhook events waiting for their
// receiver.
type EventQueueConfig struct {
	Store       Store
	Owner       string
	Concurrency int           // deliveries in flight, default 128
	Lease       time.Duration // default 60 s
	Poll        time.Duration // idle re-check, default 1 s
	Now         func() time.Time
	Log         *slog.Logger
	// Waiting, when set, is told of the events claimed (see Waiting).
	Waiting *Waiting
}

// NewEventQueue builds the lease queue of webhook events waiting for their
// receiver: the events table, claimed by ClaimEvents, and the events the
// tracker wrote already leased to this node, handed over in memory. Every
// event is delivered on its own, so a slow receiver holds one delivery
// slot, not a batch. A Worker serves it.
func NewEventQueue(c EventQueueConfig) *lease.Queue[domain.Event] {
	if c.Concurrency <= 0 {
		c.Concurrency = 128
	}
	if c.Lease <= 0 {
		c.Lease = 60 * time.Second
	}
	claim := c.Store.ClaimEvents
	if c.Waiting != nil {
		claim = func(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]domain.Event, error) {
			evs, err := c.Store.ClaimEvents(ctx, owner, now, lease, limit)
			c.Waiting.Note(evs)
			return evs, err
		}
	}
	return lease.New(lease.Config[domain.Event]{Name: "webhook events", Owner: c.Owner, Lease: c.Lease,
		Claim: claim, Release: c.Store.ReleaseEvents, ID: func(ev domain.Event) string { return ev.ID },
		With:  func(ev domain.Event) []string { return eventIDs(ev.Then) },
		Batch: 256, Chunk: 1, Workers: c.Concurrency, Poll: c.Poll, Now: c.Now, Log: c.Log})
}

// Worker delivers webhook events: it claims due events in batches under a
// lease, posts them concurrently over pooled keep-alive connections, and
// records every attempt. An event whose outcome was not recorded (a crash)
// is delivered again when its lease runs out: at least once.
type Worker struct {
	cfg     WorkerConfig
	queue   *lease.Queue[domain.Event]
	secrets sync.Map // account id -> cachedKeys
	tokens  sync.Map // account id/env/account SID -> cachedToken
}

// WorkerConfig sets up a Worker.
type WorkerConfig struct {
	// Queue is the queue the worker serves; nil makes one with
	// NewEventQueue from Store, Owner, Concurrency, Lease, Poll, Now, Log
	// and Waiting.
	Queue *lease.Queue[domain.Event]
	// Waiting, when set, is the queue's (EventQueueConfig.Waiting): the
	// worker looks in the table after recording outcomes only when they
	// may have let an event waiting there go. Nil: after every batch.
	Waiting *Waiting
	Store   Store
	// Sender posts the webhooks; nil makes one with the defaults (public
	// receivers only).
	Sender   *Sender
	Schedule Schedule
	// Owner, Lease and Poll make the queue when Queue is nil (see
	// EventQueueConfig); Concurrency bounds the deliveries in flight,
	// default 128.
	Owner       string
	Concurrency int
	Lease       time.Duration
	Poll        time.Duration
	Now         func() time.Time
	Rand        func() float64
	Log         *slog.Logger
	Observe     Observer
	// Version reads a counter that moves whenever an account's settings
	// (its webhook secret among them) change: cached signing keys are used
	// only while it stands, so a rotated secret signs the very next
	// delivery on every node. Nil: keys are read again after 5 s.
	Version func(ctx context.Context) (int64, error)
	// Twilio finds the auth tokens that sign the Twilio-compatible API's
	// callbacks, cached like the signing keys; nil: such events cannot be
	// signed, and fail.
	Twilio TwilioSecrets
}

type cachedKeys struct {
	keys    []*keyedMAC
	fetched time.Time
	version int64
	until   time.Time // when the previous secret stops signing
}

// NewWorker builds a Worker; Run starts it.
func NewWorker(c WorkerConfig) *Worker {
	if c.Concurrency <= 0 {
		c.Concurrency = 128
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Schedule == nil {
		c.Schedule = DefaultSchedule()
	}
	if c.Sender == nil {
		c.Sender = NewSender(SenderOptions{})
	}
	if c.Observe == nil {
		c.Observe = func(domain.Event, int, time.Duration, bool) {}
	}
	if c.Queue == nil {
		c.Queue = NewEventQueue(EventQueueConfig{Store: c.Store, Owner: c.Owner, Concurrency: c.Concurrency,
			Lease: c.Lease, Poll: c.Poll, Now: c.Now, Log: c.Log, Waiting: c.Waiting})
	}
	c.Owner = c.Queue.Owner()
	return &Worker{cfg: c, queue: c.Queue}
}

// Queue is the queue the worker serves.
func (w *Worker) Queue() *lease.Queue[domain.Event] { return w.queue }

// Run delivers until ctx ends, then waits for the attempts in flight and
// records them; events still waiting in memory go back to the table.
func (w *Worker) Run(ctx context.Context) {
	results := make(chan outcome, w.cfg.Concurrency)
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		w.record(results)
	}()
	w.queue.Run(ctx, func(ctx context.Context, evs []domain.Event) error {
		for _, ev := range evs {
			w.deliverLine(ctx, ev, results)
		}
		return nil
	})
	close(results)
	<-recorded
}

// outcome is an attempt's outcome, and the events that were handed over
// behind its event (domain.Event.Then) and not posted because it was not
// delivered.
type outcome struct {
	domain.AttemptOutcome
	message string // the event's message ("" for a reply's)
	behind  []string
}

// deliverLine posts ev, then the events of its message handed over behind
// it, one at a time, each once the one before it was delivered. An event
// not delivered (a retry, a 410, the schedule used up) ends the line: the
// events behind it go back to the table with its outcome, where the claim
// takes them in their turn, as it would have had they waited there.
func (w *Worker) deliverLine(ctx context.Context, ev domain.Event, results chan<- outcome) {
	for {
		next := ev.Then
		o := w.deliver(ctx, ev)
		if o.State != domain.EventDelivered || len(next) == 0 {
			results <- outcome{AttemptOutcome: o, message: ev.MessageID, behind: eventIDs(next)}
			return
		}
		results <- outcome{AttemptOutcome: o, message: ev.MessageID}
		rest := next[1:]
		ev = next[0]
		ev.Then = rest
	}
}

func eventIDs(evs []domain.Event) []string {
	if len(evs) == 0 {
		return nil
	}
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	return ids
}

// record writes outcomes in batches: whatever arrived while the previous
// batch was being written.
func (w *Worker) record(results <-chan outcome) {
	buf := make([]domain.AttemptOutcome, 0, 512)
	var behind, msgs []string
	failing := map[receiver]bool{} // receivers whose last attempt here failed
	for o := range results {
		buf, behind, msgs = append(buf[:0], o.AttemptOutcome), append(behind[:0], o.behind...), append(msgs[:0], o.message)
	drain:
		for len(buf) < cap(buf) {
			select {
			case o, ok := <-results:
				if !ok {
					break drain
				}
				buf, behind, msgs = append(buf, o.AttemptOutcome), append(behind, o.behind...), append(msgs, o.message)
			default:
				break drain
			}
		}
		var retryAt time.Time
		for _, o := range buf {
			if o.State == domain.EventPending && (retryAt.IsZero() || o.NextAttemptAt.Before(retryAt)) {
				retryAt = o.NextAttemptAt
			}
		}
		for attempt := 0; ; attempt++ {
			err := w.cfg.Store.RecordAttempts(context.Background(), w.cfg.Owner, buf)
			if err == nil {
				w.stopGone(buf)
				hurried := w.hurryBack(buf, failing)
				w.release(behind)
				// The events that waited for these are due now: those
				// behind them in the table, those brought forward, and
				// those of a line given back.
				if w.cfg.Waiting.settled(msgs) || hurried || len(behind) > 0 {
					w.queue.Wake()
				}
				if !retryAt.IsZero() {
					// Look at the database again when the first retry is due.
					time.AfterFunc(max(0, retryAt.Sub(w.cfg.Now())), w.queue.Wake)
				}
				break
			}
			w.cfg.Log.Error("record webhook attempts", "err", err, "attempt", attempt)
			if attempt >= 5 {
				break // the leases run out and the events are delivered again
			}
			time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
		}
	}
}

// release gives back to the table the events a line left behind, due at
// once: after their first event's outcome, so that a 410 has stopped
// them before any claim could take them.
func (w *Worker) release(ids []string) {
	if len(ids) == 0 {
		return
	}
	if err := w.cfg.Store.ReleaseEvents(context.Background(), w.cfg.Owner, ids, w.cfg.Now()); err != nil {
		w.cfg.Log.Error("release webhook events behind one not delivered; they come due when their lease ends",
			"err", err, "events", len(ids))
	}
}

// receiver is where an account's events go: its callback URL.
type receiver struct{ account, url string }

// maxFailing bounds the receivers remembered as failing; past it the
// memory starts afresh (a receiver forgotten is hurried when a retry of
// its succeeds instead).
const maxFailing = 10_000

// hurryBack brings forward the retries of every receiver that answered
// 2xx after failing: its outage is over, and its backlog should not wait
// out each event's own retry time. A receiver counts as failing when its
// last attempt on this node failed, or when the event it answered had
// failed before (a retry), which another node may have seen. Each event
// brought forward still costs a slot of its retry schedule if it fails
// again, so a receiver that fails some events and answers others cannot
// be posted to without end.
//
// It reports whether it brought any forward.
func (w *Worker) hurryBack(outs []domain.AttemptOutcome, failing map[receiver]bool) bool {
	var back []receiver
	for _, o := range outs {
		r := receiver{o.AccountID, o.URL}
		switch {
		case o.State == domain.EventPending:
			if len(failing) >= maxFailing {
				clear(failing)
			}
			failing[r] = true
		case o.State == domain.EventDelivered && (failing[r] || o.Retried):
			delete(failing, r)
			if !slices.Contains(back, r) {
				back = append(back, r)
			}
		}
	}
	hurried := false
	for _, r := range back {
		n, err := w.cfg.Store.HurryEvents(context.Background(), r.account, r.url, w.cfg.Now())
		if err != nil {
			w.cfg.Log.Error("bring forward the retries of a webhook receiver that answers again", "err", err)
			continue
		}
		if n > 0 {
			hurried = true
			w.cfg.Log.Info("webhook receiver answers again; its waiting events are due now", "host", hostOf(r.url), "events", n)
		}
	}
	return hurried
}

// stopGone stops every event still queued for a receiver that answered
// 410 Gone: it asked for no more, so the rest of its queue goes too.
func (w *Worker) stopGone(outs []domain.AttemptOutcome) {
	done := map[receiver]bool{}
	for _, o := range outs {
		t := receiver{o.AccountID, o.URL}
		if o.State != domain.EventGone || done[t] {
			continue
		}
		done[t] = true
		n, err := w.cfg.Store.StopEventsForURL(context.Background(), t.account, t.url)
		if err != nil {
			w.cfg.Log.Error("stop the events of a receiver that answered 410", "err", err)
			continue
		}
		if n > 0 {
			w.cfg.Log.Warn("stopped the events queued for a receiver that answered 410 Gone", "events", n)
		}
	}
}

// version reads the settings counter (0 without one).
func (w *Worker) version(ctx context.Context) (int64, error) {
	if w.cfg.Version == nil {
		return 0, nil
	}
	return w.cfg.Version(ctx)
}

// current reports whether what was cached at fetched, when the counter
// read was, may still be used.
func (w *Worker) current(fetched time.Time, was, version int64, now time.Time) bool {
	if w.cfg.Version != nil {
		return was == version
	}
	return now.Sub(fetched) < 5*time.Second
}

func (w *Worker) keys(ctx context.Context, accountID string) ([]*keyedMAC, error) {
	now := w.cfg.Now()
	version, err := w.version(ctx)
	if err != nil {
		return nil, err
	}
	if v, ok := w.secrets.Load(accountID); ok {
		c := v.(cachedKeys)
		if w.current(c.fetched, c.version, version, now) && now.Before(c.until) {
			return c.keys, nil
		}
	}
	a, err := w.cfg.Store.Account(ctx, accountID)
	if err != nil {
		return nil, err
	}
	k, err := DecodeSecret(a.WebhookSecret)
	if err != nil {
		return nil, err
	}
	keys, until := []*keyedMAC{newKeyedMAC(k)}, now.Add(time.Hour)
	if a.WebhookSecretPrev != "" && now.Sub(a.SecretRotatedAt) < RotationGrace {
		if p, err := DecodeSecret(a.WebhookSecretPrev); err == nil {
			keys, until = append(keys, newKeyedMAC(p)), a.SecretRotatedAt.Add(RotationGrace)
		}
	}
	w.secrets.Store(accountID, cachedKeys{keys: keys, fetched: now, version: version, until: until})
	return keys, nil
}

// deliver makes one attempt and decides what happens next.
func (w *Worker) deliver(ctx context.Context, ev domain.Event) domain.AttemptOutcome {
	start := w.cfg.Now()
	att := domain.Attempt{ID: id.New(id.Attempt, start), EventID: ev.ID, AttemptedAt: start.UTC()}
	code, snippet, err := w.post(ctx, ev, start)
	att.Duration = w.cfg.Now().Sub(start)
	att.StatusCode, att.Response = code, snippet
	if err != nil {
		att.Error = err.Error()
	}
	out := domain.AttemptOutcome{Attempt: att, AccountID: ev.AccountID, URL: ev.URL, Retried: ev.Attempts > 0}
	delivered := err == nil && code >= 200 && code < 300
	switch {
	case delivered:
		out.State = domain.EventDelivered
	case code == http.StatusGone:
		out.State = domain.EventGone
	default:
		if d, ok := w.cfg.Schedule.Delay(ev.Attempts+1, w.cfg.Rand); ok {
			out.State, out.NextAttemptAt = domain.EventPending, w.cfg.Now().Add(d)
		} else {
			out.State = domain.EventFailed
		}
		if att.Error == "" {
			att.Error = "receiver answered " + strconv.Itoa(code)
			out.Attempt.Error = att.Error
		}
	}
	w.cfg.Observe(ev, code, att.Duration, delivered)
	if !delivered {
		w.logFailure(ev, code, err, out)
	}
	return out
}

// logFailure tells the operator about a failed attempt: which event, which
// receiver (its host only: paths and queries may carry the integrator's
// tokens), what went wrong, and what happens next. Never the body or the
// signature.
func (w *Worker) logFailure(ev domain.Event, code int, err error, out domain.AttemptOutcome) {
	attrs := []any{"event", ev.ID, "type", ev.Event, "host", hostOf(ev.URL), "attempt", ev.Attempts + 1}
	var ue *url.Error
	switch {
	case errors.As(err, &ue):
		attrs = append(attrs, "error", ue.Err.Error()) // without the URL it would quote
	case err != nil:
		attrs = append(attrs, "error", err.Error())
	default:
		attrs = append(attrs, "status", code)
	}
	switch out.State {
	case domain.EventPending:
		w.cfg.Log.Warn("webhook delivery failed; retrying", append(attrs, "nextAttempt", out.NextAttemptAt.UTC())...)
	case domain.EventGone:
		w.cfg.Log.Warn("webhook receiver answered 410 Gone; events queued for it are stopped", attrs...)
	default:
		w.cfg.Log.Error("webhook delivery failed for good: the retry schedule is used up", attrs...)
	}
}

func (w *Worker) post(ctx context.Context, ev domain.Event, now time.Time) (int, string, error) {
	if form, ok := TwilioForm(ev); ok {
		return w.postTwilio(ctx, ev, form)
	}
	keys, err := w.keys(ctx, ev.AccountID)
	if err != nil {
		return 0, "", errors.New("signing secret unavailable: " + err.Error())
	}
	body := []byte(ev.Body)
	ts := strconv.FormatInt(now.Unix(), 10)
	sig := signatureHeader(keys, ev.ID, now.Unix(), body)
	a, err := w.cfg.Sender.Post(ctx, ev.URL, []Header{{"webhook-id", ev.ID}, {"webhook-timestamp", ts},
		{"webhook-signature", sig}, {"X-Service-Signature", sig}}, body)
	if err != nil {
		return 0, "", err
	}
	return a.Status, validUTF8(a.Head), nil
}

// postTwilio makes one attempt at a Twilio callback, as Twilio makes it:
// the event's stored form parameters, encoded.
func (w *Worker) postTwilio(ctx context.Context, ev domain.Event, encoded string) (int, string, error) {
	// The stored form is read once: for the account SID whose token
	// signs, and for the signature itself.
	form, err := url.ParseQuery(encoded)
	if err != nil {
		return 0, "", fmt.Errorf("twilio event body: %w", err)
	}
	token, err := w.twilioToken(ctx, ev, form.Get("AccountSid"))
	if err != nil {
		return 0, "", errors.New("signing secret unavailable: " + err.Error())
	}
	a, err := w.cfg.Sender.Send(ctx, twilioRequest(ev, encoded, form, token))
	if err != nil {
		return 0, "", err
	}
	return a.Status, validUTF8(a.Head), nil
}

// hostOf is a URL's host, what logs may show of a receiver: its path and
// query may carry the integrator's tokens.
func hostOf(raw string) string {
	_, raw = splitMethod(raw)
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return ""
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(bytes.ToValidUTF8(b, []byte("?")))
}
