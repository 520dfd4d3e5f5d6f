package manage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/user"
)

// smppOnly fakes accounts and SMPP users; the embedded Store is nil.
type smppOnly struct {
	Store
	users []domain.SMPPUser
}

func (f *smppOnly) Account(_ context.Context, id string) (domain.Account, error) {
	return domain.Account{ID: id}, nil
}

func (f *smppOnly) SMPPUsers(_ context.Context, accountID string) ([]domain.SMPPUser, error) {
	return ofAccount(f.users, accountID, func(u domain.SMPPUser) string { return u.AccountID }), nil
}

func (f *smppOnly) CreateSMPPUser(_ context.Context, u domain.SMPPUser) error {
	f.users = append(f.users, u)
	return nil
}

var cheap = user.Hasher{Time: 1, Memory: 64, Threads: 1}

// An account may hold only so many SMPP users; another is refused with
// ErrSMPPUserLimit before any password is hashed.
func TestSMPPUsersCapped(t *testing.T) {
	ctx := context.Background()
	f := &smppOnly{}
	s := New(Config{Store: f, Hasher: cheap, MaxSMPPUsers: 3})
	dev := Actor{UserID: "usr_a", Role: user.Developer, AccountID: "acc_a"}
	for range 3 {
		if _, _, err := s.CreateSMPPUser(ctx, dev, "", NewSMPPUser{Environment: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	var limit *ErrSMPPUserLimit
	if _, _, err := s.CreateSMPPUser(ctx, dev, "", NewSMPPUser{Environment: "test"}); !errors.As(err, &limit) || limit.Max != 3 {
		t.Fatalf("a fourth SMPP user: %v, want ErrSMPPUserLimit{3}", err)
	}
	if len(f.users) != 3 {
		t.Fatalf("%d users stored", len(f.users))
	}
	other := Actor{UserID: "usr_b", Role: user.Developer, AccountID: "acc_b"}
	if _, _, err := s.CreateSMPPUser(ctx, other, "", NewSMPPUser{Environment: "live"}); err != nil {
		t.Fatalf("another account's first: %v", err)
	}
	if DefaultMaxSMPPUsers <= 0 || New(Config{Store: f}).maxSMPPUsers != DefaultMaxSMPPUsers {
		t.Fatal("no default cap")
	}
}

// Making an SMPP user hashes its password in one of the shared hashing
// slots: with every slot taken, it waits, and gives up with ErrThrottled
// when its context ends, storing nothing.
func TestSMPPUserCreationTakesAHashingSlot(t *testing.T) {
	f := &smppOnly{}
	slots := user.NewSlots(1)
	s := New(Config{Store: f, Hasher: cheap, Slots: slots})
	dev := Actor{UserID: "usr_a", Role: user.Developer, AccountID: "acc_a"}
	if !slots.Acquire(context.Background(), time.Second) {
		t.Fatal("no slot")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := s.CreateSMPPUser(ctx, dev, "", NewSMPPUser{Environment: "test"}); err == nil {
		t.Fatal("made an SMPP user with every hashing slot taken")
	} else if _, ok := IsThrottled(err); !ok {
		t.Fatalf("with every slot taken: %v, want ErrThrottled", err)
	}
	if len(f.users) != 0 {
		t.Fatal("a user was stored")
	}
	slots.Release()
	if _, _, err := s.CreateSMPPUser(context.Background(), dev, "", NewSMPPUser{Environment: "test"}); err != nil {
		t.Fatalf("with a slot free: %v", err)
	}
}
