package app

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
)

// A carrier that takes messages and never sends their receipts: once a
// receipt is overdue, msgsvc asks the carrier (query_sm) and records the
// answer, part by part for a long message, with its webhooks, and asks no
// more once the message is final.
func TestOverdueReceiptsAreAskedFor(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		smsc := smpptest.Start(t)
		smsc.SetDropReceipts(true)
		e := newEnv(t, d, envOptions{poll: 20 * time.Millisecond, config: func(c *config.Config) {
			c.Dev = false
			c.SMPPAddr, c.SMPPSystemID, c.SMPPPassword = smsc.Addr(), "msgsvc", "secret"
			c.ReceiptOverdue = time.Second
		}})
		polltest.For(t, "the SMSC bound", 10*time.Second, func() bool { return smsc.Binds() > 0 })
		one := msgID(t, send(t, e, e.liveKey, map[string]any{"to": "46700000019", "message": "short", "type": "SMS",
			"callbackUrl": e.hooks.url()}), 0)
		three := msgID(t, send(t, e, e.liveKey, map[string]any{"to": "46700000029", "message": strings.Repeat("long text ", 40),
			"type": "SMS", "callbackUrl": e.hooks.url()}), 0)
		for _, mid := range []string{one, three} {
			finalStatus(t, e, e.liveKey, mid, "SENT")
		}
		for _, mid := range []string{one, three} {
			m := finalStatus(t, e, e.liveKey, mid, "DELIVERED")
			if m["provider"] != "smpp" {
				t.Errorf("%s: %v", mid, m)
			}
			polltest.For(t, mid+"'s DELIVERED webhook", 10*time.Second, func() bool {
				return slices.Contains(e.hooks.forMessage(mid), "DELIVERED")
			})
		}
		if n := len(smsc.Submits()); n != 4 {
			t.Errorf("%d submit_sm, want 4 (1 + 3 parts)", n)
		}
		asked := smsc.Queries()
		if asked < 4 {
			t.Errorf("%d query_sm, want one per part at least", asked)
		}
		// Final messages are not asked about again: the checker runs every
		// second and would ask again after 2 s; that nothing happens can only
		// be observed over a span of time.
		time.Sleep(3 * time.Second)
		if again := smsc.Queries(); again != asked {
			t.Errorf("query_sm went on after the messages were final: %d, then %d", asked, again)
		}
	})
}
