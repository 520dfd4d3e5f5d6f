package simulator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
)

// The simulator is run by the server as one of its workers (Run), not
// started and stopped like a configured adapter; running is that worker
// as an Adapter, so that the simulator passes the same suite.
type running struct {
	*Simulator
	mu   sync.Mutex
	stop context.CancelFunc
	done chan struct{}
}

func (r *running) Start(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop, r.done = cancel, make(chan struct{})
	go func() { defer close(r.done); r.Run(ctx) }()
	return nil
}

func (r *running) Stop(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop == nil {
		return nil
	}
	r.stop()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *running) Health() provider.Health { return provider.Health{Ready: true, Detail: "simulated"} }

// journal fails while down, as storage would: the simulator then takes
// nothing, like a carrier that did not answer.
type journal struct{ down atomic.Bool }

func (j *journal) JournalSubmissions(_ context.Context, _ string, ids []string, _ time.Time) (map[string]bool, error) {
	if j.down.Load() {
		return nil, errors.New("database unreachable")
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

type noStale struct{}

func (noStale) StaleMessages(context.Context, string, time.Time, string, int) ([]domain.Message, error) {
	return nil, nil
}

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.Harness{Name: Name,
		New: func(t *testing.T, sink provider.Sink) providertest.Instance {
			j := &journal{}
			sim := &running{Simulator: New(Config{Sink: sink, Stale: noStale{}, Journal: j, Delay: 5 * time.Millisecond, Node: "n1"})}
			ms := &providertest.Messages{Template: provider.Outbound{Channel: domain.SMS, Body: "hi", Env: domain.Test}}
			return providertest.Instance{Adapter: sim,
				Accept:    func(i int) provider.Outbound { return ms.To(fmt.Sprintf("4477009%05d", 100+i)) },
				Permanent: func() provider.Outbound { return ms.To("447700900" + EndInvalid) },
				Temporary: func() provider.Outbound { j.down.Store(true); return ms.To("447700900100") },
			}
		}})
}
