package app

import (
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// readFeed reads the events feed from a cursor to its end, limit events
// per request, and returns the events and the last cursor.
func readFeed(t *testing.T, e *env, key, after string, limit int) ([]map[string]any, string) {
	t.Helper()
	var out []map[string]any
	for range 1000 {
		q := url.Values{"limit": {fmt.Sprint(limit)}}
		if after != "" {
			q.Set("after", after)
		}
		r := e.do("GET", "/api/v1/integration/events?"+q.Encode(), key, nil)
		if r.status != 200 {
			t.Fatalf("events feed: %d %s", r.status, r.body)
		}
		body := r.json(t)
		next, _ := body["nextCursor"].(string)
		if next == "" {
			t.Fatalf("events feed without a nextCursor: %s", r.body)
		}
		page := body["events"].([]any)
		for _, ev := range page {
			out = append(out, ev.(map[string]any))
		}
		if len(page) == 0 {
			if next != after && after != "" {
				t.Fatalf("an empty page moved the cursor from %s to %s", after, next)
			}
			return out, next
		}
		after = next
	}
	t.Fatal("the events feed never ended")
	return nil, ""
}

// eventsOf keeps the feed's events about one message or, for replies,
// from one phone.
func eventsOf(evs []map[string]any, messageID, phone string) []map[string]any {
	var out []map[string]any
	for _, ev := range evs {
		d := ev["data"].(map[string]any)
		if (messageID != "" && d["messageId"] == messageID) || (phone != "" && d["event"] == "message_received" && d["phone"] == phone) {
			out = append(out, ev)
		}
	}
	return out
}

// The feed holds every event in order, with and without callbacks,
// unmatched replies too; its ids are the webhooks' ids, and its cursor
// returns only what is newer.
func TestEventsFeed(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		// Without a callback: 0004 is delivered, then replies "OK".
		quiet, _ := sent(t, send(t, e, e.testKey, map[string]any{"to": "5511999990004", "message": "no hooks", "type": "SMS"}))
		// With a callback: 0002 is SENT, then FAILED.
		loud, _ := sent(t, send(t, e, e.testKey, map[string]any{"to": "5511999990002", "message": "hooks", "type": "SMS",
			"callbackUrl": e.hooks.url()}))
		if r := e.do("POST", "/api/v1/integration/test/replies", e.testKey, map[string]any{"from": "5511988887777", "message": "who?"}); r.status != 202 {
			t.Fatalf("unmatched reply: %d %s", r.status, r.body)
		}
		var all []map[string]any
		var cursor string
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			all, cursor = readFeed(t, e, e.testKey, "", 100)
			if len(eventsOf(all, quiet, "")) == 2 && len(eventsOf(all, "", "5511999990004")) == 1 &&
				len(eventsOf(all, loud, "")) == 2 && len(eventsOf(all, "", "5511988887777")) == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for every event in the feed; it has %v", all)
			}
		}
		statuses := func(evs []map[string]any) string {
			var s []string
			for _, ev := range evs {
				s = append(s, ev["data"].(map[string]any)["status"].(string))
			}
			return strings.Join(s, ",")
		}
		if got := statuses(eventsOf(all, quiet, "")); got != "SENT,DELIVERED" {
			t.Errorf("events of the send without callback: %s, want SENT,DELIVERED", got)
		}
		if got := statuses(eventsOf(all, loud, "")); got != "SENT,FAILED" {
			t.Errorf("events of the send with callback: %s, want SENT,FAILED", got)
		}
		reply := eventsOf(all, "", "5511999990004")[0]
		if reply["type"] != "message_received" || reply["data"].(map[string]any)["campaignId"] == nil {
			t.Errorf("reply to a campaign: %v", reply)
		}
		if lone := eventsOf(all, "", "5511988887777")[0]; lone["data"].(map[string]any)["campaignId"] != nil {
			t.Errorf("unmatched reply: %v, want campaignId null", lone)
		}
		// The reply comes after the delivery it answers.
		at := func(ev map[string]any) int {
			return slices.IndexFunc(all, func(x map[string]any) bool { return x["id"] == ev["id"] })
		}
		if at(reply) < at(eventsOf(all, quiet, "")[1]) {
			t.Error("the reply is listed before the delivery it answers")
		}
		for _, ev := range all {
			if !tsRe.MatchString(ev["createdAt"].(string)) || !strings.HasPrefix(ev["id"].(string), "evt_") || len(ev) != 4 {
				t.Errorf("event shape %v", ev)
			}
		}
		// The webhooks of the send with a callback carry the same ids (they
		// may arrive in either order; the feed's is the order of events).
		polltest.For(t, "the webhooks", 10*time.Second, func() bool { return len(e.hooks.forMessage(loud)) == 2 })
		var hookIDs, feedIDs []string
		for _, h := range e.hooks.all() {
			hookIDs = append(hookIDs, h.id)
		}
		for _, ev := range eventsOf(all, loud, "") {
			feedIDs = append(feedIDs, ev["id"].(string))
		}
		slices.Sort(hookIDs)
		slices.Sort(feedIDs)
		if fmt.Sprint(hookIDs) != fmt.Sprint(feedIDs) {
			t.Errorf("webhook ids %v, feed ids %v", hookIDs, feedIDs)
		}
		if ua := e.hooks.all()[0].header.Get("User-Agent"); ua != "msgsvc/"+Version {
			t.Errorf("webhook User-Agent %q, want msgsvc/%s", ua, Version)
		}
		if h := e.do("GET", "/healthz", "", nil).json(t); h["version"] != Version {
			t.Errorf("/healthz %v, want the version %s", h, Version)
		}
		// Page by page, the feed is the same.
		if paged, _ := readFeed(t, e, e.testKey, "", 1); fmt.Sprint(paged) != fmt.Sprint(all) {
			t.Errorf("one event per page gives\n%v\nwant\n%v", paged, all)
		}
		// Nothing newer: an empty page and the same cursor; then only the new.
		if none, again := readFeed(t, e, e.testKey, cursor, 100); len(none) != 0 || again != cursor {
			t.Errorf("after the end: %v, cursor %s (was %s)", none, again, cursor)
		}
		e.do("POST", "/api/v1/integration/test/replies", e.testKey, map[string]any{"from": "5511988887777", "message": "again"})
		if newer, _ := readFeed(t, e, e.testKey, cursor, 100); len(newer) != 1 || newer[0]["data"].(map[string]any)["message"] != "again" {
			t.Errorf("after the cursor: %v, want the one new reply", newer)
		}
	})
}

// The message list: newest first, every filter, pages that add up to the
// whole list (the refusals of bad parameters are internal/api's TestListParameters).
func TestMessageList(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		start := e.clock.Now().Add(-time.Second)
		var mids []string // in send order
		for i, to := range []string{"5511999990010", "5511999990001", "5511999990011", "5511999990010"} {
			mid, _ := sent(t, send(t, e, e.testKey, map[string]any{"to": to, "message": "hi", "type": "SMS",
				"reference": fmt.Sprintf("order-%d", i%2)}))
			mids = append(mids, mid)
		}
		batch := send(t, e, e.testKey, map[string]any{"recipients": []string{"5511999990012", "5511999990013"}, "message": "hi", "type": "SMS"})
		cid := batch.json(t)["campaignId"].(string)
		for _, m := range batch.json(t)["messages"].([]any) {
			mids = append(mids, m.(map[string]any)["messageId"].(string))
		}
		finalStatus(t, e, e.testKey, mids[1], "FAILED")
		newest := slices.Clone(mids)
		slices.Reverse(newest)

		list := func(query string) ([]string, response) {
			t.Helper()
			r := e.do("GET", "/api/v1/integration/messages?"+query, e.testKey, nil)
			if r.status != 200 {
				t.Fatalf("?%s: %d %s", query, r.status, r.body)
			}
			var ids []string
			for _, m := range r.json(t)["messages"].([]any) {
				item := m.(map[string]any)
				if _, ok := item["history"]; ok || item["createdAt"] == nil || item["status"] == nil {
					t.Errorf("?%s: item %v, want the message without history", query, item)
				}
				ids = append(ids, item["messageId"].(string))
			}
			return ids, r
		}
		cases := []struct {
			query string
			want  []string
		}{
			{"", newest},
			{"status=FAILED", []string{mids[1]}},
			{"status=failed", []string{mids[1]}},
			{"to=5511999990010", []string{mids[3], mids[0]}},
			{"reference=order-1", []string{mids[3], mids[1]}},
			{"campaignId=" + cid, []string{mids[5], mids[4]}},
			{"to=5511999990010&reference=order-0", []string{mids[0]}},
			{"createdFrom=" + url.QueryEscape(start.Format(time.RFC3339Nano)), newest},
			{"createdTo=" + url.QueryEscape(start.Format(time.RFC3339Nano)), nil},
			{"campaignId=cmp_nothing", nil},
		}
		for _, c := range cases {
			if got, _ := list(c.query); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("?%s: %v, want %v", c.query, got, c.want)
			}
		}
		// Two at a time, the pages add up to the list; the last says so.
		var paged []string
		cursor := ""
		for page := 0; ; page++ {
			ids, r := list("limit=2&cursor=" + cursor)
			paged = append(paged, ids...)
			next, _ := r.json(t)["nextCursor"].(string)
			if next == "" {
				if page != 2 {
					t.Errorf("%d pages of 2 for 6 messages, want 3", page+1)
				}
				break
			}
			cursor = next
		}
		if fmt.Sprint(paged) != fmt.Sprint(newest) {
			t.Errorf("paged %v, want %v", paged, newest)
		}
		if _, r := list("limit=6"); r.json(t)["nextCursor"] != nil {
			t.Errorf("a page holding the rest has a nextCursor: %s", r.body)
		}
	})
}

// Both reads count as status queries: their RateLimit-* headers describe
// the status window.
func TestListsAreStatusQueries(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	_, key := e.newAccount("enterprise", &domain.Limits{TierRPM: 500, SendRPM: 60, StatusRPM: 7, MediaRPM: 60})
	for _, path := range []string{"/api/v1/integration/messages", "/api/v1/integration/events"} {
		r := e.do("GET", path, key, nil)
		if r.status != 200 || r.header.Get("RateLimit-Limit") != "7" || r.header.Get("X-RateLimit-Limit") != "500" {
			t.Errorf("%s: %d, RateLimit-Limit %q X-RateLimit-Limit %q, want the status window (7) and the tier (500)",
				path, r.status, r.header.Get("RateLimit-Limit"), r.header.Get("X-RateLimit-Limit"))
		}
	}
}
