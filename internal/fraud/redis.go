package fraud

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// countTTL keeps an hour's count through the baseline's window after it.
const countTTL = (BaselineHours + 2) * time.Hour

// Redis keeps the counts in Redis, shared by every node that uses the
// same server and prefix: one pipelined round trip per call. A count's
// key is prefix + "{account}" + ":env:scope:key:hour"; the braces keep
// one account's keys in one cluster slot.
type Redis struct {
	c      redis.UniversalClient
	prefix string
}

// NewRedis makes counters on c whose keys start with prefix.
func NewRedis(c redis.UniversalClient, prefix string) *Redis { return &Redis{c: c, prefix: prefix} }

func (r *Redis) key(c Count, hour int64) string {
	return r.prefix + "{" + c.AccountID + "}:" + string(c.Env) + ":" + c.Scope + ":" + c.Key + ":" + strconv.FormatInt(hour, 10)
}

// AddFraudCounts adds the counts (Counters).
func (r *Redis) AddFraudCounts(ctx context.Context, cs []Count) ([]int64, error) {
	cmds := make([]*redis.IntCmd, len(cs))
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range cs {
			k := r.key(c, c.Hour)
			cmds[i] = p.IncrBy(ctx, k, c.N)
			p.Expire(ctx, k, countTTL)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fraud: redis counts: %w", err)
	}
	out := make([]int64, len(cs))
	for i, cmd := range cmds {
		out[i] = cmd.Val()
	}
	return out, nil
}

// TrailingFraudCounts sums each count's hours before its own (Counters).
func (r *Redis) TrailingFraudCounts(ctx context.Context, cs []Count, window int64) ([]int64, error) {
	keys := make([]string, 0, len(cs)*int(window))
	for _, c := range cs {
		for h := c.Hour - window; h < c.Hour; h++ {
			keys = append(keys, r.key(c, h))
		}
	}
	out := make([]int64, len(cs))
	for start := 0; start < len(keys); start += 1000 {
		end := min(start+1000, len(keys))
		vals, err := r.c.MGet(ctx, keys[start:end]...).Result()
		if err != nil {
			return nil, fmt.Errorf("fraud: redis baselines: %w", err)
		}
		for j, v := range vals {
			s, ok := v.(string)
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				continue
			}
			out[(start+j)/int(window)] += n
		}
	}
	return out, nil
}
