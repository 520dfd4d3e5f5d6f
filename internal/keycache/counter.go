package keycache

import (
	"context"
	"time"
)

// Counter reads the version counter for many concurrent callers, each
// getting a read that began after it asked (see fresh): other caches of
// what an account's row holds (the webhook worker's signing secrets) use
// it to see a change on the very next use, on every node.
type Counter struct{ f fresh }

// NewCounter makes a Counter over read (store.AuthVersion). Reads start
// at least gap apart: under load, callers then share fewer reads, each
// waiting up to gap longer for its own; alone, a caller still gets a read
// at once.
func NewCounter(read func(ctx context.Context) (int64, error), gap time.Duration) *Counter {
	return &Counter{f: fresh{read: read, gap: gap}}
}

// Get returns the counter as of a read that began after the call.
func (c *Counter) Get(ctx context.Context) (int64, error) { return c.f.get(ctx) }

// Prompt has fn called when callers wait and offered reads (Saw) have
// been coming: fn asks their source for one soon (store.AskAuthVersion),
// and the callers are given the gap for it before a read of their own.
// With fn nil, callers never wait for offers. Call it before the first
// Get.
func (c *Counter) Prompt(fn func()) { c.f.prompt = fn }

// Saw offers a value of the counter read elsewhere by a read that began
// at began, taken with time.Now (see fresh.saw).
func (c *Counter) Saw(v int64, began time.Time) { c.f.saw(v, began) }
