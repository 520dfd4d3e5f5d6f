package providertest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/msgsvc/msgsvc/internal/media"
)

// Files is a media store of uploads kept in a test's temporary directory,
// for the adapters that send files. It is not safe for concurrent Add.
type Files struct {
	dir   string
	items map[string]media.Item // by media id
}

// NewFiles returns an empty store in t's temporary directory.
func NewFiles(t testing.TB) *Files {
	return &Files{dir: t.TempDir(), items: map[string]media.Item{}}
}

// Add stores data as the upload it describes; its SHA256 names the file.
func (f *Files) Add(t testing.TB, it media.Item, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, it.SHA256), data, 0o600); err != nil {
		t.Fatal(err)
	}
	f.items[it.ID] = it
}

// Lookup finds an account's upload; another account's is not found.
func (f *Files) Lookup(_ context.Context, accountID, mediaID string) (media.Item, error) {
	it, ok := f.items[mediaID]
	if !ok || it.AccountID != accountID {
		return media.Item{}, media.ErrNotFound
	}
	return it, nil
}

// Open opens an upload's file.
func (f *Files) Open(_ context.Context, it media.Item) (*os.File, error) {
	return os.Open(filepath.Join(f.dir, it.SHA256))
}
