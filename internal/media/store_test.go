package media_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/media"
	"github.com/msgsvc/msgsvc/internal/media/mediatest"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func newAccount(t *testing.T, st *store.Store) string { return storetest.NewAccount(t, st, t0) }

func TestStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		ctx := context.Background()
		dir := t.TempDir()
		ms, err := media.New(context.Background(), media.Config{Repo: st, Dir: dir, Now: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		acc, other := newAccount(t, st), newAccount(t, st)
		png := mediatest.PNG()
		sum := sha256.Sum256(png)
		wantSum := hex.EncodeToString(sum[:])

		first, err := ms.Upload(ctx, acc, bytes.NewReader(png))
		if err != nil {
			t.Fatal(err)
		}
		want := media.Item{ID: first.ID, AccountID: acc, SHA256: wantSum, MIME: "image/png", Kind: media.Image, Size: int64(len(png))}
		if first != want || !strings.HasPrefix(first.ID, "med_") {
			t.Fatalf("upload = %+v, want %+v", first, want)
		}
		path := filepath.Join(dir, wantSum[:2], wantSum[2:4], wantSum)
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, png) {
			t.Fatalf("stored file at %s: %v", path, err)
		}

		// The same bytes again: the same item. Another account: its own item
		// over the same file.
		again, err := ms.Upload(ctx, acc, bytes.NewReader(png))
		if err != nil || again != first {
			t.Fatalf("second upload = %+v, %v; want %+v", again, err, first)
		}
		theirs, err := ms.Upload(ctx, other, bytes.NewReader(png))
		if err != nil || theirs.ID == first.ID || theirs.SHA256 != wantSum || theirs.AccountID != other {
			t.Fatalf("other account's upload = %+v, %v", theirs, err)
		}

		lookups := []struct {
			name, account, id string
			want              media.Item
			wantErr           error
		}{
			{"own", acc, first.ID, first, nil},
			{"other account's", acc, theirs.ID, media.Item{}, media.ErrNotFound},
			{"unknown", acc, "med_missing", media.Item{}, media.ErrNotFound},
		}
		for _, tc := range lookups {
			got, err := ms.Lookup(ctx, tc.account, tc.id)
			if !errors.Is(err, tc.wantErr) || got != tc.want {
				t.Errorf("Lookup %s = %+v, %v; want %+v, %v", tc.name, got, err, tc.want, tc.wantErr)
			}
			if tc.wantErr != nil && !errors.Is(err, domain.ErrNotFound) {
				t.Errorf("Lookup %s: %v is not domain.ErrNotFound", tc.name, err)
			}
		}
		f, err := ms.Open(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(f)
		f.Close()
		if !bytes.Equal(got, png) {
			t.Fatal("Open read other bytes")
		}

		refusals := []struct {
			name    string
			data    io.Reader
			wantErr error
		}{
			{"empty", bytes.NewReader(nil), media.ErrEmpty},
			{"one byte over", bytes.NewReader(mediatest.PNGOfSize(media.MaxSize + 1)), media.ErrTooLarge},
			{"much larger", io.LimitReader(zeros{}, 50*media.MB), media.ErrTooLarge},
			{"elf", bytes.NewReader(mediatest.ELF()), media.ErrUnsupported},
			{"image one byte over 5 MB", bytes.NewReader(mediatest.PNGOfSize(media.MaxImageSize + 1)), media.ErrImageTooLarge},
			{"image over 5 MB is too large", bytes.NewReader(mediatest.PNGOfSize(media.MaxImageSize + 1)), media.ErrTooLarge},
		}
		for _, tc := range refusals {
			if _, err := ms.Ingest(ctx, tc.data); !errors.Is(err, tc.wantErr) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.wantErr)
			}
		}
		for _, limit := range []struct {
			data []byte
			size int64
		}{{mediatest.Padded(mediatest.PDF(), media.MaxSize), media.MaxSize}, {mediatest.PNGOfSize(media.MaxImageSize), media.MaxImageSize}} {
			b, err := ms.Ingest(ctx, bytes.NewReader(limit.data))
			if err != nil || b.Size != limit.size {
				t.Fatalf("exactly at the limit: %+v, %v", b, err)
			}
		}
		// Refused and finished uploads leave nothing behind in tmp.
		if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
			t.Fatalf("temporary files left: %v", left)
		}
		// A canceled request stops the upload.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := ms.Ingest(cctx, bytes.NewReader(png)); !errors.Is(err, context.Canceled) {
			t.Fatalf("canceled: %v", err)
		}
	})
}

// New removes temporary files a crash left behind, but not fresh ones
// that another upload may still be writing.
func TestNewCleansStaleUploads(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o750); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for name, age := range map[string]time.Duration{"upload-old": 2 * time.Hour, "upload-new": time.Minute} {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := media.New(context.Background(), media.Config{Dir: dir, Now: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	left, _ := os.ReadDir(tmp)
	if len(left) != 1 || left[0].Name() != "upload-new" {
		t.Fatalf("left %v, want only upload-new", left)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
