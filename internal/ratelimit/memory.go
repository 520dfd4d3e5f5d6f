package ratelimit

import (
	"context"
	"sync"
	"time"
)

// counterKind keeps tier, type and failure counters of one key apart.
type counterKind uint8

const (
	kindTier counterKind = iota + 1
	kindType
	kindFailure
)

type counterKey struct {
	kind counterKind
	key  string
	typ  string
}

type knownKey struct{ addr, keyID string }

// Memory is a single-node backend. All counters live in one map that belongs
// to the current window; when the window changes the map is replaced, so
// memory is bounded by the keys active within one minute and pruning costs
// nothing per request.
type Memory struct {
	now func() time.Time

	mu     sync.Mutex
	window int64 // window the counts map belongs to
	counts map[counterKey]int
	known  map[knownKey]time.Time // expiry of each remembered pair
}

var _ Backend = (*Memory)(nil)

// NewMemory returns an empty in-process backend; now nil means time.Now.
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, counts: map[counterKey]int{}, known: map[knownKey]time.Time{}}
}

// clock lets FailOpen report the same window edges as the wrapped backend.
func (m *Memory) clock() time.Time { return m.now() }

// advance moves the store to the window containing now. It must be called
// with mu held and with now read under mu: otherwise a caller holding an
// older timestamp could drag the store back a window and wipe fresh counts.
func (m *Memory) advance(now time.Time) int64 {
	id := windowID(now)
	if id != m.window {
		m.window = id
		m.counts = map[counterKey]int{}
		// Known pairs expire on their own schedule; sweeping them once per
		// window change keeps the map bounded without per-request cost.
		for k, exp := range m.known {
			if !now.Before(exp) {
				delete(m.known, k)
			}
		}
	}
	return id
}

// Allow checks and, if both windows have room, counts r.
func (m *Memory) Allow(_ context.Context, r Request) (Decision, error) {
	if err := checkKey(r.Key); err != nil {
		return Decision{}, err
	}
	r = r.normalized()
	tk := counterKey{kind: kindTier, key: r.Key}
	yk := counterKey{kind: kindType, key: r.Key, typ: r.Type}

	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	id := m.advance(now)
	tierUsed, typeUsed := m.counts[tk], 0
	if r.typed() {
		typeUsed = m.counts[yk]
	}
	ok := r.admits(tierUsed, typeUsed)
	if ok {
		// Unlimited windows are not stored: nothing ever reads them.
		if r.TierLimit > 0 {
			tierUsed++
			m.counts[tk] = tierUsed
		}
		if r.typed() && r.TypeLimit > 0 {
			typeUsed++
			m.counts[yk] = typeUsed
		}
	}
	return r.decision(ok, tierUsed, typeUsed, now, windowReset(id)), nil
}

// Usage reports key's windows without counting.
func (m *Memory) Usage(_ context.Context, key string, tierLimit int, typeLimits map[string]int) (Usage, error) {
	if err := checkKey(key); err != nil {
		return Usage{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	reset := windowReset(m.advance(m.now()))
	u := Usage{Tier: window(max(tierLimit, 0), m.counts[counterKey{kind: kindTier, key: key}], reset),
		Types: make(map[string]Window, len(typeLimits))}
	for typ, limit := range typeLimits {
		u.Types[typ] = window(max(limit, 0), m.counts[counterKey{kind: kindType, key: key, typ: typ}], reset)
	}
	return u, nil
}

// Count records one failure for key unless limit is already reached.
func (m *Memory) Count(_ context.Context, key string, limit int) (Decision, error) {
	return m.failure(key, limit, true)
}

// Exceeded reports key's failure window without counting.
func (m *Memory) Exceeded(_ context.Context, key string, limit int) (Decision, error) {
	return m.failure(key, limit, false)
}

func (m *Memory) failure(key string, limit int, count bool) (Decision, error) {
	if err := checkKey(key); err != nil {
		return Decision{}, err
	}
	r := failureRequest(key, limit)
	k := counterKey{kind: kindFailure, key: key}

	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	id := m.advance(now)
	used := m.counts[k]
	ok := r.admits(used, 0)
	if ok && count && r.TierLimit > 0 {
		used++
		m.counts[k] = used
	}
	return r.decision(ok, used, 0, now, windowReset(id)), nil
}

// Remember marks keyID as having authenticated from addrKey for the next 24 h.
func (m *Memory) Remember(_ context.Context, addrKey, keyID string) error {
	if err := checkKey(addrKey); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.advance(now)
	m.known[knownKey{addrKey, keyID}] = now.Add(knownTTL)
	return nil
}

// Known reports whether keyID authenticated from addrKey within the last 24 h.
func (m *Memory) Known(_ context.Context, addrKey, keyID string) (bool, error) {
	if err := checkKey(addrKey); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	exp, ok := m.known[knownKey{addrKey, keyID}]
	return ok && m.now().Before(exp), nil
}

// Ping always succeeds: an in-process map is always ready.
func (m *Memory) Ping(context.Context) error { return nil }
