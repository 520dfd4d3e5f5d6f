package app

import "context"

// service is a background part of a node (the dispatcher, the webhook
// worker, the sweeper…): run works until its context ends, then returns
// once it has finished what it had taken, so that Stop can wait for it.
type service struct {
	name string
	run  func(ctx context.Context)
	stop context.CancelFunc
	done chan struct{}
}

// Start runs the service in its own goroutine until Stop.
func (s *service) Start(ctx context.Context) {
	ctx, s.stop = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		s.run(ctx)
	}()
}

// Stop ends the service and waits for it to return, or for ctx to end.
func (s *service) Stop(ctx context.Context) error {
	s.stop()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// services are a node's background services in the order they start:
// each before those that hand it work, so that it stops after them.
type services []*service

func (ss services) start(ctx context.Context) {
	for _, s := range ss {
		s.Start(ctx)
	}
}

// stop stops the services in reverse order within ctx, and returns the
// names of those that did not stop in time (they were told to stop).
func (ss services) stop(ctx context.Context) []string {
	var late []string
	for i := len(ss) - 1; i >= 0; i-- {
		if err := ss[i].Stop(ctx); err != nil {
			late = append(late, ss[i].name)
		}
	}
	return late
}
