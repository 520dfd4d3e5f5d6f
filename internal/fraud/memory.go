package fraud

import (
	"context"
	"sync"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Memory is the guard's storage in memory (counters, hour marks and
// events) for a single process: tests, and measuring the guard alone.
type Memory struct {
	mu     sync.Mutex
	counts map[Count]int64 // keyed with N 0
	hours  map[domain.FraudHour]int64
	Events []domain.Event
}

// NewMemory makes an empty Memory.
func NewMemory() *Memory {
	return &Memory{counts: map[Count]int64{}, hours: map[domain.FraudHour]int64{}}
}

// AddFraudCounts adds the counts (Counters).
func (m *Memory) AddFraudCounts(_ context.Context, cs []Count) ([]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]int64, len(cs))
	for i, c := range cs {
		n := c.N
		c.N = 0
		m.counts[c] += n
		out[i] = m.counts[c]
	}
	return out, nil
}

// TrailingFraudCounts sums each count's hours before its own (Counters).
func (m *Memory) TrailingFraudCounts(_ context.Context, cs []Count, window int64) ([]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]int64, len(cs))
	for i, c := range cs {
		c.N = 0
		hour := c.Hour
		for h := hour - window; h < hour; h++ {
			c.Hour = h
			out[i] += m.counts[c]
		}
	}
	return out, nil
}

// MarkFraudHours adds the hours' decisions (Tx).
func (m *Memory) MarkFraudHours(_ context.Context, hs []domain.FraudHour) ([]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]bool, len(hs))
	for i, h := range hs {
		n := h.Messages
		h.Messages, h.Action, h.Scope = 0, "", ""
		_, seen := m.hours[h]
		out[i] = !seen
		m.hours[h] += n
	}
	return out, nil
}

// InsertEvents keeps the alert events (Tx).
func (m *Memory) InsertEvents(_ context.Context, evs []domain.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Events = append(m.Events, evs...)
	return nil
}

// Count reads one counter (N ignored).
func (m *Memory) Count(c Count) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	c.N = 0
	return m.counts[c]
}
