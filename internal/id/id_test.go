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

func TestSequenceIsOrdered(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ids := Sequence(Message, now, 1000)
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] || len(ids[i]) != 30 {
			t.Fatalf("not ordered at %d: %q %q", i, ids[i-1], ids[i])
		}
	}
	if later := New(Message, now.Add(time.Millisecond)); later <= ids[len(ids)-1] {
		t.Fatalf("a later id sorts before the sequence: %q", later)
	}
}

func TestFloor(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	f := Floor(Message, at)
	if !(f <= New(Message, at)) || !(f > New(Message, at.Add(-time.Millisecond))) || len(f) != len(New(Message, at)) {
		t.Fatalf("Floor %s does not bound the ids made at %v", f, at)
	}
}

func TestDerive(t *testing.T) {
	msg := New(Message, time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	cmp := Derive(Campaign, msg)
	if !strings.HasPrefix(cmp, "cmp_") || len(cmp) != 30 || cmp[4:] != msg[4:] {
		t.Fatalf("Derive(%q) = %q", msg, cmp)
	}
	if back := Derive(Message, cmp); back != msg {
		t.Fatalf("derived back %q, want %q", back, msg)
	}
	if got := Derive(Campaign, "nobody"); got != "" {
		t.Fatalf("an id without a body derived %q", got)
	}
}
