package api

import (
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"msgsvc/internal/apikey"
	"msgsvc/internal/message"
	"msgsvc/internal/ratelimit"
	"msgsvc/internal/store"
)

var (
	errMissingKey = problem(http.StatusUnauthorized, "MISSING_API_KEY",
		"Send your API key in the X-API-KEY header or as Authorization: Bearer <key>.")
	errInvalidKey = problem(http.StatusUnauthorized, "INVALID_API_KEY", "The API key is wrong or not active.")
	errIPBlocked  = problem(http.StatusForbidden, "IP_NOT_ALLOWED", "This address is not on the account's IP allow-list.")
)

// keyFrom reads the key from either header the contract accepts.
func keyFrom(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-API-KEY")); k != "" {
		return k
	}
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// clientAddr is the peer's address. msgsvc does not trust forwarding
// headers: a proxy in front must preserve the client address at the
// network level or the allow-list sees the proxy.
func clientAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

// wrapAuth authenticates, checks the allow-list, applies the account's rate
// limits, sets the rate-limit headers and runs h.
func (s *Server) wrapAuth(reqType string, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		addr := clientAddr(r)
		addrKey := "ip:" + addr.String()
		raw := keyFrom(r)

		// A client address that failed authentication too often is refused
		// before its key is even looked at, so guessing is slow. Keys that
		// already worked from this address keep working.
		if s.cfg.Guard != nil {
			d, err := s.cfg.Guard.Exceeded(ctx, addrKey, s.cfg.AuthFailuresPerMinute)
			if err == nil && !d.Allowed && !s.knownHere(r, addrKey, raw) {
				s.refuse(w, r, d)
				return
			}
		}
		if raw == "" {
			s.authFailure(w, r, addrKey, errMissingKey)
			return
		}
		key, acct, err := s.lookup(r, raw)
		if err != nil {
			s.authFailure(w, r, addrKey, err)
			return
		}
		if !allowed(acct.IPAllowlist, addr) {
			s.authFailure(w, r, addrKey, errIPBlocked)
			return
		}
		s.remember(r, addrKey, key.ID)
		s.touch(r, key.ID)

		if s.cfg.Limiter != nil {
			d, err := s.cfg.Limiter.Allow(ctx, ratelimit.Request{Key: acct.ID, TierLimit: acct.Limits.TierRPM,
				Type: reqType, TypeLimit: typeLimit(acct.Limits, reqType)})
			if err != nil {
				writeProblem(w, r, s.cfg.Log, err)
				return
			}
			setRateHeaders(w.Header(), d)
			if !d.Allowed {
				s.refuse(w, r, d)
				return
			}
		}
		if err := h(w, r, message.Caller{Account: acct, Key: key}); err != nil {
			writeProblem(w, r, s.cfg.Log, err)
		}
	})
}

func (s *Server) lookup(r *http.Request, raw string) (store.APIKey, store.Account, error) {
	if _, err := apikey.Parse(raw); err != nil {
		return store.APIKey{}, store.Account{}, errInvalidKey
	}
	hash := apikey.Hash(raw)
	key, acct, err := s.cfg.Store.KeyByHash(r.Context(), hash)
	if errors.Is(err, store.ErrNotFound) {
		return key, acct, errInvalidKey
	}
	if err != nil {
		return key, acct, err
	}
	if subtle.ConstantTimeCompare([]byte(key.Hash), []byte(hash)) != 1 || !key.RevokedAt.IsZero() {
		return key, acct, errInvalidKey
	}
	return key, acct, nil
}

// authFailure counts a failed authentication against the client address
// and answers with the failure (or 429 once the budget is spent). The
// answer carries the address's window in both header families: there is
// no account to describe.
func (s *Server) authFailure(w http.ResponseWriter, r *http.Request, addrKey string, fail error) {
	var p *Problem
	if !errors.As(fail, &p) {
		writeProblem(w, r, s.cfg.Log, fail)
		return
	}
	if s.cfg.Guard != nil {
		d, err := s.cfg.Guard.Count(r.Context(), addrKey, s.cfg.AuthFailuresPerMinute)
		if err == nil {
			setRateHeaders(w.Header(), d)
			if !d.Allowed {
				s.refuse(w, r, d)
				return
			}
		}
	}
	writeProblem(w, r, s.cfg.Log, fail)
}

func (s *Server) refuse(w http.ResponseWriter, r *http.Request, d ratelimit.Decision) {
	setRateHeaders(w.Header(), d)
	secs := int((d.RetryAfter + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeProblem(w, r, s.cfg.Log, problem(http.StatusTooManyRequests, "RATE_LIMITED",
		"Too many requests; retry after "+strconv.Itoa(secs)+" seconds."))
}

// knownHere reports whether raw is a key that already authenticated from
// this address (so a lock-out of the address does not lock it out).
func (s *Server) knownHere(r *http.Request, addrKey, raw string) bool {
	if raw == "" {
		return false
	}
	if _, err := apikey.Parse(raw); err != nil {
		return false
	}
	key, _, err := s.cfg.Store.KeyByHash(r.Context(), apikey.Hash(raw))
	if err != nil {
		return false
	}
	ok, err := s.cfg.Guard.Known(r.Context(), addrKey, key.ID)
	return err == nil && ok
}

// remember records that a key works from an address, at most once an hour
// per pair: it is only needed if the address is locked out later.
func (s *Server) remember(r *http.Request, addrKey, keyID string) {
	if s.cfg.Guard == nil {
		return
	}
	k := addrKey + "|" + keyID
	now := s.cfg.Now()
	if v, ok := s.known.Load(k); ok && now.Sub(v.(time.Time)) < time.Hour {
		return
	}
	if err := s.cfg.Guard.Remember(r.Context(), addrKey, keyID); err == nil {
		s.known.Store(k, now)
	}
}

// touch records a key's last use at most once a minute: a write per
// request would cost more than the request.
func (s *Server) touch(r *http.Request, keyID string) {
	now := s.cfg.Now()
	if v, ok := s.touched.Load(keyID); ok && now.Sub(v.(time.Time)) < time.Minute {
		return
	}
	s.touched.Store(keyID, now)
	if err := s.cfg.Store.TouchKey(r.Context(), keyID, now); err != nil {
		s.cfg.Log.Warn("record key use", "err", err)
	}
}

// allowed checks an address against an allow-list of addresses and CIDR
// ranges; an empty list allows everyone.
func allowed(list []string, addr netip.Addr) bool {
	if len(list) == 0 {
		return true
	}
	for _, e := range list {
		e = strings.TrimSpace(e)
		if p, err := netip.ParsePrefix(e); err == nil {
			if p.Contains(addr) {
				return true
			}
			continue
		}
		if a, err := netip.ParseAddr(e); err == nil && a.Unmap() == addr {
			return true
		}
	}
	return false
}

func typeLimit(l store.Limits, reqType string) int {
	switch reqType {
	case typeSending:
		return l.SendRPM
	case typeStatus:
		return l.StatusRPM
	case typeMedia:
		return l.MediaRPM
	}
	return 0
}

// setRateHeaders writes both header families: X-RateLimit-* for the tier
// window and RateLimit-* for the request-type window.
func setRateHeaders(h http.Header, d ratelimit.Decision) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(d.Tier.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(d.Tier.Remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(d.Tier.Reset.Unix(), 10))
	h.Set("RateLimit-Limit", strconv.Itoa(d.Type.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.Type.Remaining))
	h.Set("RateLimit-Reset", strconv.FormatInt(d.Type.Reset.Unix(), 10))
}
