package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/apikey"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
)

var (
	errMissingKey = problem("MISSING_API_KEY",
		"Send your API key in the X-API-KEY header or as Authorization: Bearer <key>.")
	errInvalidKey = problem("INVALID_API_KEY", "The API key is wrong or not active.")
	errIPBlocked  = problem("IP_NOT_ALLOWED", "This address is not on the account's IP allow-list.")
	errSuspended  = problem("ACCOUNT_SUSPENDED",
		"The account is suspended; nothing is done for it until it is resumed. Its queued and scheduled messages are held.")
)

// KeyStore finds an API key (and its account) by the key's hash, and
// records when a key was last used.
type KeyStore interface {
	KeyByHash(ctx context.Context, hash string) (domain.APIKey, domain.Account, error)
	TouchKey(ctx context.Context, keyID string, at time.Time) error
}

// Limiter counts a request against the account's windows (tier and type);
// one that is also a ratelimit.Inspector answers GET limits with its counts.
type Limiter interface {
	Allow(ctx context.Context, r ratelimit.Request) (ratelimit.Decision, error)
}

// AuthGuard counts failed authentications per client address.
type AuthGuard interface {
	Count(ctx context.Context, key string, limit int) (ratelimit.Decision, error)
	Exceeded(ctx context.Context, key string, limit int) (ratelimit.Decision, error)
}

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

// Proxies are the trusted proxies, whose X-Forwarded-For names the client.
type Proxies []netip.Prefix

// ClientAddr is the client's address: the TCP peer's, or, when the peer
// is one of the trusted proxies, the right-most address of X-Forwarded-For
// that is not itself a trusted proxy (each proxy appends the address it
// saw, so everything left of that is the client's own word). A header from
// an untrusted peer is ignored, and a malformed one leaves the peer. The
// API and the panel (which throttles logins by it) read it alike.
func (p Proxies) ClientAddr(r *http.Request) netip.Addr {
	peer := peerAddr(r.RemoteAddr)
	if !p.trusted(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer
		}
		if a = a.Unmap(); !p.trusted(a) {
			return a
		}
	}
	return peer
}

func (s *Server) clientAddr(r *http.Request) netip.Addr {
	return Proxies(s.cfg.TrustedProxies).ClientAddr(r)
}

func peerAddr(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

func (p Proxies) trusted(a netip.Addr) bool {
	for _, pr := range p {
		if pr.Contains(a) {
			return true
		}
	}
	return false
}

// wrapAuth authenticates, checks the allow-list, applies the account's rate
// limits, sets the rate-limit headers and runs h.
func (s *Server) wrapAuth(reqType string, h handler) http.Handler {
	return s.wrapAuthRead(reqType, h, false)
}

// cachedKeys is a key store that can answer from memory without reading
// the auth counter (keycache.Cache.KeyByHashCached).
type cachedKeys interface {
	KeyByHashCached(ctx context.Context, hash string) (domain.APIKey, domain.Account, int64, error)
}

// wrapAuthCached is wrapAuth for a handler whose work checks the auth
// counter itself, in the transaction that acts (a send: message.Caller's
// AuthVersion): the key and its account may come from the cache without
// a read of the counter for this request. The handler must authenticate
// afresh (reauth) when that check fails.
func (s *Server) wrapAuthCached(reqType string, h handler) http.Handler {
	return s.wrapAuthRead(reqType, h, true)
}

func (s *Server) wrapAuthRead(reqType string, h handler, cached bool) http.Handler {
	// A refusal on the strength of an unchecked cache answer (an address
	// the allow-list no longer lists, a rate limit since raised) is made
	// again on a fresh read before it is given.
	var fresh http.Handler
	if cached {
		fresh = s.wrapAuthRead(reqType, h, false)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		addr := s.clientAddr(r)
		addrKey := "ip:" + addr.String()
		raw := keyFrom(r)
		if raw == "" {
			s.authFailure(w, r, addrKey, errMissingKey)
			return
		}
		key, acct, version, err := s.lookupMaybeCached(r, raw, cached)
		if err != nil {
			s.authFailure(w, r, addrKey, err)
			return
		}
		if !domain.AddrAllowed(acct.IPAllowlist, addr) {
			if version != 0 {
				fresh.ServeHTTP(w, r)
				return
			}
			s.authFailure(w, r, addrKey, errIPBlocked)
			return
		}
		// A suspended account's key is still its key: the refusal is not an
		// authentication failure and costs the address nothing.
		if acct.Suspended() {
			if version != 0 {
				fresh.ServeHTTP(w, r)
				return
			}
			writeProblem(w, r, s.cfg.Log, errSuspended)
			return
		}
		s.touch(r, key.ID)

		if s.cfg.Limiter != nil {
			req := ratelimit.Request{Key: acct.ID, TierLimit: acct.Limits.TierRPM,
				Type: reqType, TypeLimit: typeLimit(acct.Limits, reqType)}
			d, err := s.cfg.Limiter.Allow(ctx, req)
			if err != nil {
				setRateHeaders(w.Header(), ratelimit.Untouched(req, s.cfg.Now()))
				writeProblem(w, r, s.cfg.Log, err)
				return
			}
			if !d.Allowed && version != 0 {
				fresh.ServeHTTP(w, r)
				return
			}
			setRateHeaders(w.Header(), d)
			if !d.Allowed {
				s.refuse(w, r, d)
				return
			}
		} else {
			// No limiter: nothing limits the request, which Limit 0 says.
			setRateHeaders(w.Header(), ratelimit.Untouched(ratelimit.Request{Key: acct.ID}, s.cfg.Now()))
		}
		if err := h(w, r, message.Caller{Account: acct, Key: key, AuthVersion: version}); err != nil {
			writeProblem(w, r, s.cfg.Log, err)
		}
	})
}

func (s *Server) lookup(r *http.Request, raw string) (domain.APIKey, domain.Account, error) {
	key, acct, _, err := s.lookupMaybeCached(r, raw, false)
	return key, acct, err
}

// lookupMaybeCached is lookup that, with cached, may answer from the key
// cache without reading the auth counter; the version it returns is then
// the counter the answer was read at (0: read fresh for this request).
func (s *Server) lookupMaybeCached(r *http.Request, raw string, cached bool) (domain.APIKey, domain.Account, int64, error) {
	if _, err := apikey.Parse(raw); err != nil {
		return domain.APIKey{}, domain.Account{}, 0, errInvalidKey
	}
	hash := apikey.Hash(raw)
	var key domain.APIKey
	var acct domain.Account
	var version int64
	var err error
	if c, ok := s.cfg.Store.(cachedKeys); ok && cached {
		key, acct, version, err = c.KeyByHashCached(r.Context(), hash)
	} else {
		key, acct, err = s.cfg.Store.KeyByHash(r.Context(), hash)
	}
	if errors.Is(err, domain.ErrNotFound) {
		return key, acct, 0, errInvalidKey
	}
	if err != nil {
		return key, acct, 0, err
	}
	if subtle.ConstantTimeCompare([]byte(key.Hash), []byte(hash)) != 1 || !key.RevokedAt.IsZero() {
		return key, acct, 0, errInvalidKey
	}
	return key, acct, version, nil
}

// reauth authenticates a request afresh, for a handler whose caller came
// from the key cache unchecked (wrapAuthCached) when its work found the
// auth counter moved, or may have refused it on the strength of what the
// cache held. It checks the key and the allow-list as wrapAuth does; when
// they fail it answers the request itself and returns false.
func (s *Server) reauth(w http.ResponseWriter, r *http.Request) (message.Caller, bool) {
	addr := s.clientAddr(r)
	addrKey := "ip:" + addr.String()
	key, acct, err := s.lookup(r, keyFrom(r))
	if err == nil && !domain.AddrAllowed(acct.IPAllowlist, addr) {
		err = errIPBlocked
	}
	if err != nil {
		s.authFailure(w, r, addrKey, err)
		return message.Caller{}, false
	}
	if acct.Suspended() {
		writeProblem(w, r, s.cfg.Log, errSuspended)
		return message.Caller{}, false
	}
	return message.Caller{Account: acct, Key: key}, true
}

// authFailure counts a failed authentication against the client address
// and answers with the failure, or with 429 once the address has used up
// its budget (the count refuses without counting then). The answer carries
// the address's failure window in both header families: there is no account
// to describe.
func (s *Server) authFailure(w http.ResponseWriter, r *http.Request, addrKey string, fail error) {
	var p *Problem
	if !errors.As(fail, &p) {
		// Storage failed, not the client: report the window, count nothing.
		setRateHeaders(w.Header(), s.addrWindow(r, addrKey, false))
		writeProblem(w, r, s.cfg.Log, fail)
		return
	}
	d := s.addrWindow(r, addrKey, true)
	setRateHeaders(w.Header(), d)
	if !d.Allowed {
		s.refuse(w, r, d)
		return
	}
	writeProblem(w, r, s.cfg.Log, fail)
}

// addrWindow reads (or, with count, counts one failure in) the address's
// failure window. Without a guard nothing limits failures (Limit 0); if the
// guard's backend fails, the window is reported untouched and the failure
// goes uncounted rather than turning an outage into refusals.
func (s *Server) addrWindow(r *http.Request, addrKey string, count bool) ratelimit.Decision {
	if s.cfg.Guard == nil {
		return ratelimit.Untouched(ratelimit.Request{Key: addrKey}, s.cfg.Now())
	}
	limit := s.cfg.AuthFailuresPerMinute
	var d ratelimit.Decision
	var err error
	if count {
		d, err = s.cfg.Guard.Count(r.Context(), addrKey, limit)
	} else {
		d, err = s.cfg.Guard.Exceeded(r.Context(), addrKey, limit)
	}
	if err != nil {
		s.cfg.Log.Warn("auth failure window unavailable", "err", err)
		return ratelimit.Untouched(ratelimit.Request{Key: addrKey, TierLimit: limit}, s.cfg.Now())
	}
	return d
}

// refuse answers 429 RATE_LIMITED with both header families and
// Retry-After: whole seconds, rounded up, until the exhausted window resets.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, d ratelimit.Decision) {
	setRateHeaders(w.Header(), d)
	secs := int((d.RetryAfter + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeProblem(w, r, s.cfg.Log, problem("RATE_LIMITED",
		"Too many requests; retry after "+strconv.Itoa(secs)+" seconds."))
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

func typeLimit(l domain.Limits, reqType string) int {
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
// window and RateLimit-* for the request-type window (the tier window for a
// request with no type). A family whose window is unlimited shows the other
// window instead, so that either family alone names what can refuse the
// request; Limit 0 (with Remaining 0) remains only when nothing can.
func setRateHeaders(h http.Header, d ratelimit.Decision) {
	tier, typ := d.Tier, d.Type
	if typ.Limit == 0 {
		typ = d.Tier
	}
	if tier.Limit == 0 {
		tier = d.Type
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(tier.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(tier.Remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(tier.Reset.Unix(), 10))
	h.Set("RateLimit-Limit", strconv.Itoa(typ.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(typ.Remaining))
	h.Set("RateLimit-Reset", strconv.FormatInt(typ.Reset.Unix(), 10))
}
