// Package lifecycle starts a node's long-lived parts in the order they
// need each other and stops them in reverse, along one path: a part that
// fails to start stops those started before it, and a stop reaches every
// part even when some fail, so that nothing is left running or holding
// work.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Component is a long-lived part of a node. Start returns once the part
// runs (work it does in the background goes on until Stop); Stop returns
// once it has finished what it had taken, or when ctx ends.
type Component interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Hooks makes a Component of two functions; either may be nil.
type Hooks struct {
	OnStart func(ctx context.Context) error
	OnStop  func(ctx context.Context) error
}

func (h Hooks) Start(ctx context.Context) error {
	if h.OnStart == nil {
		return nil
	}
	return h.OnStart(ctx)
}

func (h Hooks) Stop(ctx context.Context) error {
	if h.OnStop == nil {
		return nil
	}
	return h.OnStop(ctx)
}

// Closer is a part that only needs closing at the end (storage, a
// connection pool).
func Closer(close func() error) Component {
	return Hooks{OnStop: func(context.Context) error { return close() }}
}

// Error is a part's failure to start or stop.
type Error struct {
	Name string
	Op   string // "start" or "stop"
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("%s %s: %v", e.Op, e.Name, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

type part struct {
	name string
	c    Component
}

// Group is a node's parts in dependency order: each is added after those
// it needs. Its zero value is ready to use.
type Group struct {
	mu      sync.Mutex
	parts   []part
	started int  // parts[:started] are running
	stopped bool // Stop ran: a stopped group does not start again
}

// Add registers a part. Parts added after Start are not started.
func (g *Group) Add(name string, c Component) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.parts = append(g.parts, part{name: name, c: c})
}

// Names are the parts' names in the order they start.
func (g *Group) Names() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, len(g.parts))
	for i, p := range g.parts {
		out[i] = p.name
	}
	return out
}

// Start starts the parts in the order they were added. When one fails,
// those already started are stopped (in reverse, under ctx) and the
// failure is returned with whatever their stop reported.
func (g *Group) Start(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return errors.New("lifecycle: start after stop")
	}
	for g.started < len(g.parts) {
		p := g.parts[g.started]
		if err := p.c.Start(ctx); err != nil {
			failed := &Error{Name: p.name, Op: "start", Err: err}
			return errors.Join(failed, g.stopLocked(ctx))
		}
		g.started++
	}
	return nil
}

// Stop stops the started parts in reverse order of their start, each
// under ctx, and joins their errors. Every part is asked to stop even
// when one before it failed or ctx ended. A second Stop does nothing.
func (g *Group) Stop(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stopLocked(ctx)
}

func (g *Group) stopLocked(ctx context.Context) error {
	g.stopped = true
	var errs []error
	for g.started > 0 {
		g.started--
		p := g.parts[g.started]
		if err := p.c.Stop(ctx); err != nil {
			errs = append(errs, &Error{Name: p.name, Op: "stop", Err: err})
		}
	}
	return errors.Join(errs...)
}

// Background is a part that works in its own goroutine: run works until
// its context ends, then returns once it has finished what it had taken.
// Stop ends it and waits for run to return, or for its ctx to end.
func Background(run func(ctx context.Context)) Component {
	return &background{run: run}
}

type background struct {
	run  func(ctx context.Context)
	mu   sync.Mutex
	stop context.CancelFunc
	done chan struct{}
}

func (b *background) Start(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done != nil {
		return nil
	}
	// The part runs until Stop, not until the start's ctx ends.
	ctx, b.stop = context.WithCancel(context.WithoutCancel(ctx))
	b.done = make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		b.run(ctx)
	}(b.done)
	return nil
}

func (b *background) Stop(ctx context.Context) error {
	b.mu.Lock()
	stop, done := b.stop, b.done
	b.mu.Unlock()
	if done == nil {
		return nil
	}
	stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
