package app

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
)

// heldRouteConfig routes Swedish numbers to an SMSC whose own sender is
// the deployment's number, with a backup of its own number, and Norwegian
// ones to the first SMSC alone.
const heldRouteConfig = `providers:
  - name: shared
    type: smpp
    smpp: {addr: %s, systemId: msgsvc, password: secret, sourceAddr: "+15550001111"}
  - name: backup
    type: smpp
    smpp: {addr: %s, systemId: msgsvc, password: secret, sourceAddr: "15550002222"}
routes:
  - {channel: SMS, countries: ["46"], primary: shared, secondary: backup}
  - {channel: SMS, countries: ["47"], primary: shared}
`

// A route's own sender that nobody holds is every account's; once an
// operator approves it for account A, B's messages that name no sender
// never go out from it: they take the route's next provider, else fail
// NO_ROUTE and are refunded, while A's still go out from it. Withdrawn, it
// is everyone's again.
func TestRouteSenderHeldByAnotherAccount(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		shared, backup := smpptest.Start(t), smpptest.Start(t)
		// serve: live SMS take the configured carriers
		e := newEnv(t, d, envOptions{poll: 20 * time.Millisecond, file: fmt.Sprintf(heldRouteConfig, shared.Addr(), backup.Addr())})
		ctx := context.Background()
		polltest.For(t, "both SMSCs bound", 10*time.Second, func() bool { return shared.Binds() > 0 && backup.Binds() > 0 })
		b := e.addAccount(NewAccount{Name: "Other", Tier: "enterprise", Credits: 50, Currency: "EUR", Country: "44"})
		bKey, _ := e.addKey(b.ID, "live")
		sendFrom := func(key, to string) string {
			t.Helper()
			return msgID(t, send(t, e, key, map[string]any{"to": to, "message": "hi", "type": "SMS"}), 0)
		}
		// wentOut checks a message was delivered by provider p from sender.
		wentOut := func(who, key, mid, p string, smsc *smpptest.SMSC, sender string) {
			t.Helper()
			m := finalStatus(t, e, key, mid, "DELIVERED")
			to := m["to"].(string)
			i := slices.Index(smsc.Submits(), to)
			if m["provider"] != p || i < 0 || smsc.Sources()[i] != sender {
				t.Fatalf("%s: provider %v, %s got %v from %v; want %s from %s", who, m["provider"], p, smsc.Submits(), smsc.Sources(), p, sender)
			}
		}

		// Nobody holds it: it is the deployment's, B's messages use it.
		wentOut("B before anyone holds the number", bKey.Secret, sendFrom(bKey.Secret, "4791000001"), "shared", shared, "15550001111")

		op := e.member("operator")
		r := e.mg("POST", "/api/v1/manage/senders?account="+e.account.ID, op, map[string]any{"channel": "SMS", "value": "15550001111"})
		if r.status != 201 || r.json(t)["status"] != domain.SenderApproved {
			t.Fatalf("operator gives A the route's number: %d %s", r.status, r.body)
		}
		held := r.json(t)["id"].(string)

		wentOut("B with a backup", bKey.Secret, sendFrom(bKey.Secret, "46700000002"), "backup", backup, "15550002222")
		wentOut("A, who holds it", e.liveKey, sendFrom(e.liveKey, "4791000003"), "shared", shared, "15550001111")
		wentOut("A, who holds it, where there is a backup", e.liveKey, sendFrom(e.liveKey, "46700000004"), "shared", shared, "15550001111")

		// Without a backup B's message has no route, and is refunded.
		before := ledgerBalance(ctx, t, e, b.ID)
		mid := sendFrom(bKey.Secret, "4791000005")
		finalStatus(t, e, bKey.Secret, mid, "FAILED")
		m, err := e.st.MessageByID(ctx, mid)
		if err != nil {
			t.Fatal(err)
		}
		// The price is kept (the ledger's debit matches it); what the
		// message shows as charged is 0.
		if m.ErrorCode != domain.CodeNoRoute || m.Charged != 0 || m.Credits == 0 || m.Billed() != 0 ||
			m.ErrorMessage != `every provider of route "route-2" would send from its own sender, which another account holds; name a sender of yours` {
			t.Fatalf("B without a backup: %s %q %q, charged %d, credits %d; want FAILED NO_ROUTE, its price kept, refunded to 0", m.Status, m.ErrorCode,
				m.ErrorMessage, m.Charged, m.Credits)
		}
		if after := ledgerBalance(ctx, t, e, b.ID); after != before {
			t.Fatalf("B's balance %d after the failed message, %d before it: not refunded", after, before)
		}
		if slices.Contains(shared.Submits(), "4791000005") || slices.Contains(backup.Submits(), "4791000005") {
			t.Fatal("the message without a route reached an SMSC")
		}

		// Withdrawn, the number is the deployment's again.
		if r := e.mg("DELETE", "/api/v1/manage/senders/"+held+"?account="+e.account.ID, op, nil); r.status != 204 {
			t.Fatalf("withdraw: %d %s", r.status, r.body)
		}
		wentOut("B after A withdrew it", bKey.Secret, sendFrom(bKey.Secret, "4791000006"), "shared", shared, "15550001111")
	})
}

// ledgerBalance is an account's balance, checked against its ledger.
func ledgerBalance(ctx context.Context, t *testing.T, e *env, accountID string) int64 {
	t.Helper()
	a, err := e.st.Account(ctx, accountID)
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := e.st.LedgerSum(ctx, accountID); err != nil || sum != a.Balance {
		t.Fatalf("balance %d, ledger sum %d (%v)", a.Balance, sum, err)
	}
	return a.Balance
}
