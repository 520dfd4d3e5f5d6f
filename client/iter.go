package client

import (
	"context"
	"iter"
	"time"
)

// Messages iterates over the message list, page after page, newest first.
// An error ends the iteration after it is yielded.
func (c *Client) Messages(ctx context.Context, o ListOptions) iter.Seq2[Message, error] {
	return pages(func(cursor string) ([]Message, string, error) {
		if cursor != "" {
			o.Cursor = cursor
		}
		p, err := c.ListMessages(ctx, o)
		if err != nil {
			return nil, "", err
		}
		return p.Messages, p.NextCursor, nil
	})
}

// CampaignMessages iterates over every message of a campaign.
func (c *Client) CampaignMessages(ctx context.Context, campaignID string) iter.Seq2[Message, error] {
	return pages(func(cursor string) ([]Message, string, error) {
		p, err := c.Campaign(ctx, campaignID, 1000, cursor)
		if err != nil {
			return nil, "", err
		}
		return p.Messages, p.NextCursor, nil
	})
}

// pages iterates over a list read page after page: fetch reads the page at
// a cursor ("" for the first) and returns its items and the next page's
// cursor ("" after the last). An error ends the iteration after it is
// yielded.
func pages[T any](fetch func(cursor string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		cursor := ""
		for {
			items, next, err := fetch(cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			cursor = next
		}
	}
}

// Feed reads the events feed from a cursor and remembers how far it got.
// Store Cursor() where your program keeps its state and start the next
// Feed from it: events come at least once (an iteration stopped inside a
// page gives that page again), in the order they happened; deduplicate on
// Event.ID. A Feed is not safe for concurrent use.
type Feed struct {
	c      *Client
	cursor string
	// PageSize is how many events each request asks for (default 100).
	PageSize int
}

// Feed starts reading the events feed after a cursor ("" for the oldest
// event kept).
func (c *Client) Feed(after string) *Feed { return &Feed{c: c, cursor: after, PageSize: 100} }

// Cursor is where a new Feed should start to miss nothing that this one
// has not yielded.
func (f *Feed) Cursor() string { return f.cursor }

// Events iterates over the events after the cursor until the feed is
// caught up. An error ends the iteration after it is yielded.
func (f *Feed) Events(ctx context.Context) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			n, ok := f.page(ctx, yield, false)
			if !ok || n == 0 {
				return
			}
		}
	}
}

// Follow is Events that does not stop when caught up: it asks again every
// poll interval (default 1 s) until ctx ends, which ends the iteration
// without an error.
func (f *Feed) Follow(ctx context.Context, poll time.Duration) iter.Seq2[Event, error] {
	if poll <= 0 {
		poll = time.Second
	}
	return func(yield func(Event, error) bool) {
		for ctx.Err() == nil {
			n, ok := f.page(ctx, yield, true)
			if !ok {
				return
			}
			if n == 0 && sleep(ctx, poll) != nil {
				return
			}
		}
	}
}

// page yields one page of events and says how many there were and whether
// to go on. Following, the end of ctx is the way to stop, not an error.
func (f *Feed) page(ctx context.Context, yield func(Event, error) bool, following bool) (int, bool) {
	p, err := f.c.EventsPage(ctx, f.cursor, f.PageSize)
	if err != nil {
		if following && ctx.Err() != nil {
			return 0, false
		}
		yield(Event{}, err)
		return 0, false
	}
	for _, ev := range p.Events {
		if !yield(ev, nil) {
			return len(p.Events), false
		}
	}
	f.cursor = p.NextCursor
	return len(p.Events), true
}

// OptOuts iterates over every number that opted out.
func (c *Client) OptOuts(ctx context.Context) iter.Seq2[OptOut, error] {
	return pages(func(cursor string) ([]OptOut, string, error) {
		p, err := c.ListOptOuts(ctx, cursor)
		if err != nil {
			return nil, "", err
		}
		return p.OptOuts, p.NextCursor, nil
	})
}
