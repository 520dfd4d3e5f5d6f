package app

import (
	"context"
	"fmt"
	"io"

	"msgsvc/internal/template"
)

// devWelcome creates the demo account on the first start of a dev
// installation and prints what a newcomer needs for a first call. Keys are
// stored only as hashes, so they can be printed this once.
func devWelcome(ctx context.Context, srv *Server, w io.Writer) error {
	st := srv.Store()
	accts, err := st.Accounts(ctx)
	if err != nil {
		return err
	}
	base := "http://" + srv.Addr()
	if len(accts) > 0 {
		fmt.Fprintf(w, "\nmsgsvc dev is running at %s (docs: %s/docs)\n"+
			"The demo keys were printed at first start. Lost them? Create one:\n"+
			"  go run ./cmd/msgsvc key create --account %s --env test\n\n", base, base, accts[0].ID)
		return nil
	}
	now := srv.now().UTC()
	a, err := CreateAccount(ctx, st, NewAccount{Name: "Demo", Tier: "enterprise", Credits: 1000, Currency: "USD", Country: "1"}, now)
	if err != nil {
		return err
	}
	test, _, err := CreateKey(ctx, st, a.ID, "test", now)
	if err != nil {
		return err
	}
	live, _, err := CreateKey(ctx, st, a.ID, "live", now)
	if err != nil {
		return err
	}
	u, pw, err := CreateUser(ctx, st, a.ID, "demo@msgsvc.local", "owner", "", now)
	if err != nil {
		return err
	}
	tpls := template.New(st, srv.now)
	for _, t := range []template.NewTemplate{
		{Name: "welcome", Language: "en", Category: template.Utility, Body: "Hello {{1}}, welcome to {{2}}!",
			Parameters: []string{"customer name", "company name"}},
		{Name: "order_update", Language: "en", Category: template.Utility, Body: "Your order {{1}} is {{2}}.",
			Parameters: []string{"order number", "order status"}},
	} {
		if _, err := tpls.Create(ctx, a.ID, t); err != nil {
			return fmt.Errorf("demo template %s: %w", t.Name, err)
		}
	}
	fmt.Fprintf(w, `
msgsvc dev is running at %[1]s — API reference: %[1]s/docs

A demo account was created (shown only this once; save these):
  account         %[2]s   (1000 credits, enterprise tier)
  test key        %[3]s
  live key        %[4]s   (routed to the simulator in dev)
  webhook secret  %[5]s
  panel login     %[6]s / %[7]s

Try it:
  curl -s %[1]s/api/v1/integration/balance -H "X-API-KEY: %[3]s"
  curl -s %[1]s/api/v1/integration/messages -H "X-API-KEY: %[3]s" \
       -H 'Content-Type: application/json' \
       -d '{"to":"5511999990000","message":"Hello from msgsvc","type":"SMS"}'

`, base, a.ID, test.Secret, live.Secret, a.WebhookSecret, u.Email, pw)
	return nil
}
