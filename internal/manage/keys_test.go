package manage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/user"
)

// keysOnly fakes the two areas the key actions use (accounts and keys); the
// embedded Store is nil, so touching any other area fails the test loudly.
type keysOnly struct {
	Store
	accounts map[string]domain.Account
	keys     []domain.APIKey
}

// ofAccount is what the fakes of one area list of an account's rows.
func ofAccount[T any](all []T, accountID string, owner func(T) string) []T {
	var out []T
	for _, v := range all {
		if owner(v) == accountID {
			out = append(out, v)
		}
	}
	return out
}

func (f *keysOnly) Account(_ context.Context, id string) (domain.Account, error) {
	if a, ok := f.accounts[id]; ok {
		return a, nil
	}
	return domain.Account{}, domain.ErrNotFound
}

func (f *keysOnly) Keys(_ context.Context, accountID string) ([]domain.APIKey, error) {
	return ofAccount(f.keys, accountID, func(k domain.APIKey) string { return k.AccountID }), nil
}

func (f *keysOnly) CreateKey(_ context.Context, k domain.APIKey) error {
	f.keys = append(f.keys, k)
	return nil
}

func TestKeysAgainstAFakeOfOneArea(t *testing.T) {
	ctx := context.Background()
	f := &keysOnly{accounts: map[string]domain.Account{"acc_a": {ID: "acc_a"}, "acc_b": {ID: "acc_b"}}}
	s := New(Config{Store: f, Now: func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }})
	dev := Actor{UserID: "usr_a", Role: user.Developer, AccountID: "acc_a"}
	if _, rec, err := s.CreateKey(ctx, dev, "", "test", "ci"); err != nil || rec.AccountID != "acc_a" {
		t.Fatalf("CreateKey = %+v, %v", rec, err)
	}
	if _, _, err := s.CreateKey(ctx, dev, "", "prod", "ci"); err == nil {
		t.Fatal("an unknown environment was accepted")
	} else if _, ok := domain.IsValidation(err); !ok || len(f.keys) != 1 {
		t.Fatalf("an unknown environment: %v, %d keys", err, len(f.keys))
	}
	if ks, err := s.Keys(ctx, dev, ""); err != nil || len(ks) != 1 {
		t.Fatalf("Keys = %v, %v", ks, err)
	}
	other := Actor{UserID: "usr_b", Role: user.Admin, AccountID: "acc_b"}
	if ks, err := s.Keys(ctx, other, ""); err != nil || len(ks) != 0 {
		t.Fatalf("another account sees %v, %v", ks, err)
	}
	if _, err := s.Keys(ctx, other, "acc_a"); !errors.Is(err, ErrForbidden) {
		t.Fatalf("another account naming acc_a: %v", err)
	}
}
