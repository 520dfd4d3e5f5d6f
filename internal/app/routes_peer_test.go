package app

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
)

// Routes that know money, against the independent SMSC simulator
// (node-smpp) rather than this repository's own: two instances, a cheap
// one whose every receipt says UNDELIV (its FAIL_PERMILLE) and a dear one
// that delivers. Least cost takes the cheap one; quality leaves it once its
// receipts show it failing; failover leaves the dear one once its process
// is killed. CI's SMPP peer step sets MSGSVC_TEST_SMSC_SIM_DIR.
func TestRoutesAcrossSimulatorsPeer(t *testing.T) {
	dir := os.Getenv("MSGSVC_TEST_SMSC_SIM_DIR")
	if dir == "" {
		t.Skip("set MSGSVC_TEST_SMSC_SIM_DIR to the SMSC simulator's folder (shared/peers/smsc-sim) to run this test")
	}
	forEachDialect(t, func(t *testing.T, d string) {
		cheap := smpptest.StartPeer(t, dir, "FAIL_PERMILLE=1000")
		dear := smpptest.StartPeer(t, dir)
		yaml := fmt.Sprintf(`currency: USD
providers:
  - name: cheap
    type: smpp
    smpp: {addr: %q, systemId: kannel, password: kannel}
    costs: {"46": 0.01}
    breaker: {failures: 1, cooldown: 10m}
  - name: dear
    type: smpp
    smpp: {addr: %q, systemId: kannel, password: kannel}
    costs: {"46": 0.02}
    breaker: {failures: 1, cooldown: 10m}
routes:
  - {name: cheapest, channel: SMS, prefixes: ["46700"], providers: [dear, cheap], strategy: least-cost}
  - {name: best, channel: SMS, prefixes: ["46701"], providers: [cheap, dear], strategy: quality, window: 20}
  - {name: backed, channel: SMS, prefixes: ["46705"], providers: [dear, cheap]}
`, cheap.Addr, dear.Addr)
		serve := withConfigFile(t, yaml)
		e := newEnv(t, d, envOptions{poll: 20 * time.Millisecond, config: func(c *config.Config) {
			serve(c)
			c.DispatchLease = 2 * time.Second
		}})

		// Quality: both unknown, so the tie goes to the cheaper; its
		// UNDELIV receipt then puts its ratio at 0 and the route moves.
		var got []string
		for i := range 3 {
			m := sendOne(t, e, fmt.Sprintf("4670100001%d", i))
			got = append(got, m.Provider+":"+string(m.Status))
		}
		if s := strings.Join(got, ","); s != "cheap:FAILED,dear:DELIVERED,dear:DELIVERED" {
			t.Fatalf("quality: %s", s)
		}

		// Least cost ignores quality: the cheaper, listed second, with its cost.
		if m := sendOne(t, e, "46700000011"); m.Provider != "cheap" || m.Route != "cheapest" || m.Cost != 10_000 {
			t.Fatalf("least-cost: %+v", m)
		}

		// Failover: the dear simulator dies; its breaker opens at the first
		// failed hand-over and the message goes to the next provider.
		if err := dear.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		if _, err := dear.Process.Wait(); err != nil && !strings.Contains(err.Error(), "child process") {
			t.Logf("wait for the killed simulator: %v", err)
		}
		mid := msgID(t, send(t, e, e.liveKey, map[string]any{"to": "46705000011", "message": "hi", "type": "SMS"}), 0)
		var m domain.Message
		polltest.For(t, "failover to cheap", 30*time.Second, func() bool {
			var err error
			if m, err = e.st.MessageByID(t.Context(), mid); err != nil {
				t.Fatal(err)
			}
			return m.Status.Final()
		})
		if m.Provider != "cheap" || m.Route != "backed" {
			t.Fatalf("failover: %+v", m)
		}
	})
}
