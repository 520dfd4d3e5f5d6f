// Package smppserver is the SMPP 3.4 server of msgsvc: accounts' ESMEs
// bind to it as they would to a carrier's SMSC, submit messages that go
// through the same send as the API, and receive their delivery receipts
// as deliver_sm. Receipts wait in a leased table (see the lease package)
// until a receiving bind of their SMPP user acknowledges them, so none is
// lost to a dropped session or a restart, on either side.
package smppserver

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/keycache"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
	"github.com/msgsvc/msgsvc/internal/user"
)

// Users finds the SMPP user a bind names, with its account as it is now;
// which bound users still exist; and a counter that moves whenever an
// account's settings change (store.AuthVersion).
type Users interface {
	SMPPUserBySystemID(ctx context.Context, systemID string) (domain.SMPPUser, domain.Account, error)
	SMPPUsersPresent(ctx context.Context, ids []string) (map[string]bool, error)
	AuthVersion(ctx context.Context) (int64, error)
}

// Sender is the core's send (intake.Service), as the API's.
type Sender interface {
	Send(ctx context.Context, who domain.Principal, r domain.SendRequest, opt intake.SendOptions) (intake.Outcome, error)
}

// BindStore counts a user's binds on every node together, so that
// maxBinds holds across nodes.
type BindStore interface {
	ReserveSMPPBind(ctx context.Context, b domain.SMPPBind, max int, now, until time.Time) (bool, error)
	RenewSMPPBinds(ctx context.Context, node string, ids []string, until time.Time) error
	DropSMPPBind(ctx context.Context, id string) error
	DropNodeSMPPBinds(ctx context.Context, node string, now time.Time) error
}

// bindTTL is how long a bind counts without being renewed: a node renews
// its binds every third of it, and a dead node's stop counting after it.
const bindTTL = 30 * time.Second

// Refusals keeps the refused binds and submits of SMPP users for
// operators, on every node.
type Refusals interface {
	RecordSMPPRefusal(ctx context.Context, r domain.SMPPRefusal) error
}

// Guard counts bind attempts per client address and per system_id, as
// failed API keys are counted.
type Guard interface {
	ratelimit.Failures
	ratelimit.KnownSet
}

// Observer is told what the server does (metrics); nil fields are skipped.
type Observer struct {
	Binds    func(delta int)                   // a bind opened (+1) or closed (-1)
	Submit   func(status uint32)               // a submit_sm answered with this command_status
	BindFail func()                            // a bind refused
	Receipt  func(acked bool, d time.Duration) // a deliver_sm answered (or not)
}

// Config sets up a Server.
type Config struct {
	Users  Users
	Sender Sender
	Items  Items
	// Binds counts binds across nodes; nil counts this node's only.
	Binds BindStore
	// Limiter applies the account's send rate limit to submit_sm; nil
	// limits nothing.
	Limiter ratelimit.Limiter
	// Guard throttles bind attempts per address and per system_id; nil
	// throttles nothing.
	Guard Guard
	// BindFailuresPerMinute is the budget of bind attempts of an address,
	// and of a system_id, where the user has not bound before (default 10).
	BindFailuresPerMinute int
	// Slots bound the password hashes running at once; the panel's logins
	// share them (nil: one slot of the server's own).
	Slots *user.Slots
	// Verify checks a password against its hash (nil: user.VerifyPassword).
	Verify func(hash, password string) (bool, error)
	// MaxUnboundPerAddr bounds the connections of one address that have
	// not bound yet (default 16): more are closed at once.
	MaxUnboundPerAddr int
	// Refusals keeps refused binds and submits for operators (nil: they
	// are only logged).
	Refusals Refusals
	// TLS, when set, serves SMPP over TLS instead of plain TCP.
	TLS *tls.Config
	// Owner is this node's name in the leases of the receipt queue.
	Owner string
	// Window bounds unanswered requests each way per bind (default 100).
	Window int
	// EnquireLink is the idle time after which the server checks the link
	// (default 30 s); a bind silent for three times as long is closed.
	EnquireLink time.Duration
	// ResponseTimeout bounds the wait for a deliver_sm_resp (default 30 s).
	ResponseTimeout time.Duration
	// Poll is how often waiting receipts are looked for in the table, and
	// removed users and changed accounts noticed (default 1 s).
	Poll time.Duration
	// Hasher is the cost of the dummy hash a bind of an unknown system_id
	// is checked against, so that it costs what a known one does; it
	// should be the cost SMPP passwords are hashed at (zero:
	// user.Recommended()).
	Hasher   user.Hasher
	Now      func() time.Time
	Log      *slog.Logger
	Observer Observer
}

// Server accepts SMPP connections.
type Server struct {
	cfg      Config
	binds    *registry
	queue    *receiptQueue
	mu       sync.Mutex
	ln       net.Listener
	conns    map[*session]struct{}
	unbound  map[netip.Addr]int // connections not bound yet, by address (under mu)
	repeats  repeats            // refusals held back as exact repeats
	bindSeq  atomic.Int64
	wg       sync.WaitGroup
	shutdown chan struct{}
	stopOnce sync.Once
	// dummyHash is made once, at the first bind of an unknown system_id.
	dummyHash func() string
	// auth reads the counter that moves when an account's settings change
	// or a user is removed, coalescing concurrent reads; seen is the value
	// the binds were last checked against (under checking).
	auth     *keycache.Counter
	checking sync.Mutex
	seen     int64
}

// New builds a Server; Serve starts it.
func New(c Config) *Server {
	if c.BindFailuresPerMinute <= 0 {
		c.BindFailuresPerMinute = 10
	}
	if c.Window <= 0 {
		c.Window = 100
	}
	if c.EnquireLink <= 0 {
		c.EnquireLink = 30 * time.Second
	}
	if c.ResponseTimeout <= 0 {
		c.ResponseTimeout = 30 * time.Second
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Slots == nil {
		c.Slots = user.NewSlots(1)
	}
	if c.Verify == nil {
		c.Verify = user.VerifyPassword
	}
	if c.MaxUnboundPerAddr <= 0 {
		c.MaxUnboundPerAddr = 16
	}
	s := &Server{unbound: map[netip.Addr]int{}, cfg: c, binds: newRegistry(), conns: map[*session]struct{}{}, shutdown: make(chan struct{}),
		dummyHash: sync.OnceValue(func() string {
			h, _ := c.Hasher.Hash("not-a-password")
			return h
		}), auth: keycache.NewCounter(c.Users.AuthVersion, 0)}
	s.queue = newReceiptQueue(s)
	return s
}

// Serve accepts connections on ln until ctx ends or Close is called, then
// closes every bind and returns once their sessions have ended.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	if s.cfg.Binds != nil {
		// This node's binds of a previous run are closed.
		if err := s.cfg.Binds.DropNodeSMPPBinds(ctx, s.cfg.Owner, s.cfg.Now()); err != nil {
			s.cfg.Log.Warn("smpp: forget the binds of a previous run; they expire", "err", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-ctx.Done():
		case <-s.shutdown:
		}
		ln.Close()
	}()
	s.wg.Add(2)
	go func() { defer s.wg.Done(); s.queue.run(ctx) }()
	go func() { defer s.wg.Done(); s.watch(ctx) }()
	var err error
	for {
		conn, aerr := ln.Accept()
		if aerr != nil {
			if ctx.Err() == nil && !errors.Is(aerr, net.ErrClosed) {
				err = aerr
			}
			break
		}
		s.start(ctx, conn)
	}
	cancel()
	s.closeAll()
	s.wg.Wait()
	return err
}

// Close stops Serve.
func (s *Server) Close() { s.stopOnce.Do(func() { close(s.shutdown) }) }

// Addr is the address Serve listens on (nil before Serve).
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

func (s *Server) start(ctx context.Context, conn net.Conn) {
	ss := newSession(s, conn)
	s.mu.Lock()
	if s.unbound[ss.addr] >= s.cfg.MaxUnboundPerAddr {
		s.mu.Unlock()
		s.cfg.Log.Warn("smpp: connection refused", "remoteAddr", ss.addr.String(), "reason", reasonUnboundConnCap,
			"unbound", s.cfg.MaxUnboundPerAddr)
		conn.Close()
		return
	}
	s.unbound[ss.addr]++
	ss.unbound.Store(true)
	s.conns[ss] = struct{}{}
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ss.serve(ctx)
		s.bound(ss)
		s.mu.Lock()
		delete(s.conns, ss)
		s.mu.Unlock()
	}()
}

// bound stops counting a session among its address's unbound connections,
// once: at its bind, or at its end.
func (s *Server) bound(ss *session) {
	if !ss.unbound.CompareAndSwap(true, false) {
		return
	}
	s.mu.Lock()
	if s.unbound[ss.addr]--; s.unbound[ss.addr] <= 0 {
		delete(s.unbound, ss.addr)
	}
	s.mu.Unlock()
}

func (s *Server) closeAll() {
	s.mu.Lock()
	all := make([]*session, 0, len(s.conns))
	for ss := range s.conns {
		all = append(all, ss)
	}
	s.mu.Unlock()
	for _, ss := range all {
		ss.shutdown()
	}
}

// UserRemoved closes the binds of a removed SMPP user at once; the other
// nodes notice within a poll.
func (s *Server) UserRemoved(userID string) {
	for _, ss := range s.binds.of(userID) {
		ss.shutdown()
	}
}

// Wake tells the server that receipts may be waiting in the table.
func (s *Server) Wake() { s.queue.q.Wake() }

// LeaseReceipt says whether a new receipt or reply of an SMPP user is to
// be written leased to this node, to whom and until when, for
// HandReceipts after its commit: when the user has a receiving bind here
// and no rows waiting in the table before it.
func (s *Server) LeaseReceipt(userID string) (owner string, until time.Time, ok bool) {
	until, ok = s.queue.lease(userID)
	return s.cfg.Owner, until, ok
}

// HandReceipts takes rows written as LeaseReceipt said, once committed:
// they go to the user's binds without a claim.
func (s *Server) HandReceipts(ctx context.Context, items []domain.SMPPItem) { s.queue.hand(ctx, items) }

// watch closes the binds of users removed on any node and refreshes the
// accounts the binds act for (senders, limits, allow-list), once a poll.
func (s *Server) watch(ctx context.Context) {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	lastPurge, lastRenew := time.Time{}, s.cfg.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if now := s.cfg.Now(); now.Sub(lastPurge) >= time.Minute {
			lastPurge = now
			if _, err := s.cfg.Items.PurgeSMPPItems(ctx, now); err != nil {
				s.cfg.Log.Warn("smpp: purge expired receipts", "err", err)
			}
		}
		s.checking.Lock()
		s.checkBinds(ctx, &s.seen)
		s.checking.Unlock()
		if now := s.cfg.Now(); now.Sub(lastRenew) >= bindTTL/3 {
			lastRenew = now
			s.renewBinds(ctx, now)
		}
	}
}

// current reports whether a session's bind still stands for a request
// now: the counter is read afresh, and when it moved (a user removed or an
// account changed on any node) the binds are checked at once rather than
// at the next poll. A submit_sm needs it only when its send found the
// counter moved since its bind's account was read (see accept).
func (s *Server) current(ctx context.Context, ss *session) bool {
	v, err := s.auth.Get(ctx)
	if err != nil {
		s.cfg.Log.Warn("smpp: read the settings counter", "err", err)
		return false
	}
	s.checking.Lock()
	if v != s.seen {
		s.checkBinds(ctx, &s.seen)
	}
	s.checking.Unlock()
	return !ss.isClosed()
}

// refresh reads a bind's user and account again, after the counter, so
// that its next submit_sm carries the counter as it stands: current
// refreshes the binds it knew of when the counter moved, not one that
// bound while it read. It closes the bind of a removed user, of a
// suspended account or of an address no longer allowed, and reports
// whether the bind still stands.
func (s *Server) refresh(ctx context.Context, ss *session) bool {
	u, _, _ := ss.callerAt()
	v, err := s.cfg.Users.AuthVersion(ctx)
	if err != nil {
		s.cfg.Log.Warn("smpp: read the settings counter", "err", err)
		return !ss.isClosed() // current read it just now: the send need not check it
	}
	got, acct, err := s.cfg.Users.SMPPUserBySystemID(ctx, u.SystemID)
	switch {
	case errors.Is(err, domain.ErrNotFound) || err == nil && got.ID != u.ID:
		s.UserRemoved(u.ID)
	case err != nil:
		s.cfg.Log.Warn("smpp: read a bound user", "err", err)
	case acct.Suspended():
		s.cfg.Log.Info("smpp: bind closed, the account is suspended", "systemId", u.SystemID, "account", acct.ID,
			"suspendedBy", acct.SuspendedBy, "addr", ss.addr.String())
		ss.shutdown()
	case !domain.AddrAllowed(acct.IPAllowlist, ss.addr):
		ss.shutdown()
	default:
		ss.setAccount(acct, v)
	}
	return !ss.isClosed()
}

// renewBinds keeps this node's binds counted across nodes.
func (s *Server) renewBinds(ctx context.Context, now time.Time) {
	if s.cfg.Binds == nil {
		return
	}
	ids := s.binds.ids()
	if len(ids) == 0 {
		return
	}
	if err := s.cfg.Binds.RenewSMPPBinds(ctx, s.cfg.Owner, ids, now.Add(bindTTL)); err != nil {
		s.cfg.Log.Warn("smpp: renew binds", "err", err)
	}
}

// checkBinds closes the binds of removed users and, when accounts' settings
// changed, of suspended accounts and of addresses their account no
// longer allows, and gives the others their account as it is now. When
// nothing changed it costs two small reads.
func (s *Server) checkBinds(ctx context.Context, seen *int64) {
	users := s.binds.users()
	if len(users) == 0 {
		return
	}
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	present, err := s.cfg.Users.SMPPUsersPresent(ctx, ids)
	if err != nil {
		s.cfg.Log.Warn("smpp: check bound users", "err", err)
		return
	}
	for _, u := range users {
		if !present[u.ID] {
			s.UserRemoved(u.ID)
		}
	}
	v, err := s.cfg.Users.AuthVersion(ctx)
	if err != nil || v == *seen {
		return
	}
	*seen = v
	for _, u := range users {
		got, acct, err := s.cfg.Users.SMPPUserBySystemID(ctx, u.SystemID)
		switch {
		case errors.Is(err, domain.ErrNotFound) || err == nil && got.ID != u.ID:
			s.UserRemoved(u.ID)
		case err != nil:
			*seen = 0 // look again on the next poll
		default:
			for _, ss := range s.binds.of(u.ID) {
				if acct.Suspended() {
					s.cfg.Log.Info("smpp: bind closed, the account is suspended", "systemId", u.SystemID, "account", acct.ID,
						"suspendedBy", acct.SuspendedBy, "addr", ss.addr.String())
					ss.shutdown()
					continue
				}
				if !domain.AddrAllowed(acct.IPAllowlist, ss.addr) {
					ss.shutdown()
					continue
				}
				ss.setAccount(acct, v)
			}
		}
	}
}

// peerAddr is the client's address without a port.
func peerAddr(c net.Conn) netip.Addr {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// registry is this node's binds by SMPP user.
type registry struct {
	mu     sync.Mutex
	byUser map[string]map[*session]struct{}
	user   map[string]domain.SMPPUser
	next   map[string]int // round-robin of receiving binds
}

func newRegistry() *registry {
	return &registry{byUser: map[string]map[*session]struct{}{}, user: map[string]domain.SMPPUser{}, next: map[string]int{}}
}

// add registers a bind unless its user already holds MaxBinds on this node.
func (r *registry) add(u domain.SMPPUser, ss *session) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	set := r.byUser[u.ID]
	if len(set) >= max(u.MaxBinds, 1) {
		return false
	}
	if set == nil {
		set = map[*session]struct{}{}
		r.byUser[u.ID] = set
	}
	set[ss] = struct{}{}
	r.user[u.ID] = u
	return true
}

func (r *registry) remove(userID string, ss *session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byUser[userID], ss)
	if len(r.byUser[userID]) == 0 {
		delete(r.byUser, userID)
		delete(r.user, userID)
		delete(r.next, userID)
	}
}

func (r *registry) of(userID string) []*session {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*session, 0, len(r.byUser[userID]))
	for ss := range r.byUser[userID] {
		out = append(out, ss)
	}
	return out
}

// ids lists the ids of this node's binds.
func (r *registry) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, set := range r.byUser {
		for ss := range set {
			out = append(out, ss.id)
		}
	}
	return out
}

func (r *registry) users() []domain.SMPPUser {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]domain.SMPPUser, 0, len(r.user))
	for _, u := range r.user {
		out = append(out, u)
	}
	return out
}

// receivers gives the users with a receiving bind on this node, each with
// the room its receiving binds' windows have for deliver_sm, and the
// accounts of those users (keyed "accountID:env") with their users' room
// together. A user whose windows are full is left out: its rows stay in
// the table, and the claim goes to the other users.
func (r *registry) receivers() (users, accounts map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	users, accounts = map[string]int{}, map[string]int{}
	for id, set := range r.byUser {
		room := 0
		for ss := range set {
			if ss.receives() && !ss.isClosed() {
				room += cap(ss.outgoing) - len(ss.outgoing)
			}
		}
		if room == 0 {
			// The next answer to free room wakes the queue for this
			// user's rows, rather than the next poll.
			for ss := range set {
				if ss.receives() {
					ss.starved.Store(true)
				}
			}
			continue
		}
		users[id] = room
		u := r.user[id]
		accounts[u.AccountID+":"+string(u.Env)] += room
	}
	return users, accounts
}

// receiverOf names a user of the account and environment with a
// receiving bind here ("" when none).
func (r *registry) receiverOf(accountID string, env domain.Environment) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, set := range r.byUser {
		u := r.user[id]
		if u.AccountID != accountID || u.Env != env {
			continue
		}
		for ss := range set {
			if ss.receives() && !ss.isClosed() {
				return id
			}
		}
	}
	return ""
}

// receivesHere reports whether the user has an open receiving bind here.
func (r *registry) receivesHere(userID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for ss := range r.byUser[userID] {
		if ss.receives() && !ss.isClosed() {
			return true
		}
	}
	return false
}

// receiver picks a receiving bind of the user, round-robin; nil if none.
func (r *registry) receiver(userID string) *session {
	r.mu.Lock()
	defer r.mu.Unlock()
	var rx []*session
	for ss := range r.byUser[userID] {
		if ss.receives() && !ss.isClosed() {
			rx = append(rx, ss)
		}
	}
	if len(rx) == 0 {
		return nil
	}
	i := r.next[userID] % len(rx)
	r.next[userID] = i + 1
	return rx[i]
}
