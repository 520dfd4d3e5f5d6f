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
		c := redis.NewClient(opts)
		return NewRedis(c, prefix, now), c.Close, nil
	default:
		return nil, nil, errors.New(`ratelimit: backend must be "memory" or a redis:// URL`)
	}
}
