package provider

import (
	"context"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Usable is what every adapter's New checks before it builds anything:
// the configuration's problems (invalid, its Validate's), then a Sink for
// the statuses and replies. typ names the adapter in the error.
func Usable(typ string, invalid error, sink Sink) error {
	if invalid != nil {
		return invalid
	}
	if sink == nil {
		return fmt.Errorf("%s: no sink for statuses and replies", typ)
	}
	return nil
}

// Collected finishes the build of adapter a: it registers its metrics c
// with d and returns a, or the registration's error.
func Collected(d Deps, c prometheus.Collector, a Adapter) (Adapter, error) {
	if err := d.Collect(c); err != nil {
		return nil, err
	}
	return a, nil
}

// StartOnce lets an adapter's Start run its start only the first time:
// the service may start an adapter it already runs, and a second start
// must not connect or check credentials again. The zero value is ready.
type StartOnce struct{ once sync.Once }

// Start runs start the first time and returns its error; later calls
// return nil.
func (o *StartOnce) Start(ctx context.Context, start func(context.Context) error) error {
	var err error
	o.once.Do(func() { err = start(ctx) })
	return err
}
