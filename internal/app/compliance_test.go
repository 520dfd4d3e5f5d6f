package app

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/nodetest"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// reply records a recipient's message to the account as a provider reports
// it (through the tracker, the path of every provider's inbound).
func reply(t *testing.T, e *env, env domain.Environment, from, text string, ch domain.Channel) {
	t.Helper()
	if _, err := e.srv.tracker.Receive(context.Background(), "simulator", provider.Inbound{AccountID: e.account.ID,
		Env: env, From: from, Channel: ch, Body: text}); err != nil {
		t.Fatal(err)
	}
}

// setCompliance changes the demo account's compliance settings as the
// command line and the panel do.
func setCompliance(t *testing.T, e *env, c domain.Compliance) {
	t.Helper()
	if _, err := compliance.SetSettings(context.Background(), e.st, e.account.ID, c); err != nil {
		t.Fatal(err)
	}
}

// A stop word on any channel opts the number out of the account's messages
// in that environment; sends to it are refused whole and never charged;
// the reply still reaches the integrator; a start word opts it in again.
func TestOptOutByReply(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		const stopper, other = "5511999990031", "5511999990032"
		cb := e.hooks.url()
		if r := send(t, e, e.testKey, map[string]any{"to": stopper, "message": "Sale today", "type": "SMS", "callbackUrl": cb}); r.status != 202 {
			t.Fatalf("first send: %d %s", r.status, r.body)
		}
		r := e.do("POST", "/api/v1/integration/test/replies", e.testKey, map[string]any{"from": stopper, "message": " Stop ", "channel": "SMS"})
		if r.status != 202 {
			t.Fatalf("reply: %d %s", r.status, r.body)
		}
		// The integrator still gets the reply.
		e.hooks.first("the STOP reply's webhook", func(p map[string]any) bool {
			return isReply(p) && p["message"] == " Stop " && p["phone"] == stopper
		})
		one := send(t, e, e.testKey, map[string]any{"to": stopper, "message": "Another sale", "type": "SMS"})
		if one.status != 422 || problemCode(t, one) != "RECIPIENT_OPTED_OUT" || strings.Join(fieldsOf(t, one), ",") != "to" {
			t.Errorf("send to the opted-out number: %d %s", one.status, one.body)
		}
		batch := send(t, e, e.testKey, map[string]any{"recipients": []string{other, stopper}, "type": "WHATSAPP",
			"template": map[string]any{"name": "promo", "language": "en", "parameters": []string{}}})
		if batch.status != 422 || strings.Join(fieldsOf(t, batch), ",") != "recipients[1]" || !strings.Contains(string(batch.body), stopper) {
			t.Errorf("batch with one opted-out number: %d %s", batch.status, batch.body)
		}
		dry := e.do("POST", "/api/v1/integration/messages?dryRun=true", e.testKey, map[string]any{"to": stopper, "message": "x", "type": "RCS"})
		if dry.status != 422 || problemCode(t, dry) != "RECIPIENT_OPTED_OUT" {
			t.Errorf("dry run: %d %s", dry.status, dry.body)
		}
		// Opt-outs are per environment: the live key may still send.
		if r := send(t, e, e.liveKey, map[string]any{"to": stopper, "message": "Live", "type": "SMS"}); r.status != 202 {
			t.Errorf("live send to a number opted out of test traffic: %d %s", r.status, r.body)
		}
		list := e.do("GET", "/api/v1/integration/opt-outs", e.testKey, nil)
		items, _ := list.json(t)["optOuts"].([]any)
		if list.status != 200 || len(items) != 1 || items[0].(map[string]any)["phone"] != stopper ||
			items[0].(map[string]any)["channel"] != "SMS" || list.json(t)["nextCursor"] != nil {
			t.Errorf("opt-out list: %d %s", list.status, list.body)
		}
		if live := e.do("GET", "/api/v1/integration/opt-outs", e.liveKey, nil).json(t); len(live["optOuts"].([]any)) != 0 {
			t.Errorf("live list: %v", live)
		}
		// A refused send forgets its Idempotency-Key: the same request is
		// accepted once the number opts in again.
		body := map[string]any{"to": stopper, "message": "Welcome back", "type": "SMS"}
		if r := send(t, e, e.testKey, body, "Idempotency-Key", "k-1"); r.status != 422 {
			t.Fatalf("keyed send while opted out: %d", r.status)
		}
		reply(t, e, domain.Test, stopper, "START", domain.WhatsApp) // any channel
		if r := send(t, e, e.testKey, body, "Idempotency-Key", "k-1"); r.status != 202 {
			t.Errorf("send after START: %d %s", r.status, r.body)
		}
		if items := e.do("GET", "/api/v1/integration/opt-outs", e.testKey, nil).json(t)["optOuts"].([]any); len(items) != 0 {
			t.Errorf("still listed after START: %v", items)
		}
		// Ordinary replies that merely contain a stop word change nothing.
		reply(t, e, domain.Test, stopper, "please stop calling me at work", domain.SMS)
		if r := send(t, e, e.testKey, map[string]any{"to": stopper, "message": "x", "type": "SMS"}); r.status != 202 {
			t.Errorf("a sentence opted the number out: %d", r.status)
		}
	})
}

// Sends to opted-out numbers are never charged; the live list is kept
// apart; the account's confirmation goes back as a real, uncharged message
// on the channel of the stop word.
func TestOptOutLiveAndConfirmation(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		const stopper = "5511999990041"
		setCompliance(t, e, domain.Compliance{OptOutReply: "You will receive no more messages. Reply START to opt in."})
		before := balance(t, e)
		reply(t, e, domain.Live, stopper, "BAJA", domain.SMS)
		var conf map[string]any
		polltest.For(t, "the confirmation to be delivered", 10*time.Second, func() bool {
			ms, err := e.st.SearchMessages(context.Background(), domain.MessageFilter{AccountID: e.account.ID, Phone: stopper, Env: domain.Live})
			if err != nil || len(ms) != 1 {
				return false
			}
			conf = e.do("GET", "/api/v1/integration/messages/"+ms[0].ID, e.liveKey, nil).json(t)
			return conf["status"] == "DELIVERED"
		})
		if conf["reference"] != "opt-out confirmation" || conf["credits"] != 0.0 || conf["channel"] != "SMS" {
			t.Errorf("confirmation: %v", conf)
		}
		for _, r := range []response{
			send(t, e, e.liveKey, map[string]any{"to": stopper, "message": "x", "type": "SMS"}),
			send(t, e, e.liveKey, map[string]any{"recipients": []string{"5511999990042", stopper}, "message": "x", "type": "SMS"}),
		} {
			if r.status != 422 {
				t.Errorf("live send to the opted-out number: %d %s", r.status, r.body)
			}
		}
		if after := balance(t, e); after != before {
			t.Errorf("balance %d before, %d after: refused sends or the confirmation were charged", before, after)
		}
		if ms, _ := e.st.SearchMessages(context.Background(), domain.MessageFilter{AccountID: e.account.ID, Env: domain.Live}); len(ms) != 1 {
			t.Errorf("%d live messages, want only the confirmation", len(ms))
		}
		// The test environment is not affected.
		if r := send(t, e, e.testKey, map[string]any{"to": stopper, "message": "x", "type": "SMS"}); r.status != 202 {
			t.Errorf("test send: %d", r.status)
		}
	})
}

// A STOP racing sends to the same number: every send that begins after the
// STOP was recorded is refused, every send accepted is a message, and
// nothing refused is charged. (store.TestOptOutAndSendAreOrdered shows the
// two transactions are ordered on PostgreSQL; SQLite has one writer.)
func TestStopRacingSend(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{credits: 10000})
		const stopper = "5511999990051"
		before := balance(t, e)
		results, stoppedAt := raceStop(t, e, stopper)
		accepted, refused := 0, 0
		for _, r := range results {
			switch {
			case r.status == 202:
				accepted++
				if r.began.After(stoppedAt) {
					t.Errorf("a send that began %v after the STOP was recorded was accepted", r.began.Sub(stoppedAt))
				}
			case r.status == 422:
				refused++
			}
		}
		t.Logf("%d sends accepted before the STOP, %d refused", accepted, refused)
		if accepted < 20 || refused < 18 {
			t.Errorf("accepted %d, refused %d: the STOP did not fall among the sends", accepted, refused)
		}
		ms, err := e.st.SearchMessages(context.Background(), domain.MessageFilter{AccountID: e.account.ID, Phone: stopper, Env: domain.Live, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != accepted {
			t.Errorf("%d messages for %d accepted sends", len(ms), accepted)
		}
		// Each accepted SMS at home costs 1 credit; refused ones nothing.
		if spent := before - balance(t, e); spent != int64(accepted)*1_000_000 {
			t.Errorf("spent %d micro-credits for %d accepted sends", spent, accepted)
		}
	})
}

type raceResult struct {
	began  time.Time
	status int
}

// raceStop sends to phone from six goroutines while a STOP from it arrives
// once 20 sends were answered. Each goroutine goes on until three of its
// sends began after the STOP was recorded (at most 300 sends each), so the
// STOP always falls among the sends, however fast or slow they are. A STOP
// starved by the stream (recorded only once the sends stop) shows as fewer
// than 18 refusals.
func raceStop(t *testing.T, e *env, phone string) ([]raceResult, time.Time) {
	var mu sync.Mutex
	var results []raceResult
	var stoppedAt time.Time
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			after := 0
			for i := 0; i < 300 && after < 3; i++ {
				began := time.Now()
				r := send(t, e, e.liveKey, map[string]any{"to": phone, "message": fmt.Sprintf("w%d #%d", w, i), "type": "SMS"})
				mu.Lock()
				results = append(results, raceResult{began, r.status})
				if !stoppedAt.IsZero() && began.After(stoppedAt) {
					after++
				}
				mu.Unlock()
				if r.status != 202 && r.status != 422 {
					t.Errorf("send: %d %s", r.status, r.body)
					return
				}
			}
		}(w)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(results)
		mu.Unlock()
		if n >= 20 {
			break
		}
	}
	reply(t, e, domain.Live, phone, "STOP", domain.SMS)
	mu.Lock()
	stoppedAt = time.Now()
	mu.Unlock()
	wg.Wait()
	return results, stoppedAt
}

// The operators' commands.
func TestOptOutCommands(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	e.stop() // the commands open the database themselves
	db := e.srv.cfg.DB
	run := func(args ...string) string {
		t.Helper()
		out, errs, code := runMain(t, append(args, "--db", db, "--account", e.account.ID)...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, errs)
		}
		return out
	}
	run("optout", "add", "--env", "test", "--phone", "5511999990061")
	run("optout", "add", "--phone", "5511999990062")
	if out := run("optout", "list", "--env", "test", "--json"); !strings.Contains(out, "5511999990061") || strings.Contains(out, "5511999990062") {
		t.Errorf("test list: %s", out)
	}
	if out := run("optout", "remove", "--env", "test", "--phone", "5511999990061"); !strings.Contains(out, "may receive") {
		t.Errorf("remove: %s", out)
	}
	if out := run("optout", "list", "--env", "test"); !strings.Contains(out, "nobody opted out") {
		t.Errorf("list after remove: %s", out)
	}
	out := run("account", "settings", "--quiet-hours", "21:30-07:00", "--retention-days", "30", "--opt-out-reply", "Bye", "--json")
	if !strings.Contains(out, `"quietHours": "21:30-07:00"`) || !strings.Contains(out, `"retentionDays": 30`) {
		t.Errorf("settings: %s", out)
	}
	if _, errs, code := runMain(t, "account", "settings", "--db", db, "--account", e.account.ID, "--quiet-hours", "late", "--wa-tier", "2"); code == 0 || !strings.Contains(errs, "quiet hours") {
		t.Errorf("bad quiet hours: %d %s", code, errs)
	}
	if _, errs, code := runMain(t, "optout", "add", "--db", db, "--account", e.account.ID, "--phone", "123"); code == 0 || errs == "" {
		t.Errorf("bad number: %d %s", code, errs)
	}
	st := nodetest.OpenStore(t, db)
	a, err := st.Account(context.Background(), e.account.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Compliance.QuietHours != "21:30-07:00" || a.Compliance.RetentionDays != 30 || a.Compliance.OptOutReply != "Bye" || a.WAQualityTier == 2 {
		t.Errorf("account after the commands: %+v (a refused command must change nothing)", a)
	}
}

// A message due inside the account's quiet hours in the recipient's local
// time waits, SENDING, until they end; dry runs and the status query say
// when it goes; its validity still bounds it; it can be canceled.
func TestQuietHours(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		sp, err := time.LoadLocation("America/Sao_Paulo")
		if err != nil {
			t.Fatal(err)
		}
		// A window around the current time in São Paulo (the zone of the
		// 5511 numbers), ending two hours from now.
		now := e.clock.Now().In(sp)
		end := now.Add(2 * time.Hour)
		setCompliance(t, e, domain.Compliance{QuietHours: now.Add(-time.Hour).Format("15:04") + "-" + end.Format("15:04")})
		wantDue := domain.FormatTime(end.Truncate(time.Minute))
		const held, expiring, canceled, losAngeles = "5511999990071", "5511999990072", "5511999990073", "14155550123"
		dueOf := func(r response, i int) any {
			t.Helper()
			return r.json(t)["messages"].([]any)[i].(map[string]any)["dueAt"]
		}

		dry := e.do("POST", "/api/v1/integration/messages?dryRun=true", e.testKey, map[string]any{"to": held, "message": "x", "type": "SMS"})
		if dry.status != 200 || dueOf(dry, 0) != wantDue {
			t.Errorf("dry run: %d %s, want dueAt %s", dry.status, dry.body, wantDue)
		}
		r := send(t, e, e.testKey, map[string]any{"recipients": []string{held, losAngeles}, "message": "Hello", "type": "SMS"})
		if r.status != 202 || dueOf(r, 0) != wantDue || dueOf(r, 1) != nil {
			t.Fatalf("send: %d %s, want the first held until %s and the second at once", r.status, r.body, wantDue)
		}
		msgs := r.json(t)["messages"].([]any)
		heldID, laID := msgs[0].(map[string]any)["messageId"].(string), msgs[1].(map[string]any)["messageId"].(string)
		before := balance(t, e)
		exp := send(t, e, e.liveKey, map[string]any{"to": expiring, "message": "Soon gone", "type": "SMS", "validity": 3600})
		expID, _ := sent(t, exp)
		cn := send(t, e, e.testKey, map[string]any{"to": canceled, "message": "Never mind", "type": "SMS"})
		cnID, _ := sent(t, cn)

		// Los Angeles is outside the window: delivered at once, by a
		// dispatcher that left the held message alone.
		finalStatus(t, e, e.testKey, laID, "DELIVERED")
		m := e.do("GET", "/api/v1/integration/messages/"+heldID, e.testKey, nil).json(t)
		if m["status"] != "SENDING" || m["dueAt"] != wantDue {
			t.Errorf("held message: %v", m)
		}
		if row, _ := e.st.MessageByID(context.Background(), heldID); row.Attempts != 0 || row.LeaseOwner != "" {
			t.Errorf("the dispatcher took the held message: attempts %d, lease %q", row.Attempts, row.LeaseOwner)
		}
		if c := e.do("POST", "/api/v1/integration/messages/"+cnID+"/cancel", e.testKey, nil); c.status != 200 || c.json(t)["status"] != "CANCELED" {
			t.Errorf("cancel of a held message: %d %s", c.status, c.body)
		}

		// When the window ends the held message goes; the one whose
		// validity ended first fails EXPIRED and is refunded.
		e.clock.Advance(end.Sub(e.clock.Now()) + time.Second)
		finalStatus(t, e, e.testKey, heldID, "DELIVERED")
		if f := finalStatus(t, e, e.liveKey, expID, "FAILED"); f["errorCode"] != "EXPIRED" {
			t.Errorf("expired while held: %v", f)
		}
		polltest.For(t, "the refund of the expired message", 10*time.Second, func() bool { return balance(t, e) == before })
	})
}

// POST …/messages/{id}/redact erases a message's text and hashes its
// number at once, in its webhook events too; status, counts and ledger stay.
func TestRedactMessage(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		const to = "5511999990081"
		r := send(t, e, e.liveKey, map[string]any{"to": to, "message": "Your code is 4821", "type": "SMS", "callbackUrl": e.hooks.url()})
		mid, _ := sent(t, r)
		cid := r.json(t)["campaignId"].(string)
		finalStatus(t, e, e.liveKey, mid, "DELIVERED")
		polltest.For(t, "the message's webhooks", 10*time.Second, func() bool { return len(e.hooks.forMessage(mid)) >= 2 })
		before, lines := balance(t, e), len(ledgerOf(t, e, mid))

		for _, key := range []string{e.testKey} { // the other environment
			if got := e.do("POST", "/api/v1/integration/messages/"+mid+"/redact", key, nil); got.status != 404 {
				t.Errorf("redact from the other environment: %d", got.status)
			}
		}
		other := e.addAccount(NewAccount{Name: "Other", Tier: "enterprise", Currency: "USD", Country: "55"})
		ok, _ := e.addKey(other.ID, "live")
		if got := e.do("POST", "/api/v1/integration/messages/"+mid+"/redact", ok.Secret, nil); got.status != 404 {
			t.Errorf("redact from another account: %d", got.status)
		}
		if m, _ := e.st.MessageByID(ctx, mid); m.To != to {
			t.Fatal("a refused redact changed the message")
		}

		red := e.do("POST", "/api/v1/integration/messages/"+mid+"/redact", e.liveKey, nil)
		body := red.json(t)
		hashed, _ := body["to"].(string)
		if red.status != 200 || !compliance.Redacted(hashed) || body["redacted"] != true || body["status"] != "DELIVERED" || body["credits"] != 1.0 {
			t.Fatalf("redact: %d %s", red.status, red.body)
		}
		if got := e.do("GET", "/api/v1/integration/messages/"+mid, e.liveKey, nil).json(t); got["to"] != hashed || got["redacted"] != true {
			t.Errorf("read after redact: %v", got)
		}
		if again := e.do("POST", "/api/v1/integration/messages/"+mid+"/redact", e.liveKey, nil).json(t); again["to"] != hashed {
			t.Errorf("redacting twice changed the hash: %v", again["to"])
		}
		row, _ := e.st.MessageByID(ctx, mid)
		if row.Body != "" || row.To != hashed {
			t.Errorf("stored message: to %q body %q", row.To, row.Body)
		}
		evs, err := e.st.EventsForMessage(ctx, e.account.ID, mid)
		if err != nil || len(evs) < 2 {
			t.Fatalf("events: %d %v", len(evs), err)
		}
		for _, ev := range evs {
			if strings.Contains(ev.Body, to) || !strings.Contains(ev.Body, hashed) {
				t.Errorf("event %s not redacted: %s", ev.ID, ev.Body)
			}
		}
		if balance(t, e) != before || len(ledgerOf(t, e, mid)) != lines {
			t.Error("redaction changed the ledger")
		}
		if c := e.do("GET", "/api/v1/integration/campaigns/"+cid, e.liveKey, nil).json(t); c["counts"].(map[string]any)["DELIVERED"] != 1.0 {
			t.Errorf("campaign counts after redaction: %v", c["counts"])
		}

		// A message still waiting is canceled (and refunded) first.
		later := domain.FormatTime(e.clock.Now().Add(time.Hour))
		sr := send(t, e, e.liveKey, map[string]any{"to": to, "message": "Tomorrow", "type": "SMS", "scheduledAt": later})
		sid, _ := sent(t, sr)
		w := e.do("POST", "/api/v1/integration/messages/"+sid+"/redact", e.liveKey, nil).json(t)
		if w["status"] != "CANCELED" || w["redacted"] != true {
			t.Errorf("redact of a scheduled message: %v", w)
		}
		if balance(t, e) != before {
			t.Error("the canceled message was not refunded")
		}
	})
}

// Past an account's retention period the sweep erases message and reply
// texts and hashes numbers, in webhook events too; newer messages stay.
func TestRetentionPeriod(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{config: func(c *config.Config) { c.RetentionInterval = 20 * time.Millisecond }})
		ctx := context.Background()
		setCompliance(t, e, domain.Compliance{RetentionDays: 1})
		const to = "5511999990091"
		r := send(t, e, e.liveKey, map[string]any{"to": to, "message": "Old news", "type": "SMS", "callbackUrl": e.hooks.url()})
		mid, _ := sent(t, r)
		cid := r.json(t)["campaignId"].(string)
		finalStatus(t, e, e.liveKey, mid, "DELIVERED")
		reply(t, e, domain.Live, to, "my address is 1 Main St", domain.SMS)
		polltest.For(t, "the webhooks", 10*time.Second, func() bool { return len(e.hooks.all()) >= 3 })

		e.clock.Advance(25 * time.Hour)
		fresh := send(t, e, e.liveKey, map[string]any{"to": to, "message": "New news", "type": "SMS"})
		freshID, _ := sent(t, fresh)
		polltest.For(t, "the old message to be redacted", 10*time.Second, func() bool {
			return e.do("GET", "/api/v1/integration/messages/"+mid, e.liveKey, nil).json(t)["redacted"] == true
		})
		polltest.For(t, "the reply and the events to be redacted", 10*time.Second, func() bool {
			evs, err := e.st.EventsForCampaign(ctx, e.account.ID, cid, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if strings.Contains(ev.Body, to) || strings.Contains(ev.Body, "Main St") {
					return false
				}
			}
			rows, err := e.st.RetentionRows(ctx, domain.RetainInbound, e.account.ID, "", "inb_~", 10)
			return err == nil && len(rows) == 1 && compliance.Redacted(rows[0].Phone)
		})
		if m := e.do("GET", "/api/v1/integration/messages/"+freshID, e.liveKey, nil).json(t); m["to"] != to || m["redacted"] != nil {
			t.Errorf("a message within the retention period was redacted: %v", m)
		}
		if row, _ := e.st.MessageByID(ctx, mid); row.Body != "" || row.Status != domain.Delivered || row.Credits != 1_000_000 {
			t.Errorf("old message after the sweep: %+v", row)
		}
	})
}
