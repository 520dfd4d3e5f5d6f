package compliance_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// clock is a settable now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// history writes, for one account, a message of each kind at created: a
// delivered one with its webhook event, one still waiting (scheduled), and
// a reply with its event.
type history struct {
	campaignID         string
	delivered, waiting domain.Message
	replyID            string
	events             []string
}

func writeHistory(t *testing.T, st *store.Store, accountID string, created time.Time, phone string) history {
	t.Helper()
	ctx := context.Background()
	c := domain.Campaign{ID: id.New(id.Campaign, created), AccountID: accountID, KeyID: "key_x", Env: domain.Live, Type: domain.SMS,
		CallbackURL: "https://hooks.example.com/cb", Total: 2, CreatedAt: created}
	msg := func(status domain.Status) domain.Message {
		return domain.Message{ID: id.New(id.Message, created), CampaignID: c.ID, AccountID: accountID, Env: domain.Live, To: phone,
			CountryCode: "55", Type: domain.SMS, Channel: domain.SMS, Body: "your code is 1234", Status: status, Segments: 1,
			Encoding: "GSM-7", Credits: 1_000_000, Charged: 1_000_000, Provider: "simulator", CallbackURL: c.CallbackURL,
			CreatedAt: created, UpdatedAt: created, ExpiresAt: created.Add(72 * time.Hour), NextAttemptAt: created.Add(40 * 24 * time.Hour)}
	}
	h := history{campaignID: c.ID, delivered: msg(domain.Delivered), waiting: msg(domain.Sending), replyID: id.New(id.Inbound, created)}
	h.delivered.NextAttemptAt, h.delivered.DeliveredAt = time.Time{}, created
	evs := []domain.Event{
		{ID: id.New(id.Event, created), AccountID: accountID, CampaignID: c.ID, MessageID: h.delivered.ID, Event: webhook.DeliveryStatus,
			URL: c.CallbackURL, Body: webhook.StatusBody(h.delivered, domain.Delivered, created), CreatedAt: created},
		{ID: id.New(id.Event, created), AccountID: accountID, CampaignID: c.ID, Event: webhook.MessageReceived, URL: c.CallbackURL,
			Body: webhook.ReplyBody(c.ID, phone, "call me at home", domain.SMS, created), CreatedAt: created},
	}
	err := st.Write(ctx, func(tx *store.Tx) error {
		if err := tx.InsertCampaign(ctx, c); err != nil {
			return err
		}
		if err := tx.InsertMessages(ctx, []domain.Message{h.delivered, h.waiting}); err != nil {
			return err
		}
		if err := tx.InsertInbound(ctx, domain.Inbound{ID: h.replyID, AccountID: accountID, Env: domain.Live, Phone: phone,
			Channel: domain.SMS, Body: "call me at home", CampaignID: c.ID, ReceivedAt: created}); err != nil {
			return err
		}
		return tx.InsertEvents(ctx, evs)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Delivered events are no longer pending.
	for _, ev := range evs {
		if err := st.RecordAttempts(ctx, "", []domain.AttemptOutcome{{State: domain.EventDelivered,
			Attempt: domain.Attempt{ID: id.New(id.Attempt, created), EventID: ev.ID, AttemptedAt: created, StatusCode: 204}}}); err != nil {
			t.Fatal(err)
		}
		h.events = append(h.events, ev.ID)
	}
	return h
}

func newAccount(t *testing.T, st *store.Store, retentionDays int) string {
	t.Helper()
	a := domain.Account{ID: id.New(id.Account, t0), Name: "Acme", Tier: "pro", Currency: "USD", CountryCode: "55",
		WebhookSecret: "whsec_x", WAQualityTier: 1, CreatedAt: t0}
	if err := st.CreateAccount(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if _, err := compliance.SetSettings(context.Background(), st, a.ID, domain.Compliance{RetentionDays: retentionDays}); err != nil {
		t.Fatal(err)
	}
	return a.ID
}

func TestRetentionSweep(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		ctx := context.Background()
		kept := newAccount(t, st, 30)
		forever := newAccount(t, st, 0)
		old := writeHistory(t, st, kept, t0, "5511999990001")
		recent := writeHistory(t, st, kept, t0.Add(20*24*time.Hour), "5511999990002")
		untouched := writeHistory(t, st, forever, t0, "5511999990003")

		r, _ := compliance.NewRedactor(bytes.Repeat([]byte{3}, 32))
		clk := &clock{t: t0.Add(40 * 24 * time.Hour)} // old is 40 days old, recent 20
		sweep := &compliance.Retention{Store: st, Redactor: r, Now: clk.Now, Batch: 2, Batches: 2,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		n, err := sweep.Sweep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The delivered message (with its event; the waiting one stays), the
		// reply and its event.
		if n != 3 {
			t.Errorf("redacted %d rows, want 3", n)
		}
		m, err := st.MessageByID(ctx, old.delivered.ID)
		if err != nil {
			t.Fatal(err)
		}
		if m.To != r.Phone("5511999990001") || m.Body != "" || m.Status != domain.Delivered || m.Credits != 1_000_000 {
			t.Errorf("old delivered message after the sweep: to %q body %q status %s credits %d", m.To, m.Body, m.Status, m.Credits)
		}
		if w, _ := st.MessageByID(ctx, old.waiting.ID); w.To != "5511999990001" || w.Body == "" {
			t.Errorf("a message still waiting for a provider was redacted: %q %q", w.To, w.Body)
		}
		for _, keep := range []string{recent.delivered.ID, untouched.delivered.ID} {
			if m, _ := st.MessageByID(ctx, keep); compliance.Redacted(m.To) || m.Body == "" {
				t.Errorf("message %s within its retention (or of an account without one) was redacted", keep)
			}
		}
		var evs []domain.Event
		for _, cid := range []string{old.campaignID, recent.campaignID} {
			of, err := st.EventsForCampaign(ctx, kept, cid, 10)
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, of...)
		}
		if len(evs) != 4 {
			t.Fatalf("%d events", len(evs))
		}
		for _, ev := range evs {
			oldEvent := ev.ID == old.events[0] || ev.ID == old.events[1]
			if redacted := !strings.Contains(ev.Body, "55119999900"); redacted != oldEvent {
				t.Errorf("event %s (old %v) redacted %v: %s", ev.ID, oldEvent, redacted, ev.Body)
			}
			if oldEvent && strings.Contains(ev.Body, "call me") {
				t.Errorf("reply text kept in %s", ev.Body)
			}
		}

		// Nothing more to do; a second round changes nothing.
		if n, err := sweep.Sweep(ctx); err != nil || n != 0 {
			t.Errorf("second round: %d, %v", n, err)
		}
		// The waiting message ends; time moves on past the recent history.
		canceled := old.waiting
		canceled.Status, canceled.CanceledAt, canceled.NextAttemptAt = domain.Canceled, clk.Now(), time.Time{}
		if err := st.Write(ctx, func(tx *store.Tx) error { return tx.UpdateMessages(ctx, []domain.Message{canceled}) }); err != nil {
			t.Fatal(err)
		}
		clk.Set(t0.Add(60 * 24 * time.Hour))
		if n, err := sweep.Sweep(ctx); err != nil || n != 1+3 {
			t.Errorf("third round redacted %d (%v), want the ended message and the recent history's 3 rows", n, err)
		}
		if w, _ := st.MessageByID(ctx, old.waiting.ID); !compliance.Redacted(w.To) {
			t.Error("the ended message was not redacted once it ended")
		}
		// A fresh sweeper (a restart) walks everything again and finds
		// nothing to do.
		again := &compliance.Retention{Store: st, Redactor: r, Now: clk.Now, Log: sweep.Log}
		if n, err := again.Sweep(ctx); err != nil || n != 0 {
			t.Errorf("after a restart: %d, %v", n, err)
		}
	})
}
