package smppserver

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	smpp "github.com/msgsvc/msgsvc/internal/pdu"
)

// hashWait bounds how long a bind waits for a hashing slot before it is
// refused: the panel's logins and the SMPP binds share the slots.
const hashWait = 10 * time.Second

// Reasons a bind is refused, for the log and the operator's view; the peer
// gets ESME_RBINDFAIL for each, so that nothing can be enumerated.
const (
	reasonUnknownUser    = "unknown system_id"
	reasonWrongPassword  = "wrong password"
	reasonAddrNotAllowed = "address not in the account's IP allow-list"
	reasonMaxBinds       = "the user has maxBinds binds open already"
	reasonAddrThrottled  = "too many bind attempts from the address"
	reasonUserThrottled  = "too many bind attempts for the system_id"
	reasonHashBusy       = "no password-hashing slot free in time"
	reasonStorageFailed  = "the user could not be read (storage)"
	reasonMalformedBind  = "malformed bind"
	reasonUnboundConnCap = "too many unbound connections from the address"
	reasonSuspended      = "the account is suspended"
)

// authenticate checks a bind: the user, its password, the account's
// allow-list and the user's bind limit. Every failure is the same to the
// peer; the reason is returned for the log and the operator's view.
//
// A password hash costs tens of megabytes and milliseconds, so it is
// bounded before it starts: an attempt from an address where the user has
// never bound counts against the address and against the system_id (on
// every address) before its hash, and one over either budget is refused
// without hashing; every hash takes one of the process's hashing slots,
// which the panel's logins share. A user that has bound from the address
// before is not held by those windows, so that an attacker elsewhere
// cannot lock it out; its wrong passwords still count, after the hash.
//
// It also returns the settings counter as read before the user and its
// account (0 when that read failed: the bind's first submit_sm then reads
// it afresh).
func (s *Server) authenticate(ctx context.Context, ss *session, kind smpp.CommandID, b *smpp.Bind) (domain.SMPPUser, domain.Account, int64, string) {
	at, err := s.cfg.Users.AuthVersion(ctx)
	if err != nil {
		at = 0
	}
	u, acct, reason := s.authenticateUser(ctx, ss, kind, b)
	return u, acct, at, reason
}

// authenticateUser is authenticate without the counter.
func (s *Server) authenticateUser(ctx context.Context, ss *session, kind smpp.CommandID, b *smpp.Bind) (domain.SMPPUser, domain.Account, string) {
	addrKey := "smpp:" + ss.addr.String()
	userKey := "smpp-user:" + strings.ToLower(b.SystemID)
	u, acct, err := s.cfg.Users.SMPPUserBySystemID(ctx, b.SystemID)
	found := err == nil
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		s.cfg.Log.Warn("smpp: bind lookup", "err", err)
		return u, acct, reasonStorageFailed // storage failed, not the peer: nothing counted
	}
	known := found && s.known(ctx, addrKey, u.ID)
	if !known {
		if !s.spend(ctx, addrKey) {
			return u, acct, reasonAddrThrottled
		}
		if !s.spend(ctx, userKey) {
			return u, acct, reasonUserThrottled
		}
	}
	hash := s.dummyHash() // no user has the system_id: cost the same all the same
	if found {
		hash = u.PasswordHash
	}
	if !s.cfg.Slots.Acquire(ctx, hashWait) {
		return u, acct, reasonHashBusy
	}
	good, err := s.cfg.Verify(hash, b.Password)
	s.cfg.Slots.Release()
	reason := ""
	switch {
	case !found:
		reason = reasonUnknownUser
	case err != nil || !good || b.Password == "":
		reason = reasonWrongPassword
	case !domain.AddrAllowed(acct.IPAllowlist, ss.addr):
		reason = reasonAddrNotAllowed
	}
	if reason != "" {
		if known {
			s.spend(ctx, addrKey) // counted before the hash for the others
		}
		return u, acct, reason
	}
	// Checked only once the password proved who binds, and not counted as
	// a wrong password is (only as every attempt is, before the hash): the
	// ESME of a suspended account is expected to keep trying until it is
	// resumed. The peer sees ESME_RBINDFAIL as for any
	// other refusal (section 8 names no status of its own for this).
	if acct.Suspended() {
		return u, acct, reasonSuspended
	}
	if !s.binds.add(u, ss) || !s.reserve(ctx, u, ss, kind) {
		return u, acct, reasonMaxBinds
	}
	if s.cfg.Guard != nil {
		if err := s.cfg.Guard.Remember(ctx, addrKey, u.ID); err != nil {
			s.cfg.Log.Warn("smpp: remember bind address", "err", err)
		}
	}
	return u, acct, ""
}

// spend counts one bind attempt against key's window and reports whether
// the window had room for it. A window that cannot be counted lets the
// attempt through: the hashing slots still bound the cost.
func (s *Server) spend(ctx context.Context, key string) bool {
	if s.cfg.Guard == nil {
		return true
	}
	d, err := s.cfg.Guard.Count(ctx, key, s.cfg.BindFailuresPerMinute)
	if err != nil {
		s.cfg.Log.Warn("smpp: bind attempt window unavailable", "err", err)
		return true
	}
	return d.Allowed
}

func (s *Server) known(ctx context.Context, addrKey, userID string) bool {
	if s.cfg.Guard == nil {
		return false
	}
	ok, err := s.cfg.Guard.Known(ctx, addrKey, userID)
	return err == nil && ok
}

// reserve counts a bind against the user's maxBinds on every node; a
// refusal takes it off this node's registry again.
func (s *Server) reserve(ctx context.Context, u domain.SMPPUser, ss *session, kind smpp.CommandID) bool {
	if s.cfg.Binds == nil {
		return true
	}
	now := s.cfg.Now()
	ok, err := s.cfg.Binds.ReserveSMPPBind(ctx, domain.SMPPBind{ID: ss.id, UserID: u.ID, Node: s.cfg.Owner, Addr: ss.addr.String(),
		Type: kind.String()}, max(u.MaxBinds, 1), now, now.Add(bindTTL))
	if err != nil {
		s.cfg.Log.Warn("smpp: count binds", "err", err)
	}
	if err != nil || !ok {
		s.binds.remove(u.ID, ss)
		return false
	}
	return true
}
