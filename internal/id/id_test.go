package id

import (
	"strings"
	"testing"
	"time"
)

func TestNewIsTimeOrderedAndUnique(t *testing.T) {
	base := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	prev := ""
	for i := 0; i < 2000; i++ {
		v := New(Message, base.Add(time.Duration(i)*time.Millisecond))
		if !strings.HasPrefix(v, "msg_") || len(v) != 30 {
			t.Fatalf("bad id %q", v)
		}
		if seen[v] {
			t.Fatalf("duplicate id %q", v)
		}
		seen[v] = true
		if prev != "" && v <= prev {
			t.Fatalf("ids not ordered: %q then %q", prev, v)
		}
		prev = v
	}
}
