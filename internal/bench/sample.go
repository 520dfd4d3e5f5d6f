package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// DBProbe looks at the database server of a run, when it runs on this
// machine: the CPU time of the server processes serving the nodes (from
// /proc, by process id) and how many of the nodes' sessions wait on a lock.
type DBProbe interface {
	// Processes lists the ids of the server processes whose CPU counts:
	// the backends serving the nodes and the server's own writers.
	Processes(ctx context.Context) ([]int, error)
	// LockWaits counts the nodes' sessions waiting on a lock right now.
	LockWaits(ctx context.Context) (int, error)
}

// MemPoint is the nodes' memory when a number of messages had been accepted.
type MemPoint struct {
	Messages   int     `json:"messages"`
	PeakRSSMiB float64 `json:"peakRssMiB"` // the largest VmHWM of the nodes so far
	RSSMiB     float64 `json:"rssMiB"`     // the nodes' current resident memory, summed
}

// LockStats is what sampling the database's lock waits during a run saw.
type LockStats struct {
	Samples     int `json:"samples"`
	WithWaiters int `json:"samplesWithWaiters"`
	MaxWaiters  int `json:"maxWaiters"`
}

// sampler watches a run while it goes: the nodes' memory at the
// checkpoints (a tenth, half and all of the messages accepted) and the
// database's lock waits.
type sampler struct {
	pids        []int
	probe       DBProbe
	accepted    *atomic.Int64
	checkpoints []int
	every       time.Duration

	mu    sync.Mutex
	mem   []MemPoint
	locks LockStats
}

func newSampler(pids []int, probe DBProbe, accepted *atomic.Int64, n int) *sampler {
	var cps []int
	for _, c := range []int{n / 10, n / 2, n} {
		if c > 0 && (len(cps) == 0 || cps[len(cps)-1] < c) {
			cps = append(cps, c)
		}
	}
	return &sampler{pids: pids, probe: probe, accepted: accepted, checkpoints: cps, every: 200 * time.Millisecond}
}

// run samples until ctx ends.
func (s *sampler) run(ctx context.Context) {
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		s.sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *sampler) sample(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := int(s.accepted.Load())
	for len(s.mem) < len(s.checkpoints) && got >= s.checkpoints[len(s.mem)] && len(s.pids) > 0 {
		p := MemPoint{Messages: s.checkpoints[len(s.mem)]}
		for _, pid := range s.pids {
			peak, cur := procMem(pid)
			p.PeakRSSMiB = max(p.PeakRSSMiB, peak)
			p.RSSMiB += cur
		}
		s.mem = append(s.mem, p)
	}
	if s.probe == nil {
		return
	}
	n, err := s.probe.LockWaits(ctx)
	if err != nil {
		return
	}
	s.locks.Samples++
	if n > 0 {
		s.locks.WithWaiters++
	}
	s.locks.MaxWaiters = max(s.locks.MaxWaiters, n)
}

// result is what was sampled; the last checkpoint is taken now if the run
// ended between two ticks.
func (s *sampler) result(ctx context.Context) ([]MemPoint, LockStats) {
	s.sample(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]MemPoint(nil), s.mem...), s.locks
}

// processCPU reads the CPU used so far by the database's processes.
func processCPU(ctx context.Context, db DBProbe) (map[int]time.Duration, error) {
	pids, err := db.Processes(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		if d, err := procCPU(pid); err == nil {
			out[pid] = d
		}
	}
	return out, nil
}

// cpuDelta is the CPU the database's processes used between two
// snapshots: a process seen only at the end started during the run and
// counts whole; one that ended during the run is lost (the nodes keep
// their connections for the whole run, so that is rare).
func cpuDelta(before, after map[int]time.Duration) time.Duration {
	var d time.Duration
	for pid, t := range after {
		d += t - before[pid]
	}
	return d
}
