package app

import (
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// A live SMS crosses SMPP to the independent SMSC simulator (node-smpp,
// ../shared/peers/smsc-sim), whose delivery receipt comes back as a signed
// DELIVERED webhook. CI starts the simulator and sets MSGSVC_TEST_SMSC_ADDR.
func TestLiveSMSOverSMPPPeer(t *testing.T) {
	addr := os.Getenv("MSGSVC_TEST_SMSC_ADDR")
	if addr == "" {
		t.Skip("set MSGSVC_TEST_SMSC_ADDR to an SMSC simulator (internal/provider/smpp/testdata/run-peer.sh starts one)")
	}
	user, pass := os.Getenv("MSGSVC_TEST_SMSC_SYSTEM_ID"), os.Getenv("MSGSVC_TEST_SMSC_PASSWORD")
	if user == "" {
		user, pass = "kannel", "kannel"
	}
	e := newEnv(t, "sqlite", envOptions{config: func(c *config.Config) {
		c.Dev = false // serve: live SMS must take the configured carrier
		c.SMPPAddr, c.SMPPSystemID, c.SMPPPassword = addr, user, pass
	}})
	cases := []struct {
		name, text string
		segments   float64
	}{
		{"one part", "Your code is 482913", 1},
		{"three parts", strings.Repeat("Long message over SMPP, three parts with one reference. ", 7), 3},
		{"UCS-2", "Olá, tudo bem? Código 1234 ✓", 1},
	}
	for _, c := range cases {
		r := send(t, e, e.liveKey, map[string]any{"to": "4670000000" + "1", "message": c.text, "type": "SMS",
			"callbackUrl": e.hooks.url()})
		if r.status != 202 {
			t.Fatalf("%s: send %d %s", c.name, r.status, r.body)
		}
		m0 := r.json(t)["messages"].([]any)[0].(map[string]any)
		if m0["segments"] != c.segments {
			t.Fatalf("%s: %v segments, want %v", c.name, m0["segments"], c.segments)
		}
		mid := m0["messageId"].(string)
		m := finalStatus(t, e, e.liveKey, mid, "DELIVERED")
		if m["provider"] != "smpp" || m["channel"] != "SMS" {
			t.Fatalf("%s: %v", c.name, m)
		}
		polltest.For(t, c.name+" webhooks", 20*time.Second, func() bool {
			got := e.hooks.forMessage(mid)
			return len(got) >= 2
		})
		statuses := e.hooks.forMessage(mid)
		if strings.Join(sortedByRank(statuses), ",") != "SENT,DELIVERED" {
			t.Fatalf("%s: webhooks %v", c.name, statuses)
		}
	}
	if e.hooks.badSigs != 0 {
		t.Fatalf("%d webhooks with a bad signature", e.hooks.badSigs)
	}
	if r := e.do("GET", "/readyz", "", nil).json(t); !strings.HasPrefix(r["provider:smpp"].(string), "ok") {
		t.Fatalf("readyz %v", r)
	}
}

// sortedByRank orders statuses as a message reaches them.
func sortedByRank(s []string) []string {
	out := append([]string(nil), s...)
	sort.SliceStable(out, func(i, j int) bool { return rankOf(out[i]) < rankOf(out[j]) })
	return out
}
