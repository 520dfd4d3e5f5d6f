package app

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
)

// A node whose dispatcher is stuck (its SMSC stopped answering) with a
// backlog older than --dispatch-backlog holds the next send due now back,
// for a second at most, then accepts it; the metrics show the backlog,
// its age and the send held. A scheduled send is not held. The queue is
// the node's memory, the same on either database: SQLite alone.
func TestSendsWaitWhileTheDispatcherIsBehind(t *testing.T) {
	smsc := smpptest.Start(t)
	smsc.SetSilent(true)
	e := newEnv(t, "sqlite", envOptions{credits: 10_000, config: func(c *config.Config) {
		c.Dev = false
		c.SMPPAddr, c.SMPPSystemID, c.SMPPPassword = smsc.Addr(), "msgsvc", "secret"
		c.DispatchBacklog = 100 * time.Millisecond
	}})
	polltest.For(t, "the SMSC bound", 10*time.Second, func() bool { return smsc.Binds() > 0 })
	// Hand-overs to a silent SMSC give up within half the lease (15 s);
	// a closed connection fails them at once, so the node stops promptly.
	defer smsc.Kill()

	// Two batches: the two workers take a chunk of 256 each and wait on
	// the silent SMSC; the rest waits in memory. The second batch may
	// itself be held, on a slow machine, behind the first: the counts
	// below are taken from here on.
	for b := range 2 {
		rcpts := make([]string, 1000)
		for i := range rcpts {
			rcpts[i] = fmt.Sprintf("4670%07d", b*1000+i)
		}
		if r := send(t, e, e.liveKey, map[string]any{"recipients": rcpts, "message": "hi", "type": "SMS"}); r.status != http.StatusAccepted {
			t.Fatalf("batch %d: %d %s", b, r.status, r.body)
		}
	}
	polltest.For(t, "a backlog of a chunk or more", 10*time.Second, func() bool {
		return metricValue(t, e, "msgsvc_dispatch_backlog") >= 256
	})
	e.clock.Advance(time.Second) // the backlog is a second old
	if old := metricValue(t, e, "msgsvc_dispatch_backlog_oldest_seconds"); old < 1 {
		t.Fatalf("the oldest waited %vs, want 1 s or more", old)
	}
	before := metricValue(t, e, "msgsvc_sends_held_total")

	later := map[string]any{"to": "46709999998", "message": "later", "type": "SMS",
		"scheduledAt": e.clock.Now().Add(time.Hour).Format(time.RFC3339)}
	if r := send(t, e, e.liveKey, later); r.status != http.StatusAccepted {
		t.Fatalf("scheduled: %d %s", r.status, r.body)
	}
	if n := metricValue(t, e, "msgsvc_sends_held_total"); n != before {
		t.Fatalf("a scheduled send was held (%v, before it %v)", n, before)
	}
	waited := metricValue(t, e, "msgsvc_sends_held_seconds_total")

	// Nothing moves the queue: the send waits out the bound, then is
	// accepted as usual.
	if r := send(t, e, e.liveKey, map[string]any{"to": "46709999999", "message": "now", "type": "SMS"}); r.status != http.StatusAccepted {
		t.Fatalf("send behind the backlog: %d %s", r.status, r.body)
	}
	if n := metricValue(t, e, "msgsvc_sends_held_total"); n != before+1 {
		t.Fatalf("%v sends held, want %v", n, before+1)
	}
	if s := metricValue(t, e, "msgsvc_sends_held_seconds_total"); s <= waited {
		t.Fatalf("held for %vs in all, no more than the %vs before the send", s, waited)
	}
}
