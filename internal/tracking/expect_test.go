package tracking

import (
	"testing"
	"time"
)

// Announcements whose record never comes are forgotten after the hold.
func TestStaleAnnouncementsAreDropped(t *testing.T) {
	var e expectations
	e.hold = time.Minute
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	e.expect("p", "a", t0)
	e.expect("p", "b", t0.Add(30*time.Second))
	e.recorded([]Report{{Kind: Accepted, Provider: "p", Ref: "b"}}, nil)
	e.expect("p", "c", t0.Add(61*time.Second))
	if n, _ := e.state(); n != 1 || len(e.queue) != 1 || e.queue[0].ref != "c" {
		t.Fatalf("expected %d, queue %v; want only c", n, e.queue)
	}
}
