package app

import (
	"context"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// consoleTree is a reseller with a child, each with users of every role
// that log in again after the clock moves (sessions end after 12 h idle).
type consoleTree struct {
	e                      *env
	emails                 map[string]string // account id + "/" + role → email
	reseller, child, other string
}

func (c *consoleTree) token(accountID, role string) string {
	c.e.t.Helper()
	k := accountID + "/" + role
	if _, ok := c.emails[k]; !ok {
		email := fmt.Sprintf("%s-%s@console.example", role, strings.ToLower(accountID))
		if _, _, err := createTestUser(context.Background(), c.e.st, accountID, email, role, testPassword, c.e.clock.Now()); err != nil {
			c.e.t.Fatal(err)
		}
		c.emails[k] = email
	}
	return c.e.login(c.emails[k], testPassword)
}

func newConsoleTree(t *testing.T, e *env) *consoleTree {
	t.Helper()
	c := &consoleTree{e: e, emails: map[string]string{}}
	op := e.member("operator")
	const base = "/api/v1/manage"
	mk := func(token string, body map[string]any) string {
		t.Helper()
		r := e.mg("POST", base+"/accounts", token, body)
		if r.status != 201 {
			t.Fatalf("account %v: %d %s", body, r.status, r.body)
		}
		return r.json(t)["id"].(string)
	}
	c.reseller = mk(op, map[string]any{"name": "Reseller", "country": "55", "reseller": true})
	c.other = mk(op, map[string]any{"name": "Other reseller", "country": "55", "reseller": true})
	c.child = mk(c.token(c.reseller, "owner"), map[string]any{"name": "Customer", "country": "55"})
	return c
}

// moveTo puts the node's clock at t.
func moveTo(e *env, t time.Time) {
	e.clock.Advance(time.Until(t) - time.Duration(e.clock.offset.Load()))
}

// TestStatementsReconcileWithTheLedger: a reseller and its child through
// two months of top-ups, transfers both ways, two-level charges at home and
// abroad and a refund; each month's statement adds up, its closing balance
// is the ledger's sum at the month's end as summed here line by line, the
// next month opens where it closed, the current month closes at the
// balance, and the CSV says the same as the JSON.
func TestStatementsReconcileWithTheLedger(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		c := newConsoleTree(t, e)
		const base = "/api/v1/manage"
		now := e.clock.Now().UTC()
		monthA := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		monthB := monthA.AddDate(0, 1, 0)
		moveTo(e, monthA.Add(time.Hour))

		op := e.member("operator")
		if r := e.mg("POST", base+"/topups?account="+c.reseller, op, map[string]any{"amount": 100}); r.status != 200 {
			t.Fatalf("top-up: %d %s", r.status, r.body)
		}
		rOwner := c.token(c.reseller, "owner")
		if r := e.mg("POST", base+"/accounts/"+c.child+"/transfers", rOwner, map[string]any{"amount": 30, "note": "A"}); r.status != 201 {
			t.Fatalf("transfer: %d %s", r.status, r.body)
		}
		key, _ := e.addKey(c.child, "live")
		var ids []string
		for _, body := range []map[string]any{
			{"to": "5511999990001", "message": strings.Repeat("two segments ", 14), "type": "SMS"},
			{"to": "447911123456", "message": "abroad", "type": "SMS"},
			{"to": "5511999990002", "message": "later", "type": "SMS", "scheduledAt": e.clock.Now().Add(48 * time.Hour).Format(time.RFC3339)},
		} {
			r := send(t, e, key.Secret, body)
			if r.status != 202 {
				t.Fatalf("send %v: %d %s", body["to"], r.status, r.body)
			}
			ids = append(ids, r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string))
		}
		if r := e.do("POST", "/api/v1/integration/messages/"+ids[2]+"/cancel", key.Secret, nil); r.status != 200 {
			t.Fatalf("cancel: %d %s", r.status, r.body)
		}
		for _, id := range ids[:2] {
			polltest.Until(t, "message "+id+" handed over", func() bool {
				m, err := e.st.MessageByID(ctx, id)
				return err == nil && m.Status != "SENDING"
			})
		}

		moveTo(e, monthB.Add(2*time.Hour))
		op, rOwner = e.member("operator"), c.token(c.reseller, "owner")
		if r := e.mg("POST", base+"/topups?account="+c.reseller, op, map[string]any{"amount": 10}); r.status != 200 {
			t.Fatalf("top-up: %d %s", r.status, r.body)
		}
		if r := e.mg("POST", base+"/accounts/"+c.child+"/transfers", rOwner, map[string]any{"amount": -5, "note": "back"}); r.status != 201 {
			t.Fatalf("take back: %d %s", r.status, r.body)
		}
		if r := send(t, e, key.Secret, map[string]any{"to": "5511999990003", "message": "one", "type": "SMS"}); r.status != 202 {
			t.Fatalf("send in B: %d %s", r.status, r.body)
		}

		statement := func(token, account, month string) map[string]any {
			t.Helper()
			r := e.mg("GET", base+"/statements/"+month+"?account="+account, token, nil)
			if r.status != 200 {
				t.Fatalf("statement %s %s: %d %s", account, month, r.status, r.body)
			}
			return r.json(t)
		}
		// ledgerAt sums the account's ledger lines by kind over [from, to),
		// here, from the lines themselves.
		ledgerAt := func(account string, from, to time.Time) (before int64, kinds map[ledger.Kind]int64) {
			t.Helper()
			lines, err := e.st.Ledger(ctx, account, "", 100000)
			if err != nil {
				t.Fatal(err)
			}
			kinds = map[ledger.Kind]int64{}
			for _, l := range lines {
				switch {
				case l.CreatedAt.Before(from):
					before += l.Amount
				case l.CreatedAt.Before(to):
					kinds[l.Kind] += l.Amount
				}
			}
			return before, kinds
		}
		cr := ledger.Credits
		for _, acct := range []string{c.reseller, c.child} {
			opA := statement(rOwner, acct, monthA.Format("2006-01"))
			opB := statement(op, acct, monthB.Format("2006-01"))
			for _, m := range []struct {
				st       map[string]any
				from, to time.Time
			}{{opA, monthA, monthB}, {opB, monthB, monthB.AddDate(0, 1, 0)}} {
				before, kinds := ledgerAt(acct, m.from, m.to)
				var sum int64
				for _, v := range kinds {
					sum += v
				}
				var charged float64
				for _, ch := range m.st["charges"].([]any) {
					charged += ch.(map[string]any)["credits"].(float64)
				}
				want := map[string]float64{"opening": cr(before), "topUps": cr(kinds[ledger.TopUp] + kinds[ledger.Adjust]),
					"transfers": cr(kinds[ledger.Transfer]), "refunds": cr(kinds[ledger.Refund]), "closing": cr(before + sum)}
				for k, v := range want {
					if m.st[k] != v {
						t.Errorf("%s %s: %s = %v, the ledger says %v (%v)", acct, m.st["month"], k, m.st[k], v, m.st)
					}
				}
				if charged != -cr(kinds[ledger.Debit]) {
					t.Errorf("%s %s: charges %v, the ledger's debits %v", acct, m.st["month"], charged, -cr(kinds[ledger.Debit]))
				}
				if got := m.st["opening"].(float64) + m.st["topUps"].(float64) + m.st["transfers"].(float64) - charged + m.st["refunds"].(float64); got != m.st["closing"] {
					t.Errorf("%s %s does not add up: %v", acct, m.st["month"], m.st)
				}
			}
			if opB["opening"] != opA["closing"] {
				t.Errorf("%s: B opens at %v, A closed at %v", acct, opB["opening"], opA["closing"])
			}
			a, err := e.st.Account(ctx, acct)
			if err != nil {
				t.Fatal(err)
			}
			if opB["closing"] != cr(a.Balance) {
				t.Errorf("%s: the current month closes at %v, the balance is %v", acct, opB["closing"], cr(a.Balance))
			}
			// What the month held, as sent: two-level charges at the default
			// prices (2 segments at home, which the simulator refuses as an
			// invalid number and so refunds; 1 abroad at 2 a segment; and the
			// canceled one, reserved and refunded).
			charges := map[string]string{}
			for _, ch := range opA["charges"].([]any) {
				ch := ch.(map[string]any)
				charges[fmt.Sprint(ch["channel"], "/", ch["country"])] = fmt.Sprint(ch["messages"], " ", ch["segments"], " ", ch["credits"])
			}
			if charges["SMS/55"] != "2 3 3" || charges["SMS/44"] != "1 1 2" || len(charges) != 2 || opA["refunds"] != 3.0 {
				t.Errorf("%s: month A's charges %v, refunds %v", acct, charges, opA["refunds"])
			}
			wantTransfers := map[string]float64{c.reseller: -30, c.child: 30}[acct]
			if opA["transfers"] != wantTransfers || opA["opening"] != 0.0 {
				t.Errorf("%s: month A %v", acct, opA)
			}

			// The CSV says the same.
			r := e.mg("GET", base+"/statements/"+monthA.Format("2006-01")+"?format=csv&account="+acct, op, nil)
			if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") {
				t.Fatalf("csv: %d %s", r.status, r.body)
			}
			rows, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(rows[0], ",") != "accountId,month,currency,line,channel,country,messages,segments,credits" {
				t.Fatalf("csv header %v", rows[0])
			}
			last := rows[len(rows)-1]
			if closing, _ := strconv.ParseFloat(last[8], 64); last[3] != "closing" || closing != opA["closing"] || last[0] != acct {
				t.Errorf("csv's last row %v, JSON closing %v", last, opA["closing"])
			}
			if len(rows) != 1+3+len(opA["charges"].([]any))+2 {
				t.Errorf("csv rows: %v", rows)
			}
		}
		// Bad months.
		wantProblem(t, "a month that is no month", e.mg("GET", base+"/statements/2026-13?account="+c.child, op, nil), 400, "VALIDATION_ERROR")
		wantProblem(t, "a future month", e.mg("GET", base+"/statements/"+monthB.AddDate(0, 1, 0).Format("2006-01")+"?account="+c.child, op, nil), 400, "VALIDATION_ERROR")
		wantProblem(t, "an operator naming no account", e.mg("GET", base+"/statements/"+monthB.Format("2006-01"), op, nil), 400, "VALIDATION_ERROR")
	})
}

// TestConsoleWhoseIsThis: statements and exports answer only for an
// account in the caller's subtree and only to its admins and owners (or
// operators); the search and export across accounts only to operators.
func TestConsoleWhoseIsThis(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		c := newConsoleTree(t, e)
		const base = "/api/v1/manage"
		op := e.member("operator")
		month := e.clock.Now().UTC().Format("2006-01")
		if r := e.mg("POST", base+"/topups?account="+c.reseller, op, map[string]any{"amount": 50}); r.status != 200 {
			t.Fatalf("top-up: %d %s", r.status, r.body)
		}
		if r := e.mg("POST", base+"/accounts/"+c.child+"/transfers", c.token(c.reseller, "owner"), map[string]any{"amount": 20}); r.status != 201 {
			t.Fatalf("transfer: %d %s", r.status, r.body)
		}
		childKey, _ := e.addKey(c.child, "test")
		childMsg := send(t, e, childKey.Secret, map[string]any{"to": "5511999990010", "message": "child's words", "type": "SMS", "reference": "=HYPERLINK(1)"}).json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		ownMsg := send(t, e, e.testKey, map[string]any{"to": "5511999990011", "message": "acme's words", "type": "SMS"}).json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)

		paths := func(target string) []string {
			q := "?account=" + target
			return []string{base + "/statements/" + month + q, base + "/exports/messages.csv" + q, base + "/exports/ledger.csv" + q,
				base + "/exports/usage.csv" + q}
		}
		// What an admin of the reseller reads of its child.
		rAdmin := c.token(c.reseller, "admin")
		got := map[string]string{}
		for _, p := range paths(c.child) {
			r := e.mg("GET", p, rAdmin, nil)
			if r.status != 200 {
				t.Fatalf("%s by the parent's admin: %d %s", p, r.status, r.body)
			}
			got[p] = string(r.body)
		}
		msgs := got[paths(c.child)[1]]
		if !strings.HasPrefix(msgs, "id,accountId,createdAt,to,from,channel,type,status,segments,credits,errorCode,environment,campaignId,reference\n") ||
			!strings.Contains(msgs, childMsg) || strings.Contains(msgs, ownMsg) || strings.Contains(msgs, "words") || !strings.Contains(msgs, ",'=HYPERLINK(1)") {
			t.Errorf("the child's messages export:\n%s", msgs)
		}
		if l := got[paths(c.child)[2]]; !strings.HasPrefix(l, "id,createdAt,kind,amount,balanceAfter,messageId,campaignId,counterparty,note\n") ||
			!strings.Contains(l, ",transfer,20,20,") || !strings.Contains(l, c.reseller) {
			t.Errorf("the child's ledger export:\n%s", l)
		}
		if u := got[paths(c.child)[3]]; !strings.HasPrefix(u, "day,environment,channel,country,messages,segments,credits,delivered,failed\n") {
			t.Errorf("the child's usage export:\n%s", u)
		}
		if u := e.mg("GET", base+"/exports/usage.csv?environment=test&account="+c.child, rAdmin, nil); !strings.Contains(string(u.body), ",test,SMS,55,1,1,0,") {
			t.Errorf("the child's test usage: %s", u.body)
		}

		// Another tree, a parent, a sibling's reseller: not found.
		for _, x := range []struct{ who, token, target string }{
			{"a child reaching for its parent", c.token(c.child, "owner"), c.reseller},
			{"another reseller", c.token(c.other, "owner"), c.reseller},
			{"another reseller's child", c.token(c.other, "owner"), c.child},
			{"a reseller reaching for another", c.token(c.reseller, "owner"), c.other},
			{"a plain account", e.member("owner"), c.child},
		} {
			for _, p := range paths(x.target) {
				r := e.mg("GET", p, x.token, nil)
				if r.status != 404 || r.json(t)["code"] != "NOT_FOUND" || strings.Contains(string(r.body), childMsg) {
					t.Errorf("%s: GET %s answered %d %s", x.who, p, r.status, r.body)
				}
			}
		}
		// Roles below admin, of the account itself and of its parent.
		for _, role := range []string{"viewer", "developer"} {
			for _, p := range append(paths(c.child), paths("")...) {
				tok := c.token(c.reseller, role)
				if !strings.Contains(p, c.child) {
					tok = c.token(c.child, role)
				}
				wantProblem(t, role+" "+p, e.mg("GET", p, tok, nil), 403, "FORBIDDEN")
			}
		}
		// Their own account's, for its admins and owners.
		for _, role := range []string{"admin", "owner"} {
			for _, p := range paths("") {
				if r := e.mg("GET", p, c.token(c.child, role), nil); r.status != 200 {
					t.Errorf("the child's %s: %s answered %d %s", role, p, r.status, r.body)
				}
			}
		}

		// Across accounts: operators only.
		for _, p := range []string{base + "/messages?allAccounts=true", base + "/exports/messages.csv?allAccounts=true"} {
			for _, tok := range []string{c.token(c.reseller, "owner"), e.member("admin")} {
				wantProblem(t, "a user's "+p, e.mg("GET", p, tok, nil), 403, "FORBIDDEN")
			}
			r := e.mg("GET", p, op, nil)
			if r.status != 200 || !strings.Contains(string(r.body), childMsg) || !strings.Contains(string(r.body), ownMsg) ||
				!strings.Contains(string(r.body), c.child) || !strings.Contains(string(r.body), e.account.ID) || strings.Contains(string(r.body), "words") {
				t.Errorf("the operator's %s: %d %s", p, r.status, r.body)
			}
		}
		r := e.mg("GET", base+"/messages?allAccounts=true&to=5511999990010", op, nil)
		if list := r.json(t)["messages"].([]any); len(list) != 1 || list[0].(map[string]any)["accountId"] != c.child {
			t.Errorf("the operator's search by phone: %s", r.body)
		}
		// Pages across accounts: one message a page, newest first, each once.
		seen := map[string]bool{}
		next := base + "/messages?allAccounts=true&limit=1"
		for i := 0; next != "" && i < 10; i++ {
			page := e.mg("GET", next, op, nil).json(t)
			for _, m := range page["messages"].([]any) {
				seen[m.(map[string]any)["messageId"].(string)] = true
			}
			next = ""
			if cur, _ := page["nextCursor"].(string); cur != "" {
				next = base + "/messages?allAccounts=true&limit=1&cursor=" + cur
			}
		}
		if len(seen) != 2 || !seen[childMsg] || !seen[ownMsg] {
			t.Errorf("paging across accounts saw %v", seen)
		}
		wantProblem(t, "all accounts and one", e.mg("GET", base+"/messages?allAccounts=true&account="+c.child, op, nil), 400, "VALIDATION_ERROR")
		wantProblem(t, "a bad range", e.mg("GET", base+"/exports/ledger.csv?from=2026-11-02&to=2026-11-01&account="+c.child, op, nil), 400, "VALIDATION_ERROR")

		// Margins as CSV: operators, and a reseller per child.
		if r := e.mg("GET", base+"/exports/margins.csv?groupBy=account", op, nil); r.status != 200 ||
			!strings.HasPrefix(string(r.body), "key,messages,segments,price,cost,margin,marginPercent,deliveredRatio\n") {
			t.Errorf("margins csv: %d %s", r.status, r.body)
		}
		wantProblem(t, "a plain account's margins", e.mg("GET", base+"/exports/margins.csv", e.member("owner"), nil), 403, "FORBIDDEN")
		wantProblem(t, "another reseller's margins", e.mg("GET", base+"/exports/margins.csv?account="+c.reseller, c.token(c.other, "owner"), nil), 404, "NOT_FOUND")
	})
}
