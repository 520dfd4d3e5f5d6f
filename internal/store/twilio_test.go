package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
)

func addTwilioCredential(t *testing.T, st *store.Store, c domain.TwilioCredential) domain.TwilioCredential {
	t.Helper()
	if err := st.CreateTwilioCredential(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func authVersion(t *testing.T, st *store.Store) int64 {
	t.Helper()
	v, err := st.AuthVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTwilioCredentials(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, a domain.Account) {
		b := newAccount(t, st, 0)
		const acLive, acTest, acLater = "AC00000000000000000000000000000001", "AC00000000000000000000000000000002",
			"AC00000000000000000000000000000000"
		live := addTwilioCredential(t, st, domain.TwilioCredential{Sid: acLive, Kind: domain.TwilioAccountSid,
			AccountID: a.ID, Env: domain.Live, Secret: "tok1", Name: "main", CreatedAt: t0})
		addTwilioCredential(t, st, domain.TwilioCredential{Sid: acTest, Kind: domain.TwilioAccountSid,
			AccountID: a.ID, Env: domain.Test, Secret: "tok2", CreatedAt: at(time.Second)})
		// Made later, though its SID sorts first: the oldest AC signs.
		addTwilioCredential(t, st, domain.TwilioCredential{Sid: acLater, Kind: domain.TwilioAccountSid,
			AccountID: a.ID, Env: domain.Live, Secret: "tok3", CreatedAt: at(2 * time.Second)})
		key := addTwilioCredential(t, st, domain.TwilioCredential{Sid: "SK00000000000000000000000000000001",
			Kind: domain.TwilioAPIKey, AccountID: a.ID, Env: domain.Live, Secret: "sec", Parent: acLive,
			CreatedAt: at(3 * time.Second)})

		dup := live
		dup.AccountID = b.ID
		if err := st.CreateTwilioCredential(ctx, dup); !errors.Is(err, domain.ErrConflict) {
			t.Fatalf("a SID twice: %v, want ErrConflict", err)
		}

		got, acct, err := st.TwilioCredentialBySid(ctx, acLive)
		if err != nil || got != live || acct.ID != a.ID {
			t.Fatalf("by sid: %+v %s %v, want %+v of %s", got, acct.ID, err, live, a.ID)
		}
		if _, _, err := st.TwilioCredentialBySid(ctx, "AC"+"ffffffffffffffffffffffffffffffff"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("unknown sid: %v, want ErrNotFound", err)
		}
		list, err := st.TwilioCredentials(ctx, a.ID)
		if err != nil || len(list) != 4 || list[0].Sid != acLive || list[1].Sid != acTest || list[2].Sid != acLater ||
			list[3] != key {
			t.Fatalf("list: %+v %v, want oldest first", list, err)
		}

		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			c, ok, err := tx.TwilioAccountSid(ctx, a.ID, domain.Live)
			if err != nil || !ok || c.Sid != acLive || c.Secret != "tok1" {
				t.Errorf("signing sid (live): %+v %v %v, want %s", c, ok, err, acLive)
			}
			c, ok, err = tx.TwilioAccountSid(ctx, a.ID, domain.Test)
			if err != nil || !ok || c.Sid != acTest {
				t.Errorf("signing sid (test): %+v %v %v, want %s", c, ok, err, acTest)
			}
			if c, ok, err := tx.TwilioAccountSid(ctx, b.ID, domain.Live); err != nil || ok {
				t.Errorf("B's signing sid: %+v %v %v, want none", c, ok, err)
			}
			return nil
		})

		// B reaches none of A's credentials.
		if list, err := st.TwilioCredentials(ctx, b.ID); err != nil || len(list) != 0 {
			t.Fatalf("B lists %d of A's credentials (%v)", len(list), err)
		}
		before := authVersion(t, st)
		if err := st.DeleteTwilioCredential(ctx, b.ID, acLive); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("B deletes A's sid: %v, want ErrNotFound", err)
		}
		if _, _, err := st.TwilioCredentialBySid(ctx, acLive); err != nil {
			t.Fatalf("A's sid after B's attempt: %v", err)
		}
		if after := authVersion(t, st); after != before {
			t.Fatalf("a refused delete moved the auth version %d → %d", before, after)
		}

		// Deleting the AC takes its SK with it and moves the auth counter.
		if err := st.DeleteTwilioCredential(ctx, a.ID, acLive); err != nil {
			t.Fatal(err)
		}
		if after := authVersion(t, st); after == before {
			t.Fatal("deleting a credential left the auth version as it was")
		}
		for _, sid := range []string{acLive, key.Sid} {
			if _, _, err := st.TwilioCredentialBySid(ctx, sid); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("%s after its AC was deleted: %v, want ErrNotFound", sid, err)
			}
		}
		if err := st.DeleteTwilioCredential(ctx, a.ID, acLive); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("deleted twice: %v, want ErrNotFound", err)
		}
		if list, err := st.TwilioCredentials(ctx, a.ID); err != nil || len(list) != 2 {
			t.Fatalf("after delete: %+v %v, want the two other ACs", list, err)
		}
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			if c, ok, err := tx.TwilioAccountSid(ctx, a.ID, domain.Live); err != nil || !ok || c.Sid != acLater {
				t.Errorf("signing sid after delete: %+v %v %v, want %s", c, ok, err, acLater)
			}
			return nil
		})

		// An SK alone goes alone.
		k2 := addTwilioCredential(t, st, domain.TwilioCredential{Sid: "SK00000000000000000000000000000002",
			Kind: domain.TwilioAPIKey, AccountID: a.ID, Env: domain.Test, Secret: "sec2", Parent: acTest, CreatedAt: at(4 * time.Second)})
		if err := st.DeleteTwilioCredential(ctx, a.ID, k2.Sid); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.TwilioCredentialBySid(ctx, acTest); err != nil {
			t.Fatalf("the parent of a deleted key: %v", err)
		}
	})
}

func TestTwilioNumbers(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, a domain.Account) {
		b := newAccount(t, st, 0)
		n := domain.TwilioNumber{AccountID: a.ID, Phone: "+15550001111", SmsURL: "https://a.example/in", SmsMethod: "POST", UpdatedAt: t0}
		if err := st.SetTwilioNumber(ctx, n); err != nil {
			t.Fatal(err)
		}
		other := domain.TwilioNumber{AccountID: a.ID, Phone: "+15550000000", SmsURL: "https://a.example/other", SmsMethod: "GET", UpdatedAt: t0}
		if err := st.SetTwilioNumber(ctx, other); err != nil {
			t.Fatal(err)
		}
		n.SmsURL, n.SmsMethod, n.UpdatedAt = "https://a.example/v2", "GET", at(time.Minute)
		if err := st.SetTwilioNumber(ctx, n); err != nil {
			t.Fatalf("set again: %v", err)
		}
		list, err := st.TwilioNumbers(ctx, a.ID)
		if err != nil || len(list) != 2 || list[0] != other || list[1] != n {
			t.Fatalf("numbers: %+v %v, want %+v then %+v", list, err, other, n)
		}

		// B's row for the same phone is B's own and leaves A's alone.
		mine := domain.TwilioNumber{AccountID: b.ID, Phone: n.Phone, SmsURL: "https://b.example/in", SmsMethod: "POST", UpdatedAt: t0}
		if err := st.SetTwilioNumber(ctx, mine); err != nil {
			t.Fatal(err)
		}
		if list, err := st.TwilioNumbers(ctx, b.ID); err != nil || len(list) != 1 || list[0] != mine {
			t.Fatalf("B's numbers: %+v %v", list, err)
		}
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			got, ok, err := tx.TwilioNumber(ctx, a.ID, n.Phone)
			if err != nil || !ok || got != n {
				t.Errorf("A's number: %+v %v %v, want %+v", got, ok, err, n)
			}
			if got, ok, err := tx.TwilioNumber(ctx, b.ID, other.Phone); err != nil || ok {
				t.Errorf("B reads A's number: %+v %v %v, want none", got, ok, err)
			}
			return nil
		})
	})
}
