package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
)

// Replies lists an account's own replies, newest first, by environment and
// phone, a page at a time; RepliesTo finds those of one message: recorded
// with its id, or, recorded before replies kept it, by its campaign and
// recipient.
func TestReplies(t *testing.T) {
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
		in := func(id, acct string, env domain.Environment, phone, cmp, msg string) domain.Inbound {
			return domain.Inbound{ID: id, AccountID: acct, Env: env, Phone: phone, Channel: domain.SMS, Body: "text of " + id,
				CampaignID: cmp, MessageID: msg, Provider: "simulator", ReceivedAt: at}
		}
		rows := []domain.Inbound{
			in("inb_01", "acc_a", domain.Live, "551100", "cmp_1", "msg_1"),
			in("inb_02", "acc_a", domain.Live, "551100", "cmp_1", ""), // before replies kept their message
			in("inb_03", "acc_a", domain.Test, "551100", "cmp_1", ""), // another environment
			in("inb_04", "acc_a", domain.Live, "551199", "cmp_1", ""), // another recipient
			in("inb_05", "acc_b", domain.Live, "551100", "cmp_1", "msg_1"),
			in("inb_06", "acc_a", domain.Live, "551100", "", ""),
		}
		if err := st.Write(ctx, func(tx *store.Tx) error {
			for _, r := range rows {
				if err := tx.InsertInbound(ctx, r); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		ids := func(list []domain.Inbound, err error) string {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range list {
				out = append(out, strings.TrimPrefix(r.ID, "inb_"))
			}
			return strings.Join(out, " ")
		}
		for _, c := range []struct {
			f    domain.ReplyFilter
			want string
		}{
			{domain.ReplyFilter{AccountID: "acc_a", Limit: 10}, "06 04 03 02 01"},
			{domain.ReplyFilter{AccountID: "acc_a", Env: domain.Live, Limit: 10}, "06 04 02 01"},
			{domain.ReplyFilter{AccountID: "acc_a", Phone: "551199", Limit: 10}, "04"},
			{domain.ReplyFilter{AccountID: "acc_a", Before: "inb_04", Limit: 2}, "03 02"},
			{domain.ReplyFilter{AccountID: "acc_b", Limit: 10}, "05"},
			{domain.ReplyFilter{AccountID: "acc_c", Limit: 10}, ""},
		} {
			if got := ids(st.Replies(ctx, c.f)); got != c.want {
				t.Errorf("%+v: %q, want %q", c.f, got, c.want)
			}
		}
		if got := ids(st.Replies(ctx, domain.ReplyFilter{AccountID: "acc_a", Limit: 1})); got != "06" {
			t.Errorf("the newest: %q", got)
		}
		m := domain.Message{ID: "msg_1", AccountID: "acc_a", Env: domain.Live, To: "551100", CampaignID: "cmp_1"}
		got, err := st.RepliesTo(ctx, m, 10)
		if ids(got, err) != "01 02" || got[0].MessageID != "msg_1" || got[0].Body != "text of inb_01" {
			t.Fatalf("the replies to msg_1: %+v", got)
		}
	})
}
