package rbm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/media"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Files reads the files integrators uploaded (media.Store does).
type Files = provider.Files

// MediaCache remembers the platform's names of our files beyond this
// process (store.Store keeps them in platform_media, shared with the
// WhatsApp adapter under another scope).
type MediaCache = provider.MediaCache

// rbmTypes are the types of our uploads that RBM carries: its images,
// MP4 video and PDF. It takes no office documents and no 3GPP video.
var rbmTypes = map[string]bool{media.JPEG.MIME: true, media.PNG.MIME: true, media.GIF.MIME: true, media.MP4.MIME: true,
	media.PDF.MIME: true}

// mediaOf is how a file goes in a card. A URL is given to the platform
// to fetch. An uploaded file (mediaId) is uploaded to the platform's
// files endpoint once and named by the platform's file name afterwards:
// our files are not reachable from the internet, and the platform keeps
// a file for at least 30 days (fileCacheTTL).
func (a *Adapter) mediaOf(ctx context.Context, accountID, agent string, m domain.Media) (*cardMedia, *provider.Error) {
	if m.URL != "" {
		return &cardMedia{Height: "MEDIUM", ContentInfo: &contentInfo{FileURL: m.URL}}, nil
	}
	if a.files == nil {
		return nil, permanent(domain.CodeRejected, "this node cannot read uploaded files")
	}
	it, err := a.files.Lookup(ctx, accountID, m.MediaID)
	if errors.Is(err, media.ErrNotFound) {
		return nil, permanent(domain.CodeRejected, "mediaId %s is not a file of this account", m.MediaID)
	}
	if err != nil {
		return nil, temporary("read media %s: %v", m.MediaID, err)
	}
	if !rbmTypes[it.MIME] {
		return nil, permanent(domain.CodeRejected, "RCS Business Messaging does not carry %s files; it takes JPG, PNG and GIF images, MP4 video and PDF", it.MIME)
	}
	name, perr := a.upload(ctx, agent, it)
	if perr != nil {
		return nil, perr
	}
	return &cardMedia{Height: "MEDIUM", UploadedRbmFile: &uploadedFile{FileName: name}}, nil
}

// upload sends a file's bytes to the platform (files.create on the upload
// URI) unless a copy is known to be there, and returns its name there.
// Messages sent at once with the same file share one upload. Files are
// kept per agent, the one that uploaded them.
func (a *Adapter) upload(ctx context.Context, agent string, it media.Item) (string, *provider.Error) {
	key := agent + "/" + it.SHA256
	if name, ok := a.uploads.get(key, a.now()); ok {
		return name, nil
	}
	v, _, _ := a.uploads.flight.Do(key, func() (any, error) {
		name, perr := a.uploadOnce(ctx, agent, key, it)
		return uploaded{name, perr}, nil
	})
	u := v.(uploaded)
	return u.name, u.err
}

type uploaded struct {
	name string
	err  *provider.Error
}

func (a *Adapter) uploadOnce(ctx context.Context, agent, key string, it media.Item) (string, *provider.Error) {
	now := a.now()
	if name, ok := a.uploads.get(key, now); ok {
		return name, nil
	}
	scope := "rbm/" + agent
	if a.cache != nil {
		// A failed lookup only costs an upload.
		if name, found, err := a.cache.PlatformMedia(ctx, scope, it.SHA256, now.Add(-fileCacheTTL)); err == nil && found {
			a.uploads.put(key, name, now)
			return name, nil
		}
	}
	q := url.Values{"agentId": {agent}}
	ans, perr := a.exchange(ctx, call{op: opUpload, method: http.MethodPost, url: a.cfg.UploadURL + "/files?" + q.Encode(),
		contentType: it.MIME, length: it.Size, body: func() (io.Reader, error) { return a.files.Open(ctx, it) }})
	if perr != nil {
		return "", perr
	}
	if ans.status/100 != 2 {
		return "", permanent(domain.CodeRejected, "the platform refused the file (%s)", ans.reason())
	}
	var f struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(ans.body, &f); err != nil || f.Name == "" {
		return "", temporary("the platform's answer to a file upload names no file: %s", truncate(string(ans.body), 200))
	}
	a.uploads.put(key, f.Name, now)
	if a.cache != nil {
		if err := a.cache.SavePlatformMedia(context.WithoutCancel(ctx), scope, it.SHA256, f.Name, now); err != nil {
			a.log.Warn("remember an uploaded file; it is uploaded again next time", "err", err)
		}
	}
	return f.Name, nil
}

// fileCacheTTL is how long a file uploaded to the platform is named
// instead of uploaded again: RBM keeps files for 30 days (60 in its newer
// documents), so a copy younger than 25 days is surely still there.
const fileCacheTTL = 25 * 24 * time.Hour

// maxCachedFiles bounds the memory of uploads; past it, the oldest
// entries are forgotten (and uploaded again if used).
const maxCachedFiles = 10000

// fileCache remembers the platform's names of our files by agent and
// SHA-256 in this process, in front of the MediaCache that outlives it.
type fileCache struct {
	flight singleflight.Group
	mu     sync.Mutex
	m      map[string]cachedFile
}

type cachedFile struct {
	name string
	at   time.Time
}

func newFileCache() *fileCache { return &fileCache{m: map[string]cachedFile{}} }

func (c *fileCache) get(sum string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.m[sum]
	if !ok || now.Sub(f.at) >= fileCacheTTL {
		return "", false
	}
	return f.name, true
}

func (c *fileCache) put(sum, name string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedFiles {
		var oldest string
		for k, f := range c.m {
			if oldest == "" || f.at.Before(c.m[oldest].at) {
				oldest = k
			}
		}
		delete(c.m, oldest)
	}
	c.m[sum] = cachedFile{name: name, at: now}
}

func (c *fileCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
