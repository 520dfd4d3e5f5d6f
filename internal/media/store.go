package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
)

// Repo is the part of the database the media store uses (*store.Store).
type Repo interface {
	SaveMedia(ctx context.Context, m domain.MediaFile) (domain.MediaFile, error)
	Media(ctx context.Context, accountID, id string) (domain.MediaFile, error)
}

// Config wires a Store.
type Config struct {
	Repo Repo
	// Dir holds the files: <Dir>/ab/cd/<sha256>, and <Dir>/tmp for uploads
	// in progress. Nodes that share a database must share Dir.
	Dir string
	Now func() time.Time
}

// Store keeps uploaded files. It is safe for concurrent use.
type Store struct {
	repo Repo
	dir  string
	tmp  string
	now  func() time.Time
}

// staleUpload is how old a temporary file must be before New removes it:
// old enough that no upload still writes it.
const staleUpload = time.Hour

// New prepares the directories and removes temporary files that a crash
// left behind.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Dir == "" {
		return nil, errors.New("media: no directory")
	}
	s := &Store{repo: cfg.Repo, dir: cfg.Dir, tmp: filepath.Join(cfg.Dir, "tmp"), now: cfg.Now}
	if err := os.MkdirAll(s.tmp, 0o750); err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	entries, err := os.ReadDir(s.tmp)
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	for _, e := range entries {
		if ctx.Err() != nil {
			break // the clean-up can wait for the next start
		}
		if info, err := e.Info(); err == nil && s.now().Sub(info.ModTime()) > staleUpload {
			_ = os.Remove(filepath.Join(s.tmp, e.Name()))
		}
	}
	return s, nil
}

// Blob is a stored file before any account owns it.
type Blob struct {
	SHA256 string
	Type   Type
	Size   int64
}

// Ingest streams r to disk, at most MaxSize bytes, and types it by its
// content. The file is written to a temporary name, synced and renamed
// into place, so a file under its final name is always complete; a file
// already stored is not written again. Images over MaxImageSize are
// refused too: no channel would send them. Errors: ErrTooLarge (or
// ErrImageTooLarge, which matches it), ErrEmpty, one wrapping
// ErrUnsupported, or the reader's own error (wrapped).
func (s *Store) Ingest(ctx context.Context, r io.Reader) (Blob, error) {
	f, err := os.CreateTemp(s.tmp, "upload-*")
	if err != nil {
		return Blob{}, fmt.Errorf("media: %w", err)
	}
	keep := false
	defer func() {
		f.Close()
		if !keep {
			_ = os.Remove(f.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(ctxReader{ctx, r}, MaxSize+1))
	switch {
	case err != nil:
		return Blob{}, fmt.Errorf("media: read upload: %w", err)
	case n > MaxSize:
		return Blob{}, ErrTooLarge
	case n == 0:
		return Blob{}, ErrEmpty
	}
	t, err := Sniff(f, n)
	if err != nil {
		return Blob{}, err
	}
	if err := checkStructure(f, n, t); err != nil {
		return Blob{}, err
	}
	if t.Kind == Image && n > MaxImageSize {
		return Blob{}, ErrImageTooLarge
	}
	b := Blob{SHA256: hex.EncodeToString(h.Sum(nil)), Type: t, Size: n}
	final := s.path(b.SHA256)
	if _, err := os.Stat(final); err == nil {
		return b, nil // the same bytes are stored already
	}
	if err := f.Sync(); err != nil {
		return Blob{}, fmt.Errorf("media: sync: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o750); err != nil {
		return Blob{}, fmt.Errorf("media: %w", err)
	}
	// Two uploads of the same bytes may race here; both renames put
	// identical content under the name, so either winning is fine.
	if err := os.Rename(f.Name(), final); err != nil {
		return Blob{}, fmt.Errorf("media: store file: %w", err)
	}
	keep = true
	syncDir(filepath.Dir(final))
	return b, nil
}

// Register gives an account the use of a blob and returns its item. An
// account that registers the same bytes again gets its earlier item back.
func (s *Store) Register(ctx context.Context, accountID string, b Blob) (Item, error) {
	now := s.now().UTC()
	m, err := s.repo.SaveMedia(ctx, domain.MediaFile{ID: id.New(id.Media, now), AccountID: accountID, SHA256: b.SHA256,
		MIME: b.Type.MIME, Size: b.Size, Kind: string(b.Type.Kind), CreatedAt: now})
	if err != nil {
		return Item{}, fmt.Errorf("media: %w", err)
	}
	return itemFrom(m), nil
}

// Upload is Ingest then Register.
func (s *Store) Upload(ctx context.Context, accountID string, r io.Reader) (Item, error) {
	b, err := s.Ingest(ctx, r)
	if err != nil {
		return Item{}, err
	}
	return s.Register(ctx, accountID, b)
}

// Lookup finds one of an account's files by mediaId. An unknown id or
// another account's is ErrNotFound.
func (s *Store) Lookup(ctx context.Context, accountID, mediaID string) (Item, error) {
	m, err := s.repo.Media(ctx, accountID, mediaID)
	if errors.Is(err, domain.ErrNotFound) {
		return Item{}, ErrNotFound
	}
	if err != nil {
		return Item{}, fmt.Errorf("media: %w", err)
	}
	return itemFrom(m), nil
}

// Open opens an item's bytes, for a provider that uploads them onwards.
func (s *Store) Open(ctx context.Context, it Item) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(s.path(it.SHA256))
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	return f, nil
}

// path is <dir>/ab/cd/<sha256>: two levels keep directories small.
func (s *Store) path(sum string) string {
	return filepath.Join(s.dir, sum[:2], sum[2:4], sum)
}

// syncDir makes a rename durable; failure only weakens durability after a
// power loss, so it is not reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// ctxReader stops a long upload when its request is abandoned.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
