package twilio

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/twilio/sid"
)

// caller is who makes a request: the credential used, the account SID it
// acts for (an API key acts for its parent) and the account.
type caller struct {
	credSid    string
	accountSid string
	env        domain.Environment
	account    domain.Account
	// version, when not 0, is the auth counter the credential and account
	// were read at, from the cache without a read for this request.
	version int64
}

func (c caller) scope() message.Scope { return message.Scope{AccountID: c.account.ID, Env: c.env} }

func (c caller) principal() domain.Principal {
	return domain.Principal{Account: c.account, Kind: domain.CredentialTwilio, CredentialID: c.accountSid, Env: c.env,
		AuthVersion: c.version}
}

// authenticate checks HTTP Basic credentials and the allow-list. With
// cached, the credential may come from the cache without reading the
// auth counter (the caller's version says so); a refusal on the strength
// of such an answer is made again on a fresh read.
func (h *Handler) authenticate(r *http.Request, cached bool) (caller, error) {
	c, err := h.authenticateOnce(r, cached)
	if err != nil && cached && c.version != 0 {
		return h.authenticateOnce(r, false)
	}
	return c, err
}

func (h *Handler) authenticateOnce(r *http.Request, cached bool) (caller, error) {
	user, secret, ok := r.BasicAuth()
	if !ok || user == "" {
		return caller{}, errAuth
	}
	prefix := ""
	switch {
	case sid.Valid(sid.Account, user):
		prefix = sid.Account
	case sid.Valid(sid.APIKey, user):
		prefix = sid.APIKey
	default:
		return caller{}, errAuth
	}
	e, err := h.creds.get(r.Context(), user, cached)
	if errors.Is(err, domain.ErrNotFound) {
		return caller{}, errAuth
	}
	if err != nil {
		return caller{}, err
	}
	cred := e.cred
	// Compared as digests, so that the time taken tells nothing of the
	// secret's length either.
	want, got := sha256.Sum256([]byte(cred.Secret)), sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(want[:], got[:]) != 1 || cred.Secret == "" {
		return caller{version: e.version}, errAuth
	}
	c := caller{credSid: cred.Sid, accountSid: cred.Sid, env: cred.Env, account: e.account, version: e.version}
	switch {
	case prefix == sid.Account && cred.Kind == domain.TwilioAccountSid:
	case prefix == sid.APIKey && cred.Kind == domain.TwilioAPIKey && sid.Valid(sid.Account, cred.Parent):
		c.accountSid = cred.Parent
	default:
		return caller{version: e.version}, errAuth
	}
	if !domain.AddrAllowed(c.account.IPAllowlist, h.cfg.ClientAddr(r)) {
		return c, errIPBlocked
	}
	if c.account.Suspended() {
		return c, errSuspended
	}
	return c, nil
}

// credCache keeps credentials with their accounts in memory while the
// auth counter stands, as keycache does for API keys: a request costs a
// read of the counter instead of the credential and its account, and a
// send (which checks the counter in its own transaction) not even that.
type credCache struct {
	src     Credentials
	version func(ctx context.Context) (int64, error)

	mu      sync.Mutex
	entries map[string]credEntry
}

type credEntry struct {
	cred    domain.TwilioCredential
	account domain.Account
	version int64
}

// maxCredEntries bounds the cache; past it the cache starts over.
const maxCredEntries = 10000

func newCredCache(src Credentials, version func(ctx context.Context) (int64, error)) *credCache {
	return &credCache{src: src, version: version, entries: map[string]credEntry{}}
}

// get returns the credential as the database has it now, or with cached
// as the cache holds it (version not 0: unchecked). Without a counter
// every lookup reads the store.
func (c *credCache) get(ctx context.Context, credSid string, cached bool) (credEntry, error) {
	if c.version == nil {
		cred, acct, err := c.src.TwilioCredentialBySid(ctx, credSid)
		return credEntry{cred: cred, account: acct}, err
	}
	c.mu.Lock()
	e, ok := c.entries[credSid]
	c.mu.Unlock()
	if ok && cached {
		return e, nil
	}
	// The counter is read before the credential: a change after this
	// read moves it past v, so the entry is read again next time.
	v, err := c.version(ctx)
	if err != nil {
		return credEntry{}, err
	}
	if ok && e.version == v {
		e.version = 0
		return e, nil
	}
	cred, acct, err := c.src.TwilioCredentialBySid(ctx, credSid)
	if err != nil {
		return credEntry{}, err
	}
	c.mu.Lock()
	if len(c.entries) >= maxCredEntries {
		c.entries = map[string]credEntry{}
	}
	c.entries[credSid] = credEntry{cred: cred, account: acct, version: v}
	c.mu.Unlock()
	return credEntry{cred: cred, account: acct}, nil
}

func peerAddr(r *http.Request) netip.Addr {
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

func itoa(n int) string { return strconv.Itoa(n) }
