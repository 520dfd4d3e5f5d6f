package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// counterTTL outlives a window comfortably, so a counter cannot vanish while
// its window is current even with some clock skew between nodes.
const counterTTL = 2 * time.Minute

// checkAndCount counts one hit on every KEYS[i] (limit ARGV[i]) only if all
// of them are below their limits, so the check and the increments are one
// atomic step. ARGV[#KEYS+1] is the expiry in seconds, set when a counter is
// created. Returns {allowed (0|1), count1, count2, ...}: counts after the hit
// when allowed, the unchanged counts when refused.
const checkAndCount = `
local n = #KEYS
local counts = {}
local ok = 1
for i = 1, n do
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  counts[i] = c
  if c >= tonumber(ARGV[i]) then ok = 0 end
end
if ok == 1 then
  local ttl = tonumber(ARGV[n + 1])
  for i = 1, n do
    local c = redis.call('INCR', KEYS[i])
    if c == 1 then redis.call('EXPIRE', KEYS[i], ttl) end
    counts[i] = c
  end
end
return {ok, unpack(counts)}
`

// breakerCooldown is how long Redis answers ErrUnavailable without asking
// the server after a round trip failed. A server that accepts connections
// but does not answer would otherwise cost every request a full timeout;
// with the breaker only one request per cooldown pays it.
const breakerCooldown = time.Second

// ErrUnavailable is returned without a round trip while the Redis backend
// is cooling down after a failure to reach the server.
var ErrUnavailable = errors.New("ratelimit: redis unavailable after a recent failure")

// Redis is a backend shared by every node using the same server and prefix.
// Each Allow, Usage, Count, Exceeded, Remember and Known is one round trip.
//
// Keys are prefix + "{" + key + "}" + suffix; the braces form a cluster hash
// tag, so the tier and type counters of one account share a slot and the
// script may touch both.
type Redis struct {
	c      redis.UniversalClient
	prefix string
	now    func() time.Time
	script *redis.Script
	// downUntil is the Unix nanosecond time until which the breaker is open;
	// 0 when closed.
	downUntil atomic.Int64
}

var _ Backend = (*Redis)(nil)

// NewRedis returns a backend on c whose keys all start with prefix; now nil
// means time.Now. Window ids come from now, not from the server's TIME, so
// every node must keep its clock in sync (as it must for Reset headers anyway).
func NewRedis(c redis.UniversalClient, prefix string, now func() time.Time) *Redis {
	if now == nil {
		now = time.Now
	}
	return &Redis{c: c, prefix: prefix, now: now, script: redis.NewScript(checkAndCount)}
}

// clock lets FailOpen report the same window edges as the wrapped backend.
func (r *Redis) clock() time.Time { return r.now() }

func (r *Redis) key(key, suffix string) string {
	return r.prefix + "{" + key + "}" + suffix
}

func (r *Redis) tierKey(key string, id int64) string {
	return r.key(key, ":t:"+strconv.FormatInt(id, 10))
}

// typeKey puts the type last: window ids are digits only, so the layout stays
// unambiguous whatever the type contains.
func (r *Redis) typeKey(key, typ string, id int64) string {
	return r.key(key, ":y:"+strconv.FormatInt(id, 10)+":"+typ)
}

func (r *Redis) failureKey(key string, id int64) string {
	return r.key(key, ":f:"+strconv.FormatInt(id, 10))
}

func (r *Redis) knownKey(addr, keyID string) string {
	return r.key(addr, ":k:"+keyID)
}

// Allow checks and, if both windows have room, counts req in one round trip.
func (r *Redis) Allow(ctx context.Context, req Request) (Decision, error) {
	if err := checkKey(req.Key); err != nil {
		return Decision{}, err
	}
	req = req.normalized()
	now := r.now()
	id := windowID(now)

	// Only limited windows are stored; with none there is nothing to ask.
	var keys []string
	var args []any
	if req.TierLimit > 0 {
		keys = append(keys, r.tierKey(req.Key, id))
		args = append(args, req.TierLimit)
	}
	if req.typed() && req.TypeLimit > 0 {
		keys = append(keys, r.typeKey(req.Key, req.Type, id))
		args = append(args, req.TypeLimit)
	}
	ok, counts, err := r.run(ctx, keys, args)
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: allow %q: %w", req.Key, err)
	}
	tierUsed, typeUsed := 0, 0
	if req.TierLimit > 0 {
		tierUsed, counts = counts[0], counts[1:]
	}
	if req.typed() && req.TypeLimit > 0 {
		typeUsed = counts[0]
	}
	return req.decision(ok, tierUsed, typeUsed, now, windowReset(id)), nil
}

// run executes the check-and-count script; with no keys it admits directly.
func (r *Redis) run(ctx context.Context, keys []string, args []any) (bool, []int, error) {
	if len(keys) == 0 {
		return true, nil, nil
	}
	args = append(args, int64(counterTTL/time.Second))
	var res []int64
	err := r.guarded(ctx, func() (err error) {
		res, err = r.script.Run(ctx, r.c, keys, args...).Int64Slice()
		return err
	})
	if err != nil {
		return false, nil, err
	}
	if len(res) != len(keys)+1 {
		return false, nil, fmt.Errorf("script returned %d values for %d keys", len(res), len(keys))
	}
	counts := make([]int, len(keys))
	for i, c := range res[1:] {
		counts[i] = int(c)
	}
	return res[0] == 1, counts, nil
}

// Count records one failure for key unless limit is already reached.
func (r *Redis) Count(ctx context.Context, key string, limit int) (Decision, error) {
	return r.failure(ctx, key, limit, true)
}

// Exceeded reports key's failure window without counting.
func (r *Redis) Exceeded(ctx context.Context, key string, limit int) (Decision, error) {
	return r.failure(ctx, key, limit, false)
}

// failure decides on key's failure window, counting one more failure in
// it when count is set.
func (r *Redis) failure(ctx context.Context, key string, limit int, count bool) (Decision, error) {
	if err := checkKey(key); err != nil {
		return Decision{}, err
	}
	req := failureRequest(key, limit)
	now := r.now()
	id := windowID(now)
	if req.TierLimit == 0 {
		return req.decision(true, 0, 0, now, windowReset(id)), nil
	}
	if count {
		ok, counts, err := r.run(ctx, []string{r.failureKey(key, id)}, []any{req.TierLimit})
		if err != nil {
			return Decision{}, fmt.Errorf("ratelimit: count failure %q: %w", key, err)
		}
		return req.decision(ok, counts[0], 0, now, windowReset(id)), nil
	}
	var used int
	err := r.guarded(ctx, func() (err error) {
		used, err = r.c.Get(ctx, r.failureKey(key, id)).Int()
		if errors.Is(err, redis.Nil) {
			return nil
		}
		return err
	})
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: read failures %q: %w", key, err)
	}
	return req.decision(req.admits(used, 0), used, 0, now, windowReset(id)), nil
}

// Remember marks keyID as having authenticated from addrKey for the next 24 h.
func (r *Redis) Remember(ctx context.Context, addrKey, keyID string) error {
	if err := checkKey(addrKey); err != nil {
		return err
	}
	if err := r.guarded(ctx, func() error {
		return r.c.Set(ctx, r.knownKey(addrKey, keyID), 1, knownTTL).Err()
	}); err != nil {
		return fmt.Errorf("ratelimit: remember key at %q: %w", addrKey, err)
	}
	return nil
}

// Known reports whether keyID authenticated from addrKey within the last 24 h.
// Expiry is Redis's own TTL, so it follows the server's clock, not now.
func (r *Redis) Known(ctx context.Context, addrKey, keyID string) (bool, error) {
	if err := checkKey(addrKey); err != nil {
		return false, err
	}
	var n int64
	err := r.guarded(ctx, func() (err error) {
		n, err = r.c.Exists(ctx, r.knownKey(addrKey, keyID)).Result()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("ratelimit: check known key at %q: %w", addrKey, err)
	}
	return n == 1, nil
}

// Ping checks that the server answers, for readiness probes. It asks even
// while the breaker is open, and its outcome opens or closes the breaker.
func (r *Redis) Ping(ctx context.Context) error {
	err := r.c.Ping(ctx).Err()
	r.observe(ctx, err)
	if err != nil {
		return fmt.Errorf("ratelimit: redis ping: %w", err)
	}
	return nil
}

// Usage reports key's windows without counting, in one round trip.
func (r *Redis) Usage(ctx context.Context, key string, tierLimit int, typeLimits map[string]int) (Usage, error) {
	if err := checkKey(key); err != nil {
		return Usage{}, err
	}
	now := r.now()
	id := windowID(now)
	u := Unused(now, tierLimit, typeLimits)
	// Only limited windows are stored, so only they are read.
	var keys []string
	var fill []func(used int)
	if tierLimit > 0 {
		keys = append(keys, r.tierKey(key, id))
		fill = append(fill, func(used int) { u.Tier = window(tierLimit, used, u.Tier.Reset) })
	}
	for typ, limit := range typeLimits {
		if limit > 0 {
			keys = append(keys, r.typeKey(key, typ, id))
			fill = append(fill, func(used int) { u.Types[typ] = window(limit, used, u.Tier.Reset) })
		}
	}
	if len(keys) == 0 {
		return u, nil
	}
	var vals []any
	err := r.guarded(ctx, func() (err error) {
		vals, err = r.c.MGet(ctx, keys...).Result()
		return err
	})
	if err != nil {
		return Usage{}, fmt.Errorf("ratelimit: usage %q: %w", key, err)
	}
	for i, v := range vals {
		used := 0
		if sv, ok := v.(string); ok {
			if used, err = strconv.Atoi(sv); err != nil {
				return Usage{}, fmt.Errorf("ratelimit: usage %q: counter %q: %w", key, keys[i], err)
			}
		}
		fill[i](used)
	}
	return u, nil
}

// guarded runs one round trip unless the breaker is open, and lets its
// outcome open or close the breaker.
func (r *Redis) guarded(ctx context.Context, op func() error) error {
	if until := r.downUntil.Load(); until != 0 && r.now().UnixNano() < until {
		return ErrUnavailable
	}
	err := op()
	r.observe(ctx, err)
	return err
}

// observe opens the breaker when err says the server could not be reached
// or did not answer, and closes it on success. A reply error (a script
// error, NOSCRIPT, READONLY) proves the server answered, and a caller that
// gave up proves nothing about the server; neither changes the breaker.
func (r *Redis) observe(ctx context.Context, err error) {
	var reply redis.Error
	switch {
	case err == nil:
		// Loading first keeps the hot path free of writes to a shared word.
		if r.downUntil.Load() != 0 {
			r.downUntil.Store(0)
		}
	case errors.As(err, &reply) || ctx.Err() != nil:
	default:
		r.downUntil.Store(r.now().Add(breakerCooldown).UnixNano())
	}
}

// Client is the connection the backend uses, for other counters shared by
// the same nodes (the fraud guard's).
func (r *Redis) Client() redis.UniversalClient { return r.c }
