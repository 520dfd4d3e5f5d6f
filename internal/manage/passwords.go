package manage

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/ratelimit"
	"github.com/msgsvc/msgsvc/internal/user"
)

// Checking a password costs argon2id's 64 MiB and tens of milliseconds of
// CPU. Unbounded, a burst of wrong passwords takes the process's memory
// and every request's latency with it. The gate bounds it three ways, all
// before any hashing: a failure window per address and per account (or per
// user, for password changes), one check at a time per address and per
// account (so a burst cannot slip past a window that has not counted its
// first failures yet), and a few checks at a time in the whole process,
// sized from the memory the process may use.

// ErrThrottled: too many password attempts, or one already running, for
// the address or account; nothing was checked. RetryAfter says when to
// come back.
type ErrThrottled struct{ RetryAfter time.Duration }

func (e *ErrThrottled) Error() string {
	return fmt.Sprintf("too many password attempts; retry in %s", e.RetryAfter)
}

// IsThrottled reports a refused password attempt.
func IsThrottled(err error) (*ErrThrottled, bool) {
	var t *ErrThrottled
	ok := errors.As(err, &t)
	return t, ok
}

// argonMiB is what one check takes (the hash's memory parameter).
const argonMiB = 64

// hashWait bounds how long a check waits for a slot before it is refused.
const hashWait = 10 * time.Second

type passwordGate struct {
	slots    *user.Slots
	failures ratelimit.Failures // nil: no windows (tests of other things)
	limit    int                // failures per minute per key

	mu       sync.Mutex
	inFlight map[string]int
}

// gateKey is a key of the failure windows and how many checks it may have
// running at once: one per account; a few per address, which many users
// may share behind one proxy.
type gateKey struct {
	name    string
	running int
}

func newPasswordGate(failures ratelimit.Failures, limit int, slots *user.Slots) *passwordGate {
	if limit <= 0 {
		limit = 10
	}
	return &passwordGate{slots: slots, failures: failures, limit: limit, inFlight: map[string]int{}}
}

// HashSlots is how many password checks may run at once: an eighth of the
// memory the process may use (its Go memory limit, else its cgroup's, else
// the machine's), in checks of 64 MiB; at least one, and at most half the
// CPUs, since each check runs on two threads: the API's requests keep the
// other half.
func HashSlots() int {
	budget := memoryBudget() / 8
	n := int(budget / (argonMiB << 20))
	return max(1, min(n, runtime.NumCPU()/2))
}

func memoryBudget() int64 {
	if l := debug.SetMemoryLimit(-1); l > 0 && l < 1<<50 {
		return l
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if kb, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				if n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(kb, "kB")), 10, 64); err == nil {
					return n << 10
				}
			}
		}
	}
	return 1 << 30
}

// check runs verify (a password check) for keys unless one of them is over
// its failure window or already has a check running; a false verify counts
// a failure against every key.
func (g *passwordGate) check(ctx context.Context, keys []gateKey, verify func() bool) (bool, error) {
	for _, k := range keys {
		if err := g.window(ctx, k.name, false); err != nil {
			return false, err
		}
	}
	if !g.enter(keys) {
		return false, &ErrThrottled{RetryAfter: time.Second}
	}
	defer g.leave(keys)
	if !g.slots.Acquire(ctx, hashWait) {
		return false, &ErrThrottled{RetryAfter: time.Second}
	}
	ok := verify()
	g.slots.Release()
	if !ok {
		for _, k := range keys {
			_ = g.window(ctx, k.name, true)
		}
	}
	return ok, nil
}

// window reads (or counts a failure in) a key's failure window. A window
// that cannot be read lets the attempt through: the in-flight rule and the
// slots still bound the cost.
func (g *passwordGate) window(ctx context.Context, key string, count bool) error {
	if g.failures == nil {
		return nil
	}
	var d ratelimit.Decision
	var err error
	if count {
		d, err = g.failures.Count(ctx, key, g.limit)
	} else {
		d, err = g.failures.Exceeded(ctx, key, g.limit)
	}
	if err != nil || d.Allowed || count {
		return nil
	}
	return &ErrThrottled{RetryAfter: max(d.RetryAfter, time.Second)}
}

func (g *passwordGate) enter(keys []gateKey) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range keys {
		if g.inFlight[k.name] >= max(k.running, 1) {
			return false
		}
	}
	for _, k := range keys {
		g.inFlight[k.name]++
	}
	return true
}

func (g *passwordGate) leave(keys []gateKey) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range keys {
		if g.inFlight[k.name]--; g.inFlight[k.name] <= 0 {
			delete(g.inFlight, k.name)
		}
	}
}

// hash makes a password hash in one of the hashing slots, as a check takes
// one: making a hash costs what checking one does. No slot within hashWait
// is ErrThrottled.
func (s *Service) hash(ctx context.Context, pw string) (string, error) {
	if !s.gate.slots.Acquire(ctx, hashWait) {
		return "", &ErrThrottled{RetryAfter: time.Second}
	}
	defer s.gate.slots.Release()
	return s.hasher.Hash(pw)
}
