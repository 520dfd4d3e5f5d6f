package ratelimit

import (
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	cases := []struct {
		spec    string
		want    string // "memory", "redis" or "error"
		noLeaks string // must not appear in the error
	}{
		{"", "memory", ""},
		{"memory", "memory", ""},
		{"redis://127.0.0.1:1/0", "redis", ""},
		{"rediss://user:pw@127.0.0.1:1/2", "redis", ""},
		{"postgres://x", "error", ""},
		{"redis://:hunter2@127.0.0.1:1/notadb", "error", "hunter2"},
		{"redis://:hunter2@[::1", "error", "hunter2"},
	}
	for _, c := range cases {
		b, closeFn, err := Open(c.spec, "p:", nil)
		got := "error"
		switch b.(type) {
		case *Memory:
			got = "memory"
		case *Redis:
			got = "redis"
		}
		if got != c.want {
			t.Errorf("Open(%q) = %s (err %v), want %s", c.spec, got, err, c.want)
		}
		if err != nil && c.noLeaks != "" && strings.Contains(err.Error(), c.noLeaks) {
			t.Errorf("Open(%q) error leaks the password: %v", c.spec, err)
		}
		if closeFn != nil {
			if err := closeFn(); err != nil {
				t.Errorf("close %q: %v", c.spec, err)
			}
		}
	}
}
