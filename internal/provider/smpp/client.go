package smpp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgsvc/msgsvc/internal/backoff"
	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Client is an SMPP provider: it keeps Config.Binds transceiver sessions to
// one SMSC, submits messages over them and hands receipts and replies to
// its Sink. It implements provider.Provider.
type Client struct {
	cfg   Config
	sink  provider.Sink
	clock Clock
	log   *slog.Logger
	rand  func() float64
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)

	bucket *bucket
	reasm  *reassembler

	ref         atomic.Uint32 // concatenation references, one per message
	throttled   atomic.Uint64
	resubmitted atomic.Uint64
	paused      atomic.Uint64 // times a bind stopped reading: its inbound handlers were all busy

	refusedMu sync.Mutex
	refused   map[pdu.Status]uint64 // deliver_sm answered with an error, by status

	mu        sync.Mutex
	sessions  []*session    // by bind slot; nil while that slot is down
	dialing   []bool        // by bind slot: a dial and bind is under way
	changed   chan struct{} // closed and replaced when sessions change
	next      int           // round-robin position
	lastErr   string
	lastErrAt time.Time
	started   bool
	closing   bool
	runCtx    context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

var _ provider.Provider = (*Client)(nil)

// New checks cfg and builds a client; Start connects it.
func New(cfg Config, sink provider.Sink, opts ...Option) (*Client, error) {
	if err := provider.Usable(TypeName, cfg.Validate(), sink); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	o := buildOptions(opts)
	c := &Client{
		cfg: cfg, sink: sink, clock: o.clock, log: o.log.With("provider", cfg.Name), rand: o.rand, dial: o.dial,
		bucket:   newBucket(cfg.TPS, o.clock),
		reasm:    newReassembler(cfg.ReassemblyTimeout),
		sessions: make([]*session, cfg.Binds),
		dialing:  make([]bool, cfg.Binds),
		changed:  make(chan struct{}),
	}
	return c, nil
}

// Name is the provider's name (Config.Name).
func (c *Client) Name() string { return c.cfg.Name }

// Start begins binding in the background and returns at once; Submit waits
// for a bind (within its context). ctx bounds the client's life as Close
// does, but without the polite unbind.
func (c *Client) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("smpp: already started")
	}
	c.started = true
	c.runCtx, c.cancel = context.WithCancel(ctx)
	for i := range c.cfg.Binds {
		c.dialing[i] = true // before its goroutine runs: a Submit now waits for it
		c.wg.Add(1)
		go func() { defer c.wg.Done(); c.keepBound(c.runCtx, i) }()
	}
	c.wg.Add(1)
	go func() { defer c.wg.Done(); c.sweepReassembly(c.runCtx) }()
	return nil
}

// Close unbinds every session politely (waiting at most until ctx ends for
// the answers), then stops. Submits still running fail as temporary.
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	if !c.started || c.closing {
		c.closing = true
		c.mu.Unlock()
		return nil
	}
	c.closing = true
	close(c.changed) // wake the Submits waiting for a bind: there will be none
	c.changed = make(chan struct{})
	live := make([]*session, 0, len(c.sessions))
	for _, s := range c.sessions {
		if s != nil {
			live = append(live, s)
		}
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range live {
		wg.Add(1)
		go func() { defer wg.Done(); s.unbind(ctx) }()
	}
	wg.Wait()
	c.cancel()
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("smpp: close: %w", ctx.Err())
	}
}

// keepBound keeps bind slot i bound until ctx ends, reconnecting with
// exponential backoff and jitter. A bind that drops is made again at once,
// so that the requests it lost wait for it (pick waits for a bind being
// made) rather than fail; a connection or bind that fails backs off, and
// meanwhile Submits fail fast.
func (c *Client) keepBound(ctx context.Context, i int) {
	redialed := false // this bind was made at once after a drop
	for attempt := 0; ; {
		c.setDialing(i)
		s, err := c.connect(ctx, i)
		if err == nil && c.isClosing() {
			c.bound(i, nil)
			// Close ran while this bind was being made: undo it politely.
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.RequestTimeout)
			s.unbind(uctx)
			cancel()
			s.wg.Wait()
			return
		}
		if err != nil {
			c.noteErr(err) // before bound: a Submit failing for want of a bind says why
		}
		c.bound(i, s)
		redial := false // make the bind again at once
		if err == nil {
			attempt = 0
			upAt := c.clock.Now()
			select {
			case <-s.done:
			case <-ctx.Done():
				s.close(ctx.Err())
			}
			// A bind that held a while, or the first that dropped, is made
			// again at once; one that drops as soon as it is made again
			// backs off, so that an SMSC that binds and drops is not
			// hammered.
			redial = ctx.Err() == nil && (!redialed || c.clock.Now().Sub(upAt) >= c.cfg.ReconnectMin)
			c.unbound(i, redial)
			// Its deliver_sm handlers may still be in the Sink: Close waits
			// for them, the reconnect does not.
			c.wg.Add(1)
			go func() { defer c.wg.Done(); s.wg.Wait() }()
			err = s.cause()
		}
		if ctx.Err() != nil || c.isClosing() {
			return
		}
		attempt++
		c.noteErr(err)
		c.log.Warn("smpp: bind down, reconnecting", "bind", i, "err", err, "attempt", attempt)
		redialed = redial
		if redial {
			continue
		}
		if !c.sleep(ctx, c.backoff(attempt, c.cfg.ReconnectMin, c.cfg.ReconnectMax)) {
			return
		}
	}
}

// connect dials and binds one session.
func (c *Client) connect(ctx context.Context, i int) (*session, error) {
	dctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	conn, err := c.dial(dctx, "tcp", c.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", c.cfg.Addr, err)
	}
	s := newSession(i, &c.cfg, conn, c.log, c.handleDeliver)
	s.paused = &c.paused
	if e, ok := c.sink.(provider.Expecter); ok {
		s.onTaken = func(ref string) { e.Expect(c.cfg.Name, ref) }
	}
	smsc, err := s.bind(dctx)
	if err != nil {
		s.close(err)
		return nil, err
	}
	s.run()
	c.log.Info("smpp: bound", "bind", i, "smsc", smsc, "addr", c.cfg.Addr)
	return s, nil
}

// unbound empties slot i after its session ended; redial marks it as
// dialing again at once, so that a Submit waits for the new bind.
func (c *Client) unbound(i int, redial bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessions[i], c.dialing[i] = nil, redial
	close(c.changed)
	c.changed = make(chan struct{})
}

// setDialing marks bind slot i as dialing and binding.
func (c *Client) setDialing(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dialing[i] = true
}

// bound ends slot i's dial and bind: s is its session, nil when it failed.
// Either way the Submits waiting on it look again.
func (c *Client) bound(i int, s *session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dialing[i] = false
	if s != nil {
		c.sessions[i] = s
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// pick returns a bound session, round-robin. While none is bound it waits
// only for a bind under way; when no bind is even being made (every slot
// waits to reconnect after a failure) it fails at once with errNoBind, so
// that the hand-over fails fast, counts against the provider's breaker and
// the route fails over, rather than holding the batch until its deadline.
func (c *Client) pick(ctx context.Context) (*session, error) {
	for {
		c.mu.Lock()
		if c.closing {
			c.mu.Unlock()
			return nil, errClosed
		}
		n := len(c.sessions)
		for k := range n {
			s := c.sessions[(c.next+k)%n]
			if s != nil && !s.isClosed() {
				c.next = (c.next + k + 1) % n
				c.mu.Unlock()
				return s, nil
			}
		}
		// A slot whose session closed and that keepBound has not emptied
		// yet counts as dialing: it may reconnect at once.
		dialing := !c.started
		for k, d := range c.dialing {
			dialing = dialing || d || c.sessions[k] != nil
		}
		changed, last := c.changed, c.lastErr
		c.mu.Unlock()
		if !dialing {
			return nil, noBind(last)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, noBind(last)
		}
	}
}

func (c *Client) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

func (c *Client) noteErr(err error) {
	if err == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastErr, c.lastErrAt = err.Error(), c.clock.Now()
}

// backoff is the wait before attempt n (from 1): lo doubled each time up to
// hi, with "equal jitter" (half fixed, half random) so that many binds or
// messages that failed together do not retry together.
func (c *Client) backoff(n int, lo, hi time.Duration) time.Duration {
	d, _ := backoff.Policy{Min: lo, Max: hi, Jitter: backoff.Equal, Rand: c.rand}.Delay(n)
	return d
}

// sleep waits d on the client's clock; false if ctx ended first.
func (c *Client) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-c.clock.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// sweepReassembly drops inbound parts whose message never completed.
func (c *Client) sweepReassembly(ctx context.Context) {
	every := min(c.cfg.ReassemblyTimeout/2, time.Minute)
	for c.sleep(ctx, every) {
		if n := c.reasm.expire(c.clock.Now()); n > 0 {
			c.log.Warn("smpp: incomplete inbound messages dropped", "count", n)
		}
	}
}

// HandOverChunk asks the dispatcher to record outcomes every four windows'
// worth of messages (provider.Chunker): an SMSC acknowledgement that a
// crash keeps from being recorded makes the message go out again.
func (c *Client) HandOverChunk() int { return 4 * c.cfg.Window * max(c.cfg.Binds, 1) }
