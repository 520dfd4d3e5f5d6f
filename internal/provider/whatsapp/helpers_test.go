package whatsapp

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/media"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
	"github.com/msgsvc/msgsvc/internal/provider/whatsapp/whatsapptest"
)

const (
	testToken       = "EAAtesttokenSECRET0123456789"
	testAppSecret   = "appsecretSECRET42"
	testVerifyToken = "verifySECRET-7"
	testPhoneID     = "106540352242922"
)

// files is a media store of fixed files in a temporary directory.
type files struct{ *providertest.Files }

func newFiles(t *testing.T) *files {
	f := &files{providertest.NewFiles(t)}
	f.add(t, "med_photo", "acc_1", media.JPEG, []byte("\xff\xd8\xff\xe0 a photo"))
	f.add(t, "med_clip", "acc_1", media.MP4, []byte("....ftypisom a clip"))
	f.add(t, "med_doc", "acc_1", media.PDF, []byte("%PDF-1.4 a document"))
	return f
}

func (f *files) add(t *testing.T, id, account string, typ media.Type, data []byte) {
	sum := id + "-sha256-0123456789abcdef"
	f.Add(t, media.Item{ID: id, AccountID: account, SHA256: sum, MIME: typ.MIME, Kind: typ.Kind, Size: int64(len(data))}, data)
}

// cache is an in-memory MediaCache.
type cache struct {
	mu  sync.Mutex
	ids map[string]struct {
		id string
		at time.Time
	}
}

func (c *cache) PlatformMedia(_ context.Context, scope, sum string, since time.Time) (string, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.ids[scope+" "+sum]
	if !ok || !v.at.After(since) {
		return "", false, nil
	}
	return v.id, true, nil
}

func (c *cache) SavePlatformMedia(_ context.Context, scope, sum, id string, at time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[string]struct {
			id string
			at time.Time
		}{}
	}
	c.ids[scope+" "+sum] = struct {
		id string
		at time.Time
	}{id, at}
	return nil
}

// rig is a client wired to a fake platform, with a clock that stands
// still unless moved, and waits that are recorded instead of slept.
type rig struct {
	c      *Client
	p      *whatsapptest.Platform
	sink   *providertest.Sink
	files  *files
	cache  *cache
	log    *providertest.Log
	mu     sync.Mutex
	now    time.Time
	waited []time.Duration
}

func newRig(t *testing.T, tune func(*Config)) *rig {
	t.Helper()
	r := &rig{p: whatsapptest.New(t), sink: &providertest.Sink{}, files: newFiles(t), cache: &cache{}, log: &providertest.Log{},
		now: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)}
	cfg := Config{APIURL: r.p.URL, PhoneNumberID: testPhoneID, Token: testToken, AppSecret: testAppSecret,
		VerifyToken: testVerifyToken, UserAgent: UserAgent("0.5.0-dev"), RatePerSecond: -1}
	if tune != nil {
		tune(&cfg)
	}
	var err error
	r.c, err = New(cfg, Deps{Sink: r.sink, Files: r.files, Cache: r.cache},
		WithLogger(slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		WithClock(r.clock), WithRand(func() float64 { return 0.5 }), WithSleep(r.sleep))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) clock() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

func (r *rig) advance(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = r.now.Add(d)
}

func (r *rig) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d > 0 {
		r.waited = append(r.waited, d)
	}
	return ctx.Err()
}

func (r *rig) waits() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.waited...)
}
