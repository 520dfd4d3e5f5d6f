package app

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// Twilio credentials through the management API: the token once, kept
// for signing, roles, API keys under an account SID, and another
// account's SIDs out of reach.
func TestManageTwilioCredentials(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		dev, viewer := e.member("developer"), e.member("viewer")
		const path = "/api/v1/manage/twilio-credentials"
		hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)

		r := e.mg("POST", path, dev, map[string]any{"environment": "live"})
		ac := r.json(t)
		sid, _ := ac["accountSid"].(string)
		token, _ := ac["authToken"].(string)
		if r.status != 201 || !strings.HasPrefix(sid, "AC") || !hex32.MatchString(sid[2:]) || !hex32.MatchString(token) ||
			ac["environment"] != "live" || ac["createdAt"] == nil {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		stored, acct, err := e.st.TwilioCredentialBySid(ctx, sid)
		if err != nil || stored.Secret != token || acct.ID != e.account.ID {
			t.Fatalf("stored: %+v %s %v", stored, acct.ID, err)
		}

		r = e.mg("POST", path, dev, map[string]any{"kind": "apiKey", "accountSid": sid, "name": "worker"})
		key := r.json(t)
		skSid, _ := key["sid"].(string)
		secret, _ := key["secret"].(string)
		if r.status != 201 || !strings.HasPrefix(skSid, "SK") || !hex32.MatchString(skSid[2:]) || !hex32.MatchString(secret) ||
			key["accountSid"] != sid || key["environment"] != "live" {
			t.Fatalf("create an API key: %d %s", r.status, r.body)
		}

		for _, bad := range []map[string]any{{}, {"environment": "prod"}, {"environment": "live", "kind": "subaccount"},
			{"kind": "apiKey"}, {"kind": "apiKey", "accountSid": skSid}, {"kind": "apiKey", "accountSid": sid, "environment": "test"},
			{"environment": "live", "name": strings.Repeat("n", 65)}, {"environment": "live", "unknown": 1}} {
			wantProblem(t, fmt.Sprintf("create %v", bad), e.mg("POST", path, dev, bad), 400, "VALIDATION_ERROR")
		}
		wantProblem(t, "a viewer creating", e.mg("POST", path, viewer, map[string]any{"environment": "test"}), 403, "FORBIDDEN")
		wantProblem(t, "a viewer listing", e.mg("GET", path, viewer, nil), 403, "FORBIDDEN")
		wantProblem(t, "a viewer reading", e.mg("GET", path+"/"+sid, viewer, nil), 403, "FORBIDDEN")
		wantProblem(t, "a viewer removing", e.mg("DELETE", path+"/"+sid, viewer, nil), 403, "FORBIDDEN")

		// The token and the secret were shown once: no later answer has them.
		list := e.mg("GET", path, dev, nil)
		creds, _ := list.json(t)["twilioCredentials"].([]any)
		if list.status != 200 || len(creds) != 2 || strings.Contains(string(list.body), token) || strings.Contains(string(list.body), secret) {
			t.Fatalf("list: %d %s", list.status, list.body)
		}
		first, second := creds[0].(map[string]any), creds[1].(map[string]any)
		if first["sid"] != sid || first["kind"] != "accountSid" || first["accountSid"] != sid ||
			second["sid"] != skSid || second["kind"] != "apiKey" || second["accountSid"] != sid || second["name"] != "worker" {
			t.Fatalf("list: %s", list.body)
		}
		one := e.mg("GET", path+"/"+sid, dev, nil)
		if one.status != 200 || one.json(t)["sid"] != sid || strings.Contains(string(one.body), token) {
			t.Fatalf("get: %d %s", one.status, one.body)
		}

		// Another account's developer sees none of them and reaches none.
		other, _ := otherAccount(t, e)
		email := "dev@other.example"
		if _, _, err := createTestUser(ctx, e.st, other.ID, email, "developer", testPassword, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		theirs := e.login(email, testPassword)
		if l := e.mg("GET", path, theirs, nil); l.status != 200 || strings.Contains(string(l.body), sid) {
			t.Fatalf("the other account's list: %d %s", l.status, l.body)
		}
		for _, s := range []string{sid, skSid} {
			wantProblem(t, "another account reading "+s, e.mg("GET", path+"/"+s, theirs, nil), 404, "NOT_FOUND")
			wantProblem(t, "another account removing "+s, e.mg("DELETE", path+"/"+s, theirs, nil), 404, "NOT_FOUND")
		}
		wantProblem(t, "another account's key on our AC", e.mg("POST", path, theirs, map[string]any{"kind": "apiKey", "accountSid": sid}),
			400, "VALIDATION_ERROR")
		wantProblem(t, "another account naming ours", e.mg("GET", path+"?account="+e.account.ID, theirs, nil), 403, "FORBIDDEN")
		if _, _, err := e.st.TwilioCredentialBySid(ctx, sid); err != nil {
			t.Fatalf("our AC after the other account's attempts: %v", err)
		}

		// Removing the AC takes its key with it.
		if r := e.mg("DELETE", path+"/"+sid, dev, nil); r.status != 204 {
			t.Fatalf("remove: %d %s", r.status, r.body)
		}
		wantProblem(t, "removing twice", e.mg("DELETE", path+"/"+sid, dev, nil), 404, "NOT_FOUND")
		wantProblem(t, "the key of a removed AC", e.mg("GET", path+"/"+skSid, dev, nil), 404, "NOT_FOUND")
		if l, err := e.st.TwilioCredentials(ctx, e.account.ID); err != nil || len(l) != 0 {
			t.Fatalf("after remove: %+v %v", l, err)
		}
	})
}
