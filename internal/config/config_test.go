package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A node keeps its name across restarts (DATA/node-id), so that it takes
// back at once what a crashed run of it had claimed.
func TestNodeIDSurvivesRestarts(t *testing.T) {
	dir := t.TempDir()
	load := func() Config {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		finish := Flags(fs, false)
		if err := fs.Parse([]string{"--data", dir}); err != nil {
			t.Fatal(err)
		}
		c, err := finish()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first, second := load(), load()
	if first.NodeID == "" || first.NodeID != second.NodeID {
		t.Fatalf("node ids %q and %q", first.NodeID, second.NodeID)
	}
	other := t.TempDir()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	finish := Flags(fs, false)
	_ = fs.Parse([]string{"--data", other})
	if c, _ := finish(); c.NodeID == first.NodeID {
		t.Fatal("two data directories share a node id")
	}
}

// The redaction key is made once and kept, readable by the owner only.
func TestRedactionKeyIsKept(t *testing.T) {
	dir := t.TempDir()
	first, err := PersistentRedactionKey(dir)
	if err != nil || first == "" {
		t.Fatalf("first: %q %v", first, err)
	}
	second, err := PersistentRedactionKey(dir)
	if err != nil || second != first {
		t.Fatalf("second start: %q %v, want the same key", second, err)
	}
	fi, err := os.Stat(filepath.Join(dir, "redaction-key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	if _, err := PersistentRedactionKey(""); err == nil {
		t.Error("no data directory and no key: accepted")
	}
}

// --dispatch-backlog holds sends back after 100 ms by default; 0 turns
// the holding off, and what is not a duration of 0 or more is refused.
func TestDispatchBacklogFlag(t *testing.T) {
	load := func(args ...string) (Config, error) {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		finish := Flags(fs, false)
		if err := fs.Parse(append([]string{"--data", t.TempDir()}, args...)); err != nil {
			t.Fatal(err)
		}
		return finish()
	}
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{{nil, 100 * time.Millisecond}, {[]string{"--dispatch-backlog", "0"}, 0}, {[]string{"--dispatch-backlog", "2s"}, 2 * time.Second}} {
		c, err := load(tc.args...)
		if err != nil || c.DispatchBacklog != tc.want {
			t.Errorf("%v: %v, %v; want %v", tc.args, c.DispatchBacklog, err, tc.want)
		}
	}
	for _, bad := range []string{"-1s", "soon"} {
		if _, err := load("--dispatch-backlog", bad); err == nil || !strings.Contains(err.Error(), "dispatch-backlog") {
			t.Errorf("--dispatch-backlog %s: %v, want a refusal naming the flag", bad, err)
		}
	}
}
