package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// The account tree through the management API (section 12): an operator
// makes resellers, a reseller's owner makes and funds children, and every
// path of the tree answers 404 to an account outside the caller's subtree:
// a sibling, the parent, another reseller's tree.
func TestResellerTree(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		op := e.member("operator")
		owner := func(accountID, role string) string {
			t.Helper()
			email := fmt.Sprintf("%s-%s@tree.example", role, strings.ToLower(accountID))
			if _, _, err := createTestUser(ctx, e.st, accountID, email, role, testPassword, e.clock.Now()); err != nil {
				t.Fatal(err)
			}
			return e.login(email, testPassword)
		}
		created := func(what string, r response) map[string]any {
			t.Helper()
			if r.status != 201 {
				t.Fatalf("%s: %d %s", what, r.status, r.body)
			}
			return r.json(t)
		}
		const base = "/api/v1/manage"

		// The operator makes two resellers and funds one.
		r1 := created("reseller", e.mg("POST", base+"/accounts", op, map[string]any{"name": "Reseller One", "country": "55", "currency": "BRL", "reseller": true}))
		r2 := created("second reseller", e.mg("POST", base+"/accounts", op, map[string]any{"name": "Reseller Two", "country": "44", "reseller": true}))
		rID, r2ID := r1["id"].(string), r2["id"].(string)
		if r1["reseller"] != true || r1["parentId"] != nil || r1["currency"] != "BRL" {
			t.Fatalf("reseller: %v", r1)
		}
		if r := e.mg("POST", base+"/topups?account="+rID, op, map[string]any{"amount": 100}); r.status != 200 {
			t.Fatalf("top-up: %d %s", r.status, r.body)
		}
		rOwner, r2Owner, rViewer := owner(rID, "owner"), owner(r2ID, "owner"), owner(rID, "viewer")

		// The reseller's owner makes two children; a viewer may not, nor
		// the owner of an account that is no reseller.
		c1 := created("child", e.mg("POST", base+"/accounts", rOwner, map[string]any{"name": "Customer One", "country": "55"}))
		c1ID := c1["id"].(string)
		if c1["parentId"] != rID || c1["currency"] != "BRL" || c1["balance"] != 0.0 || c1["billing"] != "submit" {
			t.Fatalf("child: %v", c1)
		}
		c2ID := created("sibling", e.mg("POST", base+"/accounts", rOwner, map[string]any{"name": "Customer Two", "country": "55",
			"billing": "delivery"}))["id"].(string)
		wantProblem(t, "a viewer creating a child", e.mg("POST", base+"/accounts", rViewer, map[string]any{"name": "X", "country": "55"}), 403, "FORBIDDEN")
		wantProblem(t, "a plain account's owner creating a child", e.mg("POST", base+"/accounts", e.member("owner"),
			map[string]any{"name": "X", "country": "55"}), 403, "FORBIDDEN")
		wantProblem(t, "a child without a name", e.mg("POST", base+"/accounts", rOwner, map[string]any{"country": "55"}), 400, "VALIDATION_ERROR")

		// The reseller makes its child a reseller; the grandchild is the
		// deepest level.
		if r := e.mg("PUT", base+"/accounts/"+c1ID, rOwner, map[string]any{"reseller": true}); r.status != 200 || r.json(t)["reseller"] != true {
			t.Fatalf("child made a reseller: %d %s", r.status, r.body)
		}
		c1Owner, c2Owner := owner(c1ID, "owner"), owner(c2ID, "owner")
		gID := created("grandchild", e.mg("POST", base+"/accounts", c1Owner, map[string]any{"name": "End Customer", "country": "55"}))["id"].(string)
		wantProblem(t, "a fourth level", e.mg("PUT", base+"/accounts/"+gID, c1Owner, map[string]any{"reseller": true}), 409, "ACCOUNT_TREE_TOO_DEEP")
		wantProblem(t, "un-reselling a parent", e.mg("PUT", base+"/accounts/"+c1ID, rOwner, map[string]any{"reseller": false}), 409, "ACCOUNT_HAS_CHILDREN")
		gOwner := owner(gID, "owner")

		// Lists: the operator sees all, a reseller its children.
		list := func(token, q string) string {
			t.Helper()
			r := e.mg("GET", base+"/accounts"+q, token, nil)
			if r.status != 200 {
				t.Fatalf("list%s: %d %s", q, r.status, r.body)
			}
			return string(r.body)
		}
		if l := list(rOwner, ""); !strings.Contains(l, c1ID) || !strings.Contains(l, c2ID) || strings.Contains(l, gID) || strings.Contains(l, r2ID) {
			t.Fatalf("reseller's children: %s", l)
		}
		if l := list(rOwner, "?account="+c1ID); !strings.Contains(l, gID) || strings.Contains(l, c2ID) {
			t.Fatalf("grandchildren: %s", l)
		}
		if l := list(op, ""); !strings.Contains(l, gID) || !strings.Contains(l, r2ID) {
			t.Fatalf("operator's list: %s", l)
		}
		wantProblem(t, "a leaf listing", e.mg("GET", base+"/accounts", c2Owner, nil), 403, "FORBIDDEN")

		// Transfers, both ways, never below zero on either side.
		tr := func(token, child string, amount float64) response {
			return e.mg("POST", base+"/accounts/"+child+"/transfers", token, map[string]any{"amount": amount, "note": "monthly"})
		}
		if m := created("transfer", tr(rOwner, c1ID, 30)); m["parentBalance"] != 70.0 || m["childBalance"] != 30.0 {
			t.Fatalf("transfer: %v", m)
		}
		if m := created("take back", tr(rOwner, c1ID, -5)); m["parentBalance"] != 75.0 || m["childBalance"] != 25.0 {
			t.Fatalf("take back: %v", m)
		}
		created("down a level", tr(c1Owner, gID, 10))
		wantProblem(t, "parent short", tr(rOwner, c1ID, 76), 402, "INSUFFICIENT_CREDITS")
		wantProblem(t, "child short", tr(rOwner, c1ID, -16), 409, "CHILD_INSUFFICIENT_CREDITS")
		wantProblem(t, "no amount", e.mg("POST", base+"/accounts/"+c1ID+"/transfers", rOwner, map[string]any{}), 400, "VALIDATION_ERROR")
		wantProblem(t, "a viewer transferring", tr(rViewer, c1ID, 1), 403, "FORBIDDEN")
		b := e.mg("GET", base+"/balance?account="+c1ID, rOwner, nil)
		if b.status != 200 || !strings.Contains(string(b.body), `"counterparty":"`+rID+`"`) || !strings.Contains(string(b.body), `"kind":"transfer"`) {
			t.Fatalf("child's ledger seen by its parent: %d %s", b.status, b.body)
		}
		for _, a := range []string{rID, c1ID, gID} {
			acc, err := e.st.Account(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			if sum, _ := e.st.LedgerSum(ctx, a); sum != acc.Balance || acc.Balance < 0 {
				t.Fatalf("%s: balance %d, ledger %d", a, acc.Balance, sum)
			}
		}

		// A child's message: its reseller sees it, not its text.
		ck, _ := e.addKey(gID, "test")
		s := send(t, e, ck.Secret, map[string]any{"to": "5511999990010", "message": "very private words", "type": "SMS"})
		if s.status != 202 {
			t.Fatalf("grandchild's send: %d %s", s.status, s.body)
		}
		mid := s.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		for _, p := range []string{base + "/messages?environment=test&account=" + gID, base + "/messages/" + mid + "?account=" + gID} {
			r := e.mg("GET", p, rOwner, nil)
			if r.status != 200 || !strings.Contains(string(r.body), mid) || strings.Contains(string(r.body), "private") {
				t.Fatalf("%s for the grand-reseller: %d %s", p, r.status, r.body)
			}
		}

		// Margins per child, for the reseller's own subtree.
		if r := e.mg("GET", base+"/reports/margins?groupBy=account", rOwner, nil); r.status != 200 ||
			!strings.Contains(string(r.body), c1ID) || !strings.Contains(string(r.body), c2ID) || strings.Contains(string(r.body), gID) {
			t.Fatalf("reseller's margins: %d %s", r.status, r.body)
		}
		wantProblem(t, "margins by provider", e.mg("GET", base+"/reports/margins?groupBy=provider", rOwner, nil), 400, "VALIDATION_ERROR")
		wantProblem(t, "a leaf's margins", e.mg("GET", base+"/reports/margins?groupBy=account", c2Owner, nil), 403, "FORBIDDEN")

		// Nobody reaches outside its subtree, on any path of the tree.
		paths := func(target string) []struct{ method, path string } {
			return []struct{ method, path string }{
				{"GET", base + "/accounts/" + target}, {"GET", base + "/accounts?account=" + target},
				{"PUT", base + "/accounts/" + target}, {"POST", base + "/accounts/" + target + "/transfers"},
				{"GET", base + "/balance?account=" + target}, {"GET", base + "/messages?account=" + target},
				{"GET", base + "/messages/" + mid + "?account=" + target},
				{"GET", base + "/reports/margins?groupBy=account&account=" + target},
			}
		}
		for _, c := range []struct {
			who, token, target string
		}{
			{"a child reaching for its parent", c1Owner, rID}, {"a grandchild reaching for its parent", gOwner, c1ID},
			{"a grandchild reaching for the top", gOwner, rID}, {"a sibling", c2Owner, c1ID}, {"a sibling's child", c2Owner, gID},
			{"another reseller", r2Owner, rID}, {"another reseller's tree", r2Owner, c1ID}, {"another reseller's grandchild", r2Owner, gID},
			{"a reseller reaching for another", rOwner, r2ID}, {"a plain account", e.member("owner"), c1ID},
		} {
			for _, p := range paths(c.target) {
				var body any
				switch p.method {
				case "PUT":
					body = map[string]any{"billing": "delivery"}
				case "POST":
					body = map[string]any{"amount": 1}
				}
				r := e.mg(p.method, p.path, c.token, body)
				if r.status != 404 || r.json(t)["code"] != "NOT_FOUND" {
					t.Errorf("%s: %s %s answered %d %s", c.who, p.method, p.path, r.status, r.body)
				}
			}
		}
		// A reseller funds only its own children, not its grandchildren.
		wantProblem(t, "a transfer to a grandchild", tr(rOwner, gID, 1), 404, "NOT_FOUND")
		// Billing is set by the parent.
		if r := e.mg("PUT", base+"/accounts/"+c2ID, rOwner, map[string]any{"billing": "submit"}); r.status != 200 || r.json(t)["billing"] != "submit" {
			t.Fatalf("billing by the parent: %d %s", r.status, r.body)
		}
		wantProblem(t, "billing of itself", e.mg("PUT", base+"/accounts/"+c2ID, c2Owner, map[string]any{"billing": "delivery"}), 404, "NOT_FOUND")

		// The margin guard: a parent prices its children at or above its
		// own price unless it says allowLoss.
		if r := e.mg("PUT", base+"/accounts/"+rID, op, map[string]any{"prices": map[string]any{"home": map[string]any{"smsSegment": 2}}}); r.status != 200 {
			t.Fatalf("the operator pricing the reseller: %d %s", r.status, r.body)
		}
		cheap := map[string]any{"home": map[string]any{"smsSegment": 1.5}}
		r := e.mg("POST", base+"/accounts", rOwner, map[string]any{"name": "Cheap", "country": "55", "prices": cheap})
		if f := fieldsOf(t, r); r.status != 400 || len(f) != 1 || f[0] != "prices" || !strings.Contains(string(r.body), "allowLoss") {
			t.Fatalf("a child priced below its parent: %d %s", r.status, r.body)
		}
		created("a child priced below its parent, on purpose", e.mg("POST", base+"/accounts", rOwner,
			map[string]any{"name": "Cheap", "country": "55", "prices": cheap, "allowLoss": true}))
		if r := e.mg("PUT", base+"/accounts/"+c2ID, rOwner, map[string]any{"prices": cheap}); r.status != 400 {
			t.Fatalf("repricing a child below its parent: %d %s", r.status, r.body)
		}
		r = e.mg("PUT", base+"/accounts/"+c2ID, rOwner, map[string]any{"prices": map[string]any{"home": map[string]any{"smsSegment": 3},
			"abroad": map[string]any{"smsSegment": 4}}})
		if r.status != 200 || !strings.Contains(string(r.body), `"smsSegment":3`) {
			t.Fatalf("repricing a child: %d %s", r.status, r.body)
		}
	})
}
