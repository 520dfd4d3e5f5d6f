// Package keycache keeps authenticated API keys, with their accounts, in
// memory, so that a request costs one read of a version counter instead of
// a lookup of its key and account. The counter (store.AuthVersion) moves
// in the database whenever a key is revoked or an account's settings
// change, on whichever node or tool changed them; every request reads it,
// so a change bites on the very next request on every node.
package keycache

import (
	"context"
	"github.com/msgsvc/msgsvc/internal/domain"
	"sync"
	"time"
)

// Source is where keys and the version live (*store.Store).
type Source interface {
	AuthVersion(ctx context.Context) (int64, error)
	KeyByHashVersion(ctx context.Context, hash string) (domain.APIKey, domain.Account, int64, error)
}

// maxEntries bounds the cache; past it the cache starts over (a deployment
// has far fewer active keys).
const maxEntries = 10000

// Cache answers KeyByHash from memory while the version stands.
type Cache struct {
	src     Source
	version fresh

	mu      sync.Mutex
	entries map[string]entry // by key hash
}

type entry struct {
	key     domain.APIKey
	account domain.Account
	version int64
}

// New builds a Cache over src.
func New(src Source) *Cache {
	c := &Cache{src: src, entries: map[string]entry{}}
	c.version.read = src.AuthVersion
	return c
}

// KeyByHash returns the key and its account as the database has them now.
// The account's balance is as of when the entry was read: callers that
// need the current balance read it themselves.
func (c *Cache) KeyByHash(ctx context.Context, hash string) (domain.APIKey, domain.Account, error) {
	v, err := c.version.get(ctx)
	if err != nil {
		return domain.APIKey{}, domain.Account{}, err
	}
	c.mu.Lock()
	e, ok := c.entries[hash]
	c.mu.Unlock()
	if ok && e.version == v {
		return e.key, e.account, nil
	}
	k, a, at, err := c.src.KeyByHashVersion(ctx, hash)
	if err != nil {
		return k, a, err
	}
	c.mu.Lock()
	if len(c.entries) >= maxEntries {
		c.entries = map[string]entry{}
	}
	c.entries[hash] = entry{key: k, account: a, version: at}
	c.mu.Unlock()
	return k, a, nil
}

// Saw offers a value of the counter read elsewhere by a read that began
// at began, taken with time.Now (see fresh.saw).
func (c *Cache) Saw(v int64, began time.Time) { c.version.saw(v, began) }

// KeyByHashCached answers from memory, without reading the counter, when
// the key is cached, and returns the counter value its answer was read at:
// a caller that acts on the answer must check, in the transaction that
// acts, that the counter still has that value, and otherwise ask again
// with KeyByHash. A key not cached is read as KeyByHash reads it, and the
// version is 0: nothing to check.
func (c *Cache) KeyByHashCached(ctx context.Context, hash string) (domain.APIKey, domain.Account, int64, error) {
	c.mu.Lock()
	e, ok := c.entries[hash]
	c.mu.Unlock()
	if ok {
		return e.key, e.account, e.version, nil
	}
	k, a, err := c.KeyByHash(ctx, hash)
	return k, a, 0, err
}

// fresh reads a value on behalf of many concurrent callers while
// guaranteeing each of them a read that began after it asked: a read under
// way when a caller arrives may have started before the change the caller
// must see, so the caller waits for the next one, which starts as soon as
// the current one ends and serves everyone who arrived meanwhile. Under
// load, one read serves many requests; alone, a request costs one read.
type fresh struct {
	read func(ctx context.Context) (int64, error)
	gap  time.Duration // the least time from the start of a read to the start of the next
	// prompt, when set, asks whoever offers values (saw) for one soon: the
	// store's writer then reads the counter in its next transaction.
	prompt func()

	mu      sync.Mutex
	running bool
	waiting []*waiter     // in the order they asked
	offered time.Time     // when the latest read offered through saw began
	kick    chan struct{} // a caller waits (buffered: a kick is never lost)
}

// waiter is one caller waiting for a read that began after it asked.
type waiter struct {
	asked time.Time
	done  chan struct{}
	v     int64
	err   error
}

func (w *waiter) serve(v int64, err error) {
	w.v, w.err = v, err
	close(w.done)
}

// readTimeout bounds one read, which serves callers whose contexts differ.
const readTimeout = 10 * time.Second

// linger keeps the reading goroutine a while after its last round. A new
// goroutine per burst of requests would grow its stack again through the
// database driver's deep calls on every burst, which cost more than the
// read under steady load.
const linger = time.Second

// offersBusy is how many gaps after an offered read the source still
// counts as busy, and worth waiting for (see loop).
const offersBusy = 4

func (f *fresh) get(ctx context.Context) (int64, error) {
	w := &waiter{done: make(chan struct{})}
	f.mu.Lock()
	// Read under the lock, so that the queue is in the order of asking
	// and an offer serves a prefix of it.
	w.asked = time.Now()
	f.waiting = append(f.waiting, w)
	if !f.running {
		f.running = true
		if f.kick == nil {
			f.kick = make(chan struct{}, 1)
		}
		go f.loop(context.WithoutCancel(ctx))
	} else {
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
	f.mu.Unlock()
	select {
	case <-w.done:
		return w.v, w.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// saw offers a value read elsewhere, by a read that began at began (the
// writer's transactions read the counter for their own check, and when
// prompted): it serves every waiting caller who asked before that, as the
// loop's own read would have, and the loop then makes no read for them. A
// read on the loop's side costs far more than the writer's: a reader's
// connection finds the database changed and starts from an empty page
// cache. On the SMPP path at 8 concurrent senders the webhook signer's
// reads were 3.5 % of the node's CPU before the writer's reads served its
// callers.
func (f *fresh) saw(v int64, began time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if began.After(f.offered) {
		f.offered = began
	}
	n := 0
	for n < len(f.waiting) && began.After(f.waiting[n].asked) {
		f.waiting[n].serve(v, nil)
		f.waiting[n] = nil
		n++
	}
	f.waiting = f.waiting[n:]
}

// loop reads while callers wait, and ends after lingering idle. Reads
// start at least gap apart. While the values offered through saw keep
// coming (the writer is busy), a caller is first given a gap for one to
// serve it, and the offering side is prompted; only then does the loop
// read. When the writer is idle, a caller is read for at once.
func (f *fresh) loop(ctx context.Context) {
	idle := time.NewTimer(linger)
	defer idle.Stop()
	var began time.Time
	for {
		f.mu.Lock()
		if len(f.waiting) == 0 {
			f.mu.Unlock()
			idle.Reset(linger)
			select {
			case <-f.kick:
				continue
			case <-idle.C:
			}
			f.mu.Lock()
			if len(f.waiting) != 0 {
				f.mu.Unlock()
				continue
			}
			f.running = false
			f.mu.Unlock()
			return
		}
		first, offered := f.waiting[0].asked, f.offered
		f.mu.Unlock()
		if f.gap > 0 {
			now := time.Now()
			at := now
			if !began.IsZero() {
				// Let more callers join the next read.
				at = began.Add(f.gap)
			}
			if busy := !offered.IsZero() && now.Sub(offered) < offersBusy*f.gap; busy && f.prompt != nil {
				if by := first.Add(f.gap); by.After(at) {
					at = by
				}
				f.prompt()
			}
			if wait := at.Sub(now); wait > 0 {
				idle.Reset(wait)
				<-idle.C
				continue // an offer may have served some meanwhile
			}
		}
		f.mu.Lock()
		ws := f.waiting
		f.waiting = nil
		f.mu.Unlock()
		if len(ws) == 0 {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, readTimeout)
		began = time.Now() // as close to the read as it can be: the gap runs from here
		v, err := f.read(rctx)
		cancel()
		for _, w := range ws {
			w.serve(v, err)
		}
	}
}
