package app

import "context"

// service is a background part of a node (the dispatcher, the webhook
// worker, the sweeper…): run works until its context ends, then returns
// once it has finished what it had taken. The node's lifecycle runs each
// in its own goroutine (lifecycle.Background).
type service struct {
	name string
	run  func(ctx context.Context)
}

// services are a node's background services in the order they start:
// each before those that hand it work, so that it stops after them.
type services []*service
