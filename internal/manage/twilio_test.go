package manage

import (
	"context"
	"errors"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/twilio/sid"
	"github.com/msgsvc/msgsvc/internal/user"
)

// twilioOnly fakes accounts and Twilio credentials; the embedded Store is
// nil.
type twilioOnly struct {
	Store
	creds []domain.TwilioCredential
}

func (f *twilioOnly) Account(_ context.Context, id string) (domain.Account, error) {
	return domain.Account{ID: id}, nil
}

func (f *twilioOnly) TwilioCredentials(_ context.Context, accountID string) ([]domain.TwilioCredential, error) {
	return ofAccount(f.creds, accountID, func(c domain.TwilioCredential) string { return c.AccountID }), nil
}

func (f *twilioOnly) CreateTwilioCredential(_ context.Context, c domain.TwilioCredential) error {
	f.creds = append(f.creds, c)
	return nil
}

func (f *twilioOnly) DeleteTwilioCredential(_ context.Context, accountID, s string) error {
	for i, c := range f.creds {
		if c.Sid == s && c.AccountID == accountID {
			f.creds = append(f.creds[:i], f.creds[i+1:]...)
			return nil
		}
	}
	return ErrNotFound
}

func TestTwilioCredentials(t *testing.T) {
	ctx := context.Background()
	f := &twilioOnly{}
	s := New(Config{Store: f, Hasher: cheap})
	dev := Actor{UserID: "usr_a", Role: user.Developer, AccountID: "acc_a"}
	other := Actor{UserID: "usr_b", Role: user.Owner, AccountID: "acc_b"}

	ac, err := s.CreateTwilioCredential(ctx, dev, "", NewTwilioCredential{Environment: "live", Name: " prod "})
	if err != nil {
		t.Fatal(err)
	}
	if !sid.Valid(sid.Account, ac.Sid) || len(ac.Secret) != 32 || ac.Kind != domain.TwilioAccountSid || ac.Env != domain.Live ||
		ac.AccountID != "acc_a" || ac.Name != "prod" || ac.Parent != "" {
		t.Fatalf("account sid: %+v", ac)
	}
	if ac.Sid != "AC"+lowerHex(ac.Sid[2:]) || ac.Secret != lowerHex(ac.Secret) {
		t.Fatalf("sid %s and token %s are not lower-case hex", ac.Sid, ac.Secret)
	}
	key, err := s.CreateTwilioCredential(ctx, dev, "", NewTwilioCredential{APIKey: true, AccountSid: ac.Sid})
	if err != nil {
		t.Fatal(err)
	}
	if !sid.Valid(sid.APIKey, key.Sid) || key.Parent != ac.Sid || key.Env != domain.Live || key.Kind != domain.TwilioAPIKey ||
		len(key.Secret) != 32 || key.Secret == ac.Secret {
		t.Fatalf("api key: %+v", key)
	}

	list, err := s.TwilioCredentials(ctx, dev, "")
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	for _, c := range list {
		if c.Secret != "" {
			t.Fatalf("the list shows %s's secret", c.Sid)
		}
	}
	if got, err := s.TwilioCredential(ctx, dev, "", key.Sid); err != nil || got.Sid != key.Sid || got.Secret != "" {
		t.Fatalf("get: %+v %v", got, err)
	}

	refused := []struct {
		name  string
		in    NewTwilioCredential
		field string
	}{
		{"no environment", NewTwilioCredential{}, "environment"},
		{"unknown environment", NewTwilioCredential{Environment: "prod"}, "environment"},
		{"a key without its AC", NewTwilioCredential{APIKey: true}, "accountSid"},
		{"a key of an SK", NewTwilioCredential{APIKey: true, AccountSid: key.Sid}, "accountSid"},
		{"a key in the other environment", NewTwilioCredential{APIKey: true, AccountSid: ac.Sid, Environment: "test"}, "environment"},
		{"an AC with a parent", NewTwilioCredential{Environment: "test", AccountSid: ac.Sid}, "accountSid"},
		{"a control character", NewTwilioCredential{Environment: "test", Name: "a\x00b"}, "name"},
	}
	for _, r := range refused {
		_, err := s.CreateTwilioCredential(ctx, dev, "", r.in)
		if v, ok := domain.IsValidation(err); !ok || v.Fields[0].Field != r.field {
			t.Errorf("%s: %v, want a validation error on %s", r.name, err, r.field)
		}
	}

	// Another account sees nothing of A's, reaches nothing by SID, and
	// cannot hang a key on A's account SID.
	if list, err := s.TwilioCredentials(ctx, other, ""); err != nil || len(list) != 0 {
		t.Fatalf("B lists %+v (%v)", list, err)
	}
	if _, err := s.TwilioCredential(ctx, other, "", ac.Sid); !errors.Is(err, ErrNotFound) {
		t.Fatalf("B reads A's sid: %v, want ErrNotFound", err)
	}
	if err := s.RemoveTwilioCredential(ctx, other, "", ac.Sid); !errors.Is(err, ErrNotFound) {
		t.Fatalf("B removes A's sid: %v, want ErrNotFound", err)
	}
	if _, err := s.CreateTwilioCredential(ctx, other, "", NewTwilioCredential{APIKey: true, AccountSid: ac.Sid}); err == nil {
		t.Fatal("B made a key acting for A's account SID")
	}
	if _, err := s.TwilioCredentials(ctx, other, "acc_a"); !errors.Is(err, ErrForbidden) {
		t.Fatalf("B names A's account: %v, want ErrForbidden", err)
	}

	viewer := Actor{UserID: "usr_v", Role: user.Viewer, AccountID: "acc_a"}
	if _, err := s.CreateTwilioCredential(ctx, viewer, "", NewTwilioCredential{Environment: "test"}); !errors.Is(err, ErrForbidden) {
		t.Fatalf("a viewer creates: %v, want ErrForbidden", err)
	}
	if _, err := s.TwilioCredentials(ctx, viewer, ""); !errors.Is(err, ErrForbidden) {
		t.Fatalf("a viewer lists: %v, want ErrForbidden", err)
	}
	if err := s.RemoveTwilioCredential(ctx, viewer, "", ac.Sid); !errors.Is(err, ErrForbidden) {
		t.Fatalf("a viewer removes: %v, want ErrForbidden", err)
	}
	if len(f.creds) != 2 {
		t.Fatalf("%d credentials stored after the refusals, want 2", len(f.creds))
	}

	if err := s.RemoveTwilioCredential(ctx, dev, "", key.Sid); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TwilioCredential(ctx, dev, "", key.Sid); !errors.Is(err, ErrNotFound) {
		t.Fatalf("removed key: %v", err)
	}
}

func TestTwilioCredentialsCapped(t *testing.T) {
	ctx := context.Background()
	f := &twilioOnly{}
	s := New(Config{Store: f, Hasher: cheap})
	dev := Actor{UserID: "usr_a", Role: user.Developer, AccountID: "acc_a"}
	for range MaxTwilioCredentials {
		if _, err := s.CreateTwilioCredential(ctx, dev, "", NewTwilioCredential{Environment: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	var limit *ErrTwilioCredentialLimit
	if _, err := s.CreateTwilioCredential(ctx, dev, "", NewTwilioCredential{Environment: "test"}); !errors.As(err, &limit) ||
		limit.Max != MaxTwilioCredentials {
		t.Fatalf("one more: %v, want ErrTwilioCredentialLimit", err)
	}
	if len(f.creds) != MaxTwilioCredentials {
		t.Fatalf("%d stored", len(f.creds))
	}
	other := Actor{UserID: "usr_b", Role: user.Developer, AccountID: "acc_b"}
	if _, err := s.CreateTwilioCredential(ctx, other, "", NewTwilioCredential{Environment: "live"}); err != nil {
		t.Fatalf("another account's first: %v", err)
	}
}

func lowerHex(s string) string {
	out := []byte(s)
	for i, c := range out {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			out[i] = '?'
		}
	}
	return string(out)
}
