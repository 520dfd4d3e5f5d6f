package config

import (
	"flag"
	"testing"
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
