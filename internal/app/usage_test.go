package app

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/polltest"
)

type usageRow struct {
	Period   string  `json:"period"`
	Channel  string  `json:"channel"`
	Country  string  `json:"country"`
	Messages int64   `json:"messages"`
	Segments int64   `json:"segments"`
	Credits  float64 `json:"credits"`
}

func (e *env) usage(t *testing.T, key, query string) []usageRow {
	t.Helper()
	r := e.do("GET", "/api/v1/integration/usage"+query, key, nil)
	if r.status != 200 {
		t.Fatalf("usage%s: %d %s", query, r.status, r.body)
	}
	var out struct {
		Usage    []usageRow `json:"usage"`
		Currency string     `json:"currency"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatal(err)
	}
	if out.Currency != "USD" {
		t.Errorf("currency %q", out.Currency)
	}
	return out.Usage
}

// Usage is what each key's environment was charged, refunds deducted, per
// day, channel and calling code; another account and the other
// environment see none of it.
func TestUsageReport(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		today := e.clock.Now().UTC().Format(time.DateOnly)
		month := today[:7]
		// Live: two home SMS (1 credit each, one of two segments), one
		// abroad (2 credits), one failed at once and refunded.
		for _, m := range []map[string]any{
			{"to": "5511999990010", "message": "hello"},
			{"to": "5511999990011", "message": strings.Repeat("a", 170)},
			{"to": "447911123456", "message": "hello"},
			{"to": "5511999990001", "message": "refunded"},
		} {
			m["type"] = "SMS"
			if r := send(t, e, e.liveKey, m); r.status != 202 {
				t.Fatalf("send: %d %s", r.status, r.body)
			}
		}
		// Test: one SMS, charged nothing.
		if r := send(t, e, e.testKey, map[string]any{"to": "5511999990012", "message": "hi", "type": "SMS"}); r.status != 202 {
			t.Fatalf("send: %d %s", r.status, r.body)
		}
		want := []usageRow{{today, "SMS", "44", 1, 1, 2}, {today, "SMS", "55", 3, 4, 4}}
		polltest.For(t, "the refund", 10*time.Second, func() bool {
			return reflect.DeepEqual(e.usage(t, e.liveKey, ""), []usageRow{want[0], {today, "SMS", "55", 3, 4, 3}})
		})
		want[1].Credits = 3
		if got := e.usage(t, e.liveKey, "?from="+today+"&to="+today+"&groupBy=month&channel=sms"); !reflect.DeepEqual(got,
			[]usageRow{{month, "SMS", "44", 1, 1, 2}, {month, "SMS", "55", 3, 4, 3}}) {
			t.Errorf("by month: %+v", got)
		}
		if got := e.usage(t, e.liveKey, "?channel=RCS"); len(got) != 0 {
			t.Errorf("RCS: %+v", got)
		}
		if got := e.usage(t, e.testKey, ""); !reflect.DeepEqual(got, []usageRow{{today, "SMS", "55", 1, 1, 0}}) {
			t.Errorf("test key: %+v", got)
		}
		// The kept counts follow the messages (read apart, so they agree
		// once the simulator's reports stop moving them).
		polltest.For(t, "the kept usage to match the messages", 10*time.Second, func() bool {
			kept, err1 := e.st.KeptUsage(ctx, e.account.ID)
			counted, err2 := e.st.UsageFromMessages(ctx, e.account.ID)
			return err1 == nil && err2 == nil && reflect.DeepEqual(kept, counted)
		})

		// The overview's latest failures: the live one, not the test
		// environment's, not another account's.
		fails, err := e.st.RecentFailures(ctx, e.account.ID, "live", e.clock.Now().Add(-time.Hour), 5)
		if err != nil || len(fails) != 1 || fails[0].To != "5511999990001" || fails[0].ErrorCode != "INVALID_NUMBER" {
			t.Errorf("recent failures: %+v %v", fails, err)
		}
		if fails, err := e.st.RecentFailures(ctx, e.account.ID, "test", e.clock.Now().Add(-time.Hour), 5); err != nil || len(fails) != 0 {
			t.Errorf("recent test failures: %+v %v", fails, err)
		}

		// msgsvc usage prints the same, as a table or as the API's JSON.
		api := []string{"--url", e.base, "--key", e.liveKey}
		out, err := runCmd(t, runUsage, api...)
		if err != nil || !regexp.MustCompile(`(?m)^\s*`+today+`\s+SMS\s+\+55\s+3\s+4\s+3\s*$`).MatchString(out) ||
			!regexp.MustCompile(`(?m)^\s*total\s+4\s+5\s+5\s*$`).MatchString(out) {
			t.Errorf("msgsvc usage: %v\n%s", err, out)
		}
		out, err = runCmd(t, runUsage, append(api, "--json", "--group-by", "month")...)
		if err != nil || !strings.Contains(out, `"period": "`+month+`"`) {
			t.Errorf("msgsvc usage --json: %v\n%s", err, out)
		}
		if _, err := runCmd(t, runUsage, append(api, "--group-by", "week")...); err == nil ||
			!strings.Contains(err.Error(), "--group-by: must be day or month") {
			t.Errorf("msgsvc usage --group-by week: %v", err)
		}

		// Another account's keys see their own (empty) usage.
		other, err := CreateAccount(ctx, e.st, NewAccount{Name: "Other", Tier: "enterprise", Credits: 50, Currency: "USD",
			Country: "44"}, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, env := range []string{"test", "live"} {
			k, _ := e.addKey(other.ID, env)
			if got := e.usage(t, k.Secret, "?groupBy=month"); len(got) != 0 {
				t.Errorf("other account's %s key sees %+v", env, got)
			}
		}

	})
}
