package smppserver

import (
	"context"
	"errors"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider/smpp"
	"github.com/msgsvc/msgsvc/internal/user"
)

// authenticate checks a bind: the user, its password, the account's
// allow-list and the user's bind limit. Every failure is the same to the
// peer; failures count against the address, and an address over its
// budget is refused before any password is hashed, unless the user has
// bound from it before.
func (s *Server) authenticate(ctx context.Context, ss *session, b *smpp.Bind) (domain.SMPPUser, domain.Account, bool) {
	addrKey := "smpp:" + ss.addr.String()
	u, acct, err := s.cfg.Users.SMPPUserBySystemID(ctx, b.SystemID)
	found := err == nil
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		s.cfg.Log.Warn("smpp: bind lookup", "err", err)
		return u, acct, false // storage failed, not the peer: nothing counted
	}
	if s.throttled(ctx, addrKey) && !(found && s.known(ctx, addrKey, u.ID)) {
		return u, acct, false
	}
	hash := s.dummyHash() // no user has the system_id: cost the same all the same
	if found {
		hash = u.PasswordHash
	}
	good, err := user.VerifyPassword(hash, b.Password)
	ok := err == nil && good && found && b.Password != "" && domain.AddrAllowed(acct.IPAllowlist, ss.addr)
	if !ok {
		s.countFailure(ctx, addrKey)
		return u, acct, false
	}
	if !s.binds.add(u, ss) || !s.reserve(ctx, u, ss) {
		return u, acct, false
	}
	if s.cfg.Guard != nil {
		if err := s.cfg.Guard.Remember(ctx, addrKey, u.ID); err != nil {
			s.cfg.Log.Warn("smpp: remember bind address", "err", err)
		}
	}
	return u, acct, true
}

func (s *Server) throttled(ctx context.Context, addrKey string) bool {
	if s.cfg.Guard == nil {
		return false
	}
	d, err := s.cfg.Guard.Exceeded(ctx, addrKey, s.cfg.BindFailuresPerMinute)
	if err != nil {
		s.cfg.Log.Warn("smpp: bind failure window unavailable", "err", err)
		return false
	}
	return !d.Allowed
}

func (s *Server) known(ctx context.Context, addrKey, userID string) bool {
	ok, err := s.cfg.Guard.Known(ctx, addrKey, userID)
	return err == nil && ok
}

func (s *Server) countFailure(ctx context.Context, addrKey string) {
	if s.cfg.Guard == nil {
		return
	}
	if _, err := s.cfg.Guard.Count(ctx, addrKey, s.cfg.BindFailuresPerMinute); err != nil {
		s.cfg.Log.Warn("smpp: count bind failure", "err", err)
	}
}

// reserve counts a bind against the user's maxBinds on every node; a
// refusal takes it off this node's registry again.
func (s *Server) reserve(ctx context.Context, u domain.SMPPUser, ss *session) bool {
	if s.cfg.Binds == nil {
		return true
	}
	now := s.cfg.Now()
	ok, err := s.cfg.Binds.ReserveSMPPBind(ctx, u.ID, ss.id, s.cfg.Owner, max(u.MaxBinds, 1), now, now.Add(bindTTL))
	if err != nil {
		s.cfg.Log.Warn("smpp: count binds", "err", err)
	}
	if err != nil || !ok {
		s.binds.remove(u.ID, ss)
		return false
	}
	return true
}
