package store

import (
	"io/fs"
	"testing"
)

// Migrations are one source: a version is either common to both dialects
// or written for each of them, never for only one.
func TestMigrationSources(t *testing.T) {
	names := func(dir string) map[string]bool {
		out := map[string]bool{}
		entries, err := fs.ReadDir(migrations, "migrations/"+dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			out[e.Name()] = true
		}
		return out
	}
	common, lite, pg := names("common"), names("sqlite"), names("postgres")
	for n := range lite {
		if common[n] {
			t.Errorf("%s is both common and SQLite-only", n)
		}
		if !pg[n] {
			t.Errorf("%s is written for SQLite only; give PostgreSQL its own or make it common", n)
		}
	}
	for n := range pg {
		if common[n] {
			t.Errorf("%s is both common and PostgreSQL-only", n)
		}
		if !lite[n] {
			t.Errorf("%s is written for PostgreSQL only; give SQLite its own or make it common", n)
		}
	}
	for _, d := range []Dialect{SQLite, Postgres} {
		set, err := migrationFS(d)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := fs.ReadDir(set, ".")
		if len(got) != len(common)+len(lite) {
			t.Errorf("%s: %d migrations, want %d", d, len(got), len(common)+len(lite))
		}
	}
}
