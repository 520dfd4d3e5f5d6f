package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
)

func TestAccountRoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		tests := []struct {
			name string
			in   domain.Account
		}{
			{"minimal", domain.Account{ID: id.New(id.Account, t0), Name: "Min", Tier: "free", Currency: "BRL",
				CountryCode: "BR", WebhookSecret: "s1", CreatedAt: t0}},
			{"every field", domain.Account{ID: id.New(id.Account, at(1e6)), Name: "Full", Tier: "enterprise",
				Currency: "EUR", CountryCode: "ES", WebhookSecret: "s2", WebhookSecretPrev: "s0",
				SecretRotatedAt: at(-3e9), Limits: domain.Limits{TierRPM: 1, SendRPM: 2, StatusRPM: 3, MediaRPM: 4},
				WAQualityTier: 3, RCSFallback: true, IPAllowlist: []string{"10.0.0.0/8", "192.0.2.1"},
				Prices: `{"SMS":{"ES":0.05}}`, CreatedAt: at(1e6)}},
			// Read back raw and unparsed: the send reports the error.
			{"a price table that does not parse", domain.Account{ID: id.New(id.Account, at(2e6)), Name: "Bad",
				Tier: "free", Currency: "BRL", CountryCode: "BR", WebhookSecret: "s3", Prices: `{`, CreatedAt: at(2e6)}},
		}
		for _, tc := range tests {
			if err := st.CreateAccount(ctx, tc.in); err != nil {
				t.Fatalf("%s: create: %v", tc.name, err)
			}
			got, err := st.Account(ctx, tc.in.ID)
			if err != nil {
				t.Fatalf("%s: read: %v", tc.name, err)
			}
			want := tc.in
			want.BalanceUpdatedAt = tc.in.CreatedAt // a new account's balance dates from its creation
			if p, err := domain.ParsePrices(tc.in.Prices); err == nil {
				want.PriceTable = &p // parsed once, when the row is read
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: read back\n got %+v\nwant %+v", tc.name, got, want)
			}
		}
		all, err := st.Accounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 3 || all[0].ID != tests[0].in.ID || all[1].ID != tests[1].in.ID || all[2].ID != tests[2].in.ID {
			t.Errorf("Accounts = %v, want oldest first", all)
		}
		_, err = st.Account(ctx, "acc_missing")
		wantErr(t, "unknown account", err, domain.ErrNotFound)
		if err := st.CreateAccount(ctx, tests[0].in); err == nil {
			t.Error("duplicate account id accepted")
		}
	})
}

func TestAccountSettings(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		tests := []struct {
			name    string
			op      func() error
			check   func(a domain.Account) bool
			wantErr error
		}{
			{"set limits",
				func() error {
					return st.SetLimits(ctx, acc.ID, domain.Limits{TierRPM: 10, SendRPM: 20, StatusRPM: 30, MediaRPM: 0})
				},
				func(a domain.Account) bool {
					return a.Limits == domain.Limits{TierRPM: 10, SendRPM: 20, StatusRPM: 30, MediaRPM: 0}
				}, nil},
			{"set limits of unknown account",
				func() error { return st.SetLimits(ctx, "acc_missing", domain.Limits{}) }, nil, domain.ErrNotFound},
			{"first rotation keeps the old secret",
				func() error { return st.RotateSecret(ctx, acc.ID, "whsec_second", at(1e9)) },
				func(a domain.Account) bool {
					return a.WebhookSecret == "whsec_second" && a.WebhookSecretPrev == "whsec_first" && a.SecretRotatedAt.Equal(at(1e9))
				}, nil},
			{"second rotation drops the oldest",
				func() error { return st.RotateSecret(ctx, acc.ID, "whsec_third", at(2e9)) },
				func(a domain.Account) bool {
					return a.WebhookSecret == "whsec_third" && a.WebhookSecretPrev == "whsec_second" && a.SecretRotatedAt.Equal(at(2e9))
				}, nil},
			{"rotate unknown account",
				func() error { return st.RotateSecret(ctx, "acc_missing", "x", t0) }, nil, domain.ErrNotFound},
			{"owner settings",
				func() error { return st.UpdateAccountSettings(ctx, acc.ID, []string{"203.0.113.7"}, true, 2) },
				func(a domain.Account) bool {
					return reflect.DeepEqual(a.IPAllowlist, []string{"203.0.113.7"}) && a.RCSFallback && a.WAQualityTier == 2
				}, nil},
			{"owner settings cleared",
				func() error { return st.UpdateAccountSettings(ctx, acc.ID, nil, false, 1) },
				func(a domain.Account) bool { return a.IPAllowlist == nil && !a.RCSFallback && a.WAQualityTier == 1 }, nil},
		}
		for _, tc := range tests {
			wantErr(t, tc.name, tc.op(), tc.wantErr)
			if tc.check == nil {
				continue
			}
			a, err := st.Account(ctx, acc.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(a) {
				t.Errorf("%s: account now %+v", tc.name, a)
			}
		}
	})
}

func TestAddCredits(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		other := newAccount(t, st, 5*credit)
		tests := []struct {
			name    string
			account string
			amount  int64
			kind    ledger.Kind
			wantErr error
			want    int64 // balance afterwards
		}{
			{"top up", acc.ID, 10 * credit, ledger.TopUp, nil, 10 * credit},
			{"partial debit", acc.ID, -3 * credit, ledger.Adjust, nil, 7 * credit},
			{"debit larger than the balance", acc.ID, -7*credit - 1, ledger.Adjust, store.ErrInsufficientCredits, 7 * credit},
			{"debit to exactly zero", acc.ID, -7 * credit, ledger.Adjust, nil, 0},
			{"any debit of an empty account", acc.ID, -1, ledger.Adjust, store.ErrInsufficientCredits, 0},
			{"fractional top up", acc.ID, 1, ledger.TopUp, nil, 1},
			{"unknown account", "acc_missing", credit, ledger.TopUp, domain.ErrNotFound, 1},
		}
		for _, tc := range tests {
			bal, err := creditAccount(ctx, st, tc.account, tc.amount, tc.kind, tc.name)
			wantErr(t, tc.name, err, tc.wantErr)
			if err == nil && bal != tc.want {
				t.Errorf("%s: returned balance %d, want %d", tc.name, bal, tc.want)
			}
			checkBalance(t, st, acc.ID, tc.want)
		}
		checkBalance(t, st, other.ID, 5*credit)

		// Only the four accepted operations left a line.
		all, err := st.Ledger(ctx, acc.ID, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 4 {
			t.Fatalf("ledger has %d lines, want 4: %+v", len(all), all)
		}
		for _, e := range all {
			if e.AccountID != acc.ID || e.Note == "" || e.MessageID != "" {
				t.Errorf("unexpected ledger line %+v", e)
			}
		}
		// Paging with the cursor yields the same lines in the same order.
		var paged []ledger.Entry
		for before := ""; ; {
			page, err := st.Ledger(ctx, acc.ID, before, 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			paged = append(paged, page...)
			before = page[len(page)-1].ID
		}
		if !reflect.DeepEqual(paged, all) {
			t.Errorf("paged ledger differs:\n got %+v\nwant %+v", paged, all)
		}
	})
}

func TestKeys(t *testing.T) {
	eachAccount(t, credit, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		other := newAccount(t, st, 0)
		keys := []domain.APIKey{
			{ID: id.New(id.Key, at(0)), AccountID: acc.ID, Env: "test", Prefix: "sk_test_ab", Hash: "h-test", Name: "ci", CreatedAt: at(0)},
			{ID: id.New(id.Key, at(1e9)), AccountID: acc.ID, Env: "live", Prefix: "sk_live_cd", Hash: "h-live", Name: "prod", CreatedAt: at(1e9)},
			{ID: id.New(id.Key, at(2e9)), AccountID: other.ID, Env: "live", Prefix: "sk_live_ef", Hash: "h-other", CreatedAt: at(2e9)},
		}
		for _, k := range keys {
			if err := st.CreateKey(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		dup := keys[0]
		dup.ID = id.New(id.Key, at(3e9))
		if err := st.CreateKey(ctx, dup); err == nil {
			t.Error("a second key with the same hash was accepted")
		}

		// Revocation is scoped to the owner and happens once.
		revokes := []struct {
			name, account, key string
			wantErr            error
		}{
			{"other account's key", acc.ID, keys[2].ID, domain.ErrNotFound},
			{"unknown key", acc.ID, "key_missing", domain.ErrNotFound},
			{"own key", acc.ID, keys[0].ID, nil},
			{"already revoked", acc.ID, keys[0].ID, domain.ErrNotFound},
		}
		for _, tc := range revokes {
			wantErr(t, "revoke "+tc.name, st.RevokeKey(ctx, tc.account, tc.key, at(5e9)), tc.wantErr)
		}
		if err := st.TouchKey(ctx, keys[1].ID, at(6e9)); err != nil {
			t.Fatal(err)
		}

		wantTest, wantLive := keys[0], keys[1]
		wantTest.RevokedAt = at(5e9)
		wantLive.LastUsedAt = at(6e9)
		lookups := []struct {
			name, hash string
			wantKey    domain.APIKey
			wantAcc    string
			wantErr    error
		}{
			{"revoked key is still found", "h-test", wantTest, acc.ID, nil},
			{"live key", "h-live", wantLive, acc.ID, nil},
			{"other account", "h-other", keys[2], other.ID, nil},
			{"unknown hash", "h-missing", domain.APIKey{}, "", domain.ErrNotFound},
		}
		for _, tc := range lookups {
			k, a, err := st.KeyByHash(ctx, tc.hash)
			wantErr(t, tc.name, err, tc.wantErr)
			if err != nil {
				continue
			}
			if !reflect.DeepEqual(k, tc.wantKey) {
				t.Errorf("%s: key\n got %+v\nwant %+v", tc.name, k, tc.wantKey)
			}
			// The joined account must read exactly like Account.
			wantAcc, err := st.Account(ctx, tc.wantAcc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, wantAcc) {
				t.Errorf("%s: account\n got %+v\nwant %+v", tc.name, a, wantAcc)
			}
		}

		list, err := st.Keys(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(list, []domain.APIKey{wantLive, wantTest}) {
			t.Errorf("Keys = %+v, want newest first and only the account's", list)
		}
	})
}
