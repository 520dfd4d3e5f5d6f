package ratelimit

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Open builds the backend named by MSGSVC_RATE_LIMIT_BACKEND: "" or "memory"
// for a single node, or a redis:// or rediss:// URL for a shared one. The
// returned close function releases the backend's connections.
func Open(spec, prefix string, now func() time.Time) (Backend, func() error, error) {
	switch {
	case spec == "" || spec == "memory":
		return NewMemory(now), func() error { return nil }, nil
	case strings.HasPrefix(spec, "redis://") || strings.HasPrefix(spec, "rediss://"):
		opts, err := redis.ParseURL(spec)
		if err != nil {
			// url.Error repeats the URL, password included; keep only the cause.
			if ue := (*url.Error)(nil); errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, nil, fmt.Errorf("ratelimit: backend URL: %w", err)
		}
		failFast(opts)
		c := redis.NewClient(opts)
		return NewRedis(c, prefix, now), c.Close, nil
	default:
		return nil, nil, errors.New(`ratelimit: backend must be "memory" or a redis:// URL`)
	}
}

// Limits for a limiter that must fail open quickly: every request waits for
// it. go-redis's defaults (5 s dial timeout, five dial attempts 100 ms apart,
// three command retries with backoff) suit a cache, not a per-request check
// that answers in well under a millisecond when healthy.
const (
	fastDialTimeout = 250 * time.Millisecond
	fastIOTimeout   = 250 * time.Millisecond
	fastPoolTimeout = 500 * time.Millisecond
	fastMaxBackoff  = 10 * time.Millisecond
)

// failFast shortens the timeouts and retries that the URL left at their
// defaults; values set explicitly in the URL (dial_timeout=, read_timeout=,
// max_retries=, ...) are kept.
func failFast(o *redis.Options) {
	if o.DialTimeout == 0 {
		o.DialTimeout = fastDialTimeout
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = fastIOTimeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = o.ReadTimeout
	}
	if o.PoolTimeout == 0 {
		o.PoolTimeout = fastPoolTimeout
	}
	// One dial per attempt; one command retry is kept so that a connection
	// the server closed while idle (EOF) does not fail a request.
	if o.DialerRetries <= 0 {
		o.DialerRetries = 1
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 1
	}
	if o.MaxRetryBackoff == 0 {
		o.MaxRetryBackoff = fastMaxBackoff
	}
	if o.MinRetryBackoff == 0 {
		o.MinRetryBackoff = time.Millisecond
	}
}
