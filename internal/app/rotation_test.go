package app

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// A secret rotated elsewhere (another node, the command line) signs the
// very next webhook on this node: the deliverer's cached keys stand only
// while the accounts' version counter does (they were used for up to 5 s).
func TestRotatedSecretSignsAtOnce(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		hookFor := func() hook {
			t.Helper()
			m := send(t, e, e.testKey, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS", "callbackUrl": e.hooks.url()})
			mid := m.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
			polltest.For(t, "a webhook", 10*time.Second, func() bool { return len(e.hooks.forMessage(mid)) > 0 })
			for _, h := range e.hooks.all() {
				if strings.Contains(string(h.raw), mid) {
					return h
				}
			}
			t.Fatal("no webhook")
			return hook{}
		}
		first := hookFor()
		if n := len(strings.Fields(first.header.Get("webhook-signature"))); n != 1 {
			t.Fatalf("before the rotation: %d signatures", n)
		}
		next, err := webhook.NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		if err := e.st.RotateSecret(ctx, e.account.ID, next, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		h := hookFor()
		key, _ := webhook.DecodeSecret(next)
		ts, _ := strconv.ParseInt(h.header.Get("webhook-timestamp"), 10, 64)
		want := webhook.Sign(key, h.header.Get("webhook-id"), ts, h.raw)
		sigs := strings.Fields(h.header.Get("webhook-signature"))
		if len(sigs) != 2 || sigs[0] != want && sigs[1] != want {
			t.Fatalf("the first webhook after the rotation is not signed with the new secret: %v", sigs)
		}
	})
}
