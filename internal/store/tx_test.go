package store_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

func TestUpdateMessageRoundTrip(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		c := newCampaign(acc, "live", t0, 1)
		orig := newMessage(c, "34600000001", 0, t0)
		orig.Type, orig.Channel = "RCS", "RCS"
		insertMessages(t, st, c, orig)

		// Sub-millisecond parts are dropped: times are stored as Unix ms.
		odd := func(ms int) time.Time { return t0.Add(time.Duration(ms)*time.Millisecond + 456789*time.Nanosecond) }
		full := orig
		full.Status, full.Channel, full.Provider, full.ProviderRef = "DELIVERED", "SMS", "smpp-a", "ref-1"
		full.ErrorCode, full.ErrorMessage = "E1", "fell back"
		full.UpdatedAt, full.SentAt, full.DeliveredAt, full.ReadAt = odd(1), odd(2), odd(3), odd(4)
		full.FailedAt, full.CanceledAt, full.NextAttemptAt = odd(5), odd(6), odd(7)
		full.LeaseOwner, full.Charged, full.Credits, full.Segments, full.Encoding, full.Attempts = "w1", 7, 9, 3, "UCS2", 4
		full.Route, full.Cost, full.CostCurrency = "uk-cheap", 31_000, "EUR"
		cleared := full
		cleared.SentAt, cleared.DeliveredAt, cleared.ReadAt, cleared.FailedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		cleared.CanceledAt, cleared.NextAttemptAt, cleared.LeaseOwner, cleared.Charged = time.Time{}, time.Time{}, "", 0
		// Fields UpdateMessages does not own keep their stored values.
		immutable := cleared
		immutable.Body, immutable.To, immutable.ExpiresAt, immutable.ScheduledAt = "changed", "34999", at(time.Minute), at(time.Minute)

		truncate := func(m domain.Message) domain.Message {
			for _, p := range []*time.Time{&m.UpdatedAt, &m.SentAt, &m.DeliveredAt, &m.ReadAt, &m.FailedAt, &m.CanceledAt, &m.NextAttemptAt} {
				if !p.IsZero() {
					*p = p.Truncate(time.Millisecond)
				}
			}
			return m
		}
		tests := []struct {
			name string
			in   domain.Message
			want domain.Message
		}{
			{"every mutable field", full, truncate(full)},
			{"timestamps cleared", cleared, truncate(cleared)},
			{"immutable fields ignored", immutable, truncate(cleared)},
		}
		for _, tc := range tests {
			write(t, st, func(ctx context.Context, tx *store.Tx) error { return tx.UpdateMessages(ctx, []domain.Message{tc.in}) })
			got, err := st.MessageByID(ctx, orig.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
			}
		}
	})
}

// Only the fields that differ from the state read are written: a field
// the reports did not change keeps what is stored, even if the copy read
// earlier said otherwise; messages with different changes go in one call.
func TestUpdateChangedMessagesWritesTheDifference(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		c := newCampaign(acc, "live", t0, 3)
		a, b, u := newMessage(c, "34600000001", 0, t0), newMessage(c, "34600000002", 0, t0), newMessage(c, "34600000003", 0, t0)
		a.Provider, b.Provider, u.Provider = "smpp-a", "smpp-a", "smpp-a"
		insertMessages(t, st, c, a, b, u)
		// What is stored moves on behind the copies' back (no transaction
		// of the store's would let that happen: this shows what is written).
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			moved := []domain.Message{a, b, u}
			for i := range moved {
				moved[i].ProviderRef = "stored-ref"
			}
			return tx.UpdateMessages(ctx, moved)
		})
		delivered, failed := a, b
		delivered.Status, delivered.DeliveredAt, delivered.UpdatedAt = "DELIVERED", at(time.Second), at(time.Second)
		failed.Status, failed.ErrorCode, failed.FailedAt, failed.UpdatedAt = "FAILED", "UNDELIVERED", at(time.Second), at(time.Second)
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.UpdateChangedMessages(ctx, []domain.Message{a, b, u}, []domain.Message{delivered, failed, u})
		})
		for _, want := range []struct {
			m            domain.Message
			status, code string
		}{{a, "DELIVERED", ""}, {b, "FAILED", "UNDELIVERED"}, {u, string(u.Status), ""}} {
			got, err := st.MessageByID(ctx, want.m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Status) != want.status || got.ErrorCode != want.code || got.ProviderRef != "stored-ref" {
				t.Errorf("%s: status %s, code %q, ref %q; want %s, %q and the stored ref", want.m.To, got.Status, got.ErrorCode,
					got.ProviderRef, want.status, want.code)
			}
		}
	})
}

func TestLockAndProviderRefs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		acc := newAccount(t, st, 0)
		c := newCampaign(acc, "live", t0, 4)
		var msgs []domain.Message
		for i, p := range []struct{ provider, ref string }{{"smpp-a", "r1"}, {"smpp-a", "r2"}, {"smpp-b", "r1"}, {"smpp-a", ""}} {
			m := newMessage(c, fmt.Sprintf("3460000000%d", i), 0, at(time.Duration(i)*time.Millisecond))
			m.Provider, m.ProviderRef = p.provider, p.ref
			msgs = append(msgs, m)
		}
		insertMessages(t, st, c, msgs...)

		locks := []struct {
			name string
			ids  []string
			want []string
		}{
			{"none", nil, nil},
			{"unsorted with an unknown id", []string{msgs[2].ID, "msg_missing", msgs[0].ID}, []string{msgs[0].ID, msgs[2].ID}},
			{"all", ids(msgs), ids(msgs)},
		}
		for _, tc := range locks {
			write(t, st, func(ctx context.Context, tx *store.Tx) error {
				got, err := tx.LockMessages(ctx, tc.ids)
				if err != nil {
					return err
				}
				if len(got) != len(tc.want) {
					t.Errorf("lock %s: %d messages, want %d", tc.name, len(got), len(tc.want))
				}
				for _, mid := range tc.want {
					stored, err := st.MessageByID(ctx, mid)
					if err != nil || !reflect.DeepEqual(got[mid], stored) {
						t.Errorf("lock %s: %s = %+v, want %+v (%v)", tc.name, mid, got[mid], stored, err)
					}
				}
				return nil
			})
		}

		refs := []struct {
			name, provider string
			refs           []string
			want           map[string]string
		}{
			{"scoped to the provider", "smpp-a", []string{"r1", "r2", "r9"}, map[string]string{"r1": msgs[0].ID, "r2": msgs[1].ID}},
			{"other provider", "smpp-b", []string{"r1", "r2"}, map[string]string{"r1": msgs[2].ID}},
			{"nothing asked", "smpp-a", nil, map[string]string{}},
		}
		for _, tc := range refs {
			write(t, st, func(ctx context.Context, tx *store.Tx) error {
				got, err := tx.MessageIDsByProviderRef(ctx, tc.provider, tc.refs)
				if err != nil {
					return err
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("refs %s: %v, want %v", tc.name, got, tc.want)
				}
				return nil
			})
		}
	})
}

func TestRefund(t *testing.T) {
	eachAccount(t, 10*credit, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		c := newCampaign(acc, "live", t0, 2)
		msgs := []domain.Message{newMessage(c, "34600000000", 2*credit, t0), newMessage(c, "34600000001", 2*credit, t0)}
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			_, err := ledger.Reserve(ctx, tx, acc.ID, c.ID, []ledger.Charge{{MessageID: msgs[0].ID, Amount: 2 * credit},
				{MessageID: msgs[1].ID, Amount: 2 * credit}}, t0)
			return err
		})
		insertMessages(t, st, c, msgs...)
		m := msgs[0]
		tests := []struct {
			name      string
			account   string
			amount    int64
			wantErr   error
			wantBal   int64
			wantLines int // refund lines afterwards
		}{
			{"zero is a no-op", acc.ID, 0, nil, 6 * credit, 0},
			{"negative is a no-op", acc.ID, -credit, nil, 6 * credit, 0},
			{"full refund", acc.ID, 2 * credit, nil, 8 * credit, 1},
			{"unknown account", "acc_missing", credit, domain.ErrNotFound, 8 * credit, 1},
		}
		for _, tc := range tests {
			err := st.Write(ctx, func(tx *store.Tx) error {
				return ledger.Return(ctx, tx, tc.account, c.ID, m.ID, tc.amount, "canceled", t0)
			})
			wantErr(t, tc.name, err, tc.wantErr)
			checkBalance(t, st, acc.ID, tc.wantBal)
			lines, err := st.Ledger(ctx, acc.ID, "", 100)
			if err != nil {
				t.Fatal(err)
			}
			var refunds []ledger.Entry
			for _, e := range lines {
				if e.Kind == ledger.Refund {
					refunds = append(refunds, e)
				}
			}
			if len(refunds) != tc.wantLines {
				t.Fatalf("%s: %d refund lines, want %d", tc.name, len(refunds), tc.wantLines)
			}
			for _, e := range refunds {
				if e.Amount != 2*credit || e.BalanceAfter != 8*credit || e.MessageID != m.ID ||
					e.CampaignID != c.ID || e.Note != "canceled" || e.AccountID != acc.ID {
					t.Errorf("%s: refund line %+v", tc.name, e)
				}
			}
		}
	})
}

func TestInboundAndLatestMessage(t *testing.T) {
	eachTwoAccounts(t, func(t *testing.T, ctx context.Context, st *store.Store, acc, other domain.Account) {
		const phone = "34600000001"
		inbound := []domain.Inbound{
			{AccountID: acc.ID, Env: "live", Phone: phone, Channel: "WHATSAPP", Body: "hi", ReceivedAt: at(time.Minute)},
			{AccountID: acc.ID, Env: "live", Phone: phone, Channel: "WHATSAPP", Body: "again", ReceivedAt: at(3 * time.Minute), CampaignID: "cmp_x", Provider: "wa"},
			{AccountID: acc.ID, Env: "live", Phone: phone, Channel: "SMS", Body: "sms", ReceivedAt: at(5 * time.Minute)},
			{AccountID: acc.ID, Env: "test", Phone: phone, Channel: "WHATSAPP", Body: "test", ReceivedAt: at(7 * time.Minute)},
			{AccountID: other.ID, Env: "live", Phone: phone, Channel: "WHATSAPP", Body: "other", ReceivedAt: at(9 * time.Minute)},
		}
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			for i, in := range inbound {
				in.ID = id.New(id.Inbound, in.ReceivedAt.Add(time.Duration(i)))
				if err := tx.InsertInbound(ctx, in); err != nil {
					return err
				}
			}
			return nil
		})
		lasts := []struct {
			name, account string
			env           domain.Environment
			phone         string
			channel       domain.Channel
			want          time.Time
		}{
			{"newest of the channel", acc.ID, "live", phone, "WHATSAPP", at(3 * time.Minute)},
			{"other channel", acc.ID, "live", phone, "SMS", at(5 * time.Minute)},
			{"other env", acc.ID, "test", phone, "WHATSAPP", at(7 * time.Minute)},
			{"other account", other.ID, "live", phone, "WHATSAPP", at(9 * time.Minute)},
			{"never wrote", acc.ID, "live", "34600000002", "WHATSAPP", time.Time{}},
			{"never on that channel", acc.ID, "test", phone, "RCS", time.Time{}},
		}
		for _, tc := range lasts {
			got, err := st.LastInbound(ctx, tc.account, tc.env, tc.phone, tc.channel)
			if err != nil || !got.Equal(tc.want) || got.IsZero() != tc.want.IsZero() {
				t.Errorf("%s: %v (%v), want %v", tc.name, got, err, tc.want)
			}
		}

		live := newCampaign(acc, "live", t0, 2)
		old := newMessage(live, phone, 0, at(time.Minute))
		recent := newMessage(live, phone, 0, at(2*time.Minute))
		insertMessages(t, st, live, old, recent)
		test := newCampaign(acc, "test", at(3*time.Minute), 1)
		testMsg := newMessage(test, phone, 0, at(3*time.Minute))
		insertMessages(t, st, test, testMsg)
		latest := []struct {
			name, account string
			env           domain.Environment
			phone         string
			since         time.Time
			want          string
		}{
			{"newest in the env", acc.ID, "live", phone, t0, recent.ID},
			{"since is inclusive", acc.ID, "live", phone, at(2 * time.Minute), recent.ID},
			{"too old", acc.ID, "live", phone, at(2*time.Minute + time.Millisecond), ""},
			{"test env", acc.ID, "test", phone, t0, testMsg.ID},
			{"other phone", acc.ID, "live", "34600000002", t0, ""},
			{"other account", other.ID, "live", phone, t0, ""},
		}
		for _, tc := range latest {
			got, err := st.LatestMessageTo(ctx, tc.account, tc.env, tc.phone, tc.since)
			if tc.want == "" {
				wantErr(t, tc.name, err, domain.ErrNotFound)
				continue
			}
			if err != nil || got.ID != tc.want {
				t.Errorf("%s: %s (%v), want %s", tc.name, got.ID, err, tc.want)
			}
		}
	})
}
