package message

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/intake/intaketest"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// campaignRowsTx is a send's transaction that counts the campaigns rows
// it writes.
type campaignRowsTx struct {
	intake.SendTx
	n *atomic.Int64
}

func (tx campaignRowsTx) InsertCampaign(ctx context.Context, c domain.Campaign) error {
	tx.n.Add(1)
	return tx.SendTx.InsertCampaign(ctx, c)
}

func (tx campaignRowsTx) InsertCampaigns(ctx context.Context, cs []domain.Campaign) error {
	tx.n.Add(int64(len(cs)))
	return tx.SendTx.InsertCampaigns(ctx, cs)
}

// A send to one recipient writes no campaigns row: its campaign is named
// after its message and reads, cancels, lists and answers replies as a
// campaign with a row does, in its own account and environment only. A
// send to two keeps its row.
func TestOneRecipientCampaignHasNoRow(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, storetest.Migrated(t, d))
			now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			for _, accID := range []string{"acc_1", "acc_2"} {
				acc := domain.Account{ID: accID, Name: "A", Tier: "pro", Currency: "USD", CountryCode: "55",
					WebhookSecret: "whsec_x", WAQualityTier: 1, CreatedAt: now}
				if err := st.CreateAccount(ctx, acc); err != nil {
					t.Fatal(err)
				}
				if _, err := creditAccount(ctx, st, acc.ID, 100*ledger.Micro, ledger.TopUp, ""); err != nil {
					t.Fatal(err)
				}
			}
			caller := func(accID string, env domain.Environment) Caller {
				acc, err := st.Account(ctx, accID)
				if err != nil {
					t.Fatal(err)
				}
				return Caller{Account: acc, Key: domain.APIKey{ID: "key_" + accID + string(env), AccountID: acc.ID, Env: env}}
			}
			live, test, other := caller("acc_1", domain.Live), caller("acc_1", domain.Test), caller("acc_2", domain.Live)
			rows := &atomic.Int64{}
			count := func(tx *store.Tx) intake.SendTx { return campaignRowsTx{SendTx: tx, n: rows} }
			tracker := newTracker(st, clock)
			t.Cleanup(tracker.Close)
			svc := newServices(sendConfig{Config: intaketest.Config{Store: st, View: count, Now: clock, AllowPrivateCallbacks: true}, Changes: tracker})
			t.Cleanup(svc.Close)

			const cb = "https://hooks.example.com/cb"
			out, err := svc.Send(ctx, live, Draft{To: "5511999990010", Text: "hi", Type: "SMS", CallbackURL: cb}, SendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			m := out.Receipt.Messages[0].Message
			cid := out.Receipt.Campaign.ID
			if cid != id.Derive(id.Campaign, m.ID) || m.CampaignID != cid || rows.Load() != 0 {
				t.Fatalf("campaign %s of message %s (named %s): %d campaigns rows", cid, m.ID, m.CampaignID, rows.Load())
			}
			page, err := svc.Campaign(ctx, live.Scope(), cid, "", 10)
			if err != nil {
				t.Fatal(err)
			}
			want := domain.Campaign{ID: cid, AccountID: "acc_1", Env: domain.Live, Type: domain.SMS, CallbackURL: cb,
				Total: 1, CreatedAt: now}
			if !reflect.DeepEqual(page.Campaign, want) || page.Status != string(domain.Sending) ||
				page.Counts[domain.Sending] != 1 || len(page.Messages) != 1 || page.Messages[0].ID != m.ID {
				t.Fatalf("campaign page %+v, want campaign %+v with its one message sending", page, want)
			}

			// Another account, the other environment, and an id made from
			// a message of another campaign find nothing.
			two, err := svc.Send(ctx, live, Draft{Recipients: []string{"5511999990011", "5511999990012"}, Text: "hi",
				Type: "SMS"}, SendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			madeUp := id.Derive(id.Campaign, two.Receipt.Messages[0].Message.ID)
			for _, c := range []struct {
				sc  Scope
				cid string
			}{{other.Scope(), cid}, {test.Scope(), cid}, {live.Scope(), madeUp}} {
				if _, err := svc.Campaign(ctx, c.sc, c.cid, "", 10); !errors.Is(err, domain.ErrNotFound) {
					t.Fatalf("campaign %s read by %+v: %v, want not found", c.cid, c.sc, err)
				}
				if _, err := svc.CancelCampaign(ctx, c.sc, c.cid); !errors.Is(err, domain.ErrNotFound) {
					t.Fatalf("campaign %s canceled by %+v: %v, want not found", c.cid, c.sc, err)
				}
			}
			// The send to two keeps its row and its own id.
			if rows.Load() != 1 || two.Receipt.Campaign.ID == madeUp {
				t.Fatalf("a send to two: %d campaigns rows, campaign %s", rows.Load(), two.Receipt.Campaign.ID)
			}
			if p, err := svc.Campaign(ctx, live.Scope(), two.Receipt.Campaign.ID, "", 10); err != nil || p.Campaign.Total != 2 ||
				len(p.Messages) != 2 {
				t.Fatalf("the campaign of two: %+v, %v", p, err)
			}
			// A recipients list of one is a one-recipient send too.
			listed, err := svc.Send(ctx, test, Draft{Recipients: []string{"5511999990013"}, Text: "hi", Type: "SMS"}, SendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := listed.Receipt.Campaign.ID; rows.Load() != 1 || got != id.Derive(id.Campaign, listed.Receipt.Messages[0].Message.ID) {
				t.Fatalf("recipients of one: campaign %s, %d campaigns rows", got, rows.Load())
			}
			if _, err := svc.Campaign(ctx, test.Scope(), listed.Receipt.Campaign.ID, "", 10); err != nil {
				t.Fatalf("the test environment's own campaign: %v", err)
			}

			// The list filter and reply matching name the campaign.
			list, err := svc.List(ctx, live.Scope(), ListFilter{CampaignID: cid, Limit: 10})
			if err != nil || len(list.Messages) != 1 || list.Messages[0].ID != m.ID {
				t.Fatalf("messages of campaign %s: %+v, %v", cid, list.Messages, err)
			}
			matched, err := tracker.Receive(ctx, "sim", provider.Inbound{AccountID: "acc_1", Env: domain.Live, From: "5511999990010",
				Channel: domain.SMS, Body: "thanks", At: now})
			if err != nil || matched != cid {
				t.Fatalf("reply matched to %q (%v), want %s", matched, err, cid)
			}

			canceled, err := svc.CancelCampaign(ctx, live.Scope(), cid)
			if err != nil || len(canceled) != 1 || canceled[0].ID != m.ID || canceled[0].Status != domain.Canceled {
				t.Fatalf("cancel campaign %s: %+v, %v", cid, canceled, err)
			}
			page, err = svc.Campaign(ctx, live.Scope(), cid, "", 10)
			if err != nil || page.Status != string(domain.Canceled) || page.Counts[domain.Canceled] != 1 {
				t.Fatalf("after the cancel: %+v, %v", page, err)
			}
			evs, err := st.EventsForCampaign(ctx, "acc_1", cid, 10)
			if err != nil || len(evs) == 0 {
				t.Fatalf("events of campaign %s: %d, %v", cid, len(evs), err)
			}
		})
	}
}
