package manage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/user"
)

// treeOnly fakes accounts in a tree and records suspensions; the
// embedded Store is nil.
type treeOnly struct {
	Store
	accounts map[string]domain.Account
	calls    []string
}

func (f *treeOnly) Account(_ context.Context, id string) (domain.Account, error) {
	a, ok := f.accounts[id]
	if !ok {
		return a, domain.ErrNotFound
	}
	return a, nil
}

func (f *treeOnly) SuspendSubtree(_ context.Context, id string, at time.Time) error {
	f.calls = append(f.calls, "suspend "+id)
	a := f.accounts[id]
	a.SuspendedAt, a.SuspendedBy = at, id
	f.accounts[id] = a
	return nil
}

func (f *treeOnly) ResumeSubtree(_ context.Context, id string) error {
	f.calls = append(f.calls, "resume "+id)
	a := f.accounts[id]
	a.SuspendedAt, a.SuspendedBy = time.Time{}, ""
	f.accounts[id] = a
	return nil
}

// TestSuspendWhoMay: a child is suspended and resumed by its parent's
// owner or admin, or an operator; a lesser role of the parent is
// forbidden; a sibling, another tree, the grandparent's users, the child
// itself and a child reaching for its parent find nothing; and a suspended
// account's own users are refused as suspended.
func TestSuspendWhoMay(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	f := &treeOnly{accounts: map[string]domain.Account{
		"acc_top": {ID: "acc_top", Reseller: true},
		"acc_r":   {ID: "acc_r", ParentID: "acc_top", Reseller: true},
		"acc_c":   {ID: "acc_c", ParentID: "acc_r"},
		"acc_sib": {ID: "acc_sib", ParentID: "acc_r"},
		"acc_o":   {ID: "acc_o", Reseller: true},
		"acc_oc":  {ID: "acc_oc", ParentID: "acc_o"},
	}}
	s := New(Config{Store: f, Now: func() time.Time { return now }})
	as := func(role, account string) Actor {
		return Actor{UserID: "usr_" + account + role, Role: role, AccountID: account}
	}
	for _, tc := range []struct {
		name    string
		actor   Actor
		target  string
		wantErr error
	}{
		{"the parent's owner", as(user.Owner, "acc_r"), "acc_c", nil},
		{"the parent's admin", as(user.Admin, "acc_r"), "acc_sib", nil},
		{"an operator", Console, "acc_oc", nil},
		{"an operator, a top account", Console, "acc_o", nil},
		{"the parent's developer", as(user.Developer, "acc_r"), "acc_c", ErrForbidden},
		{"a sibling", as(user.Owner, "acc_sib"), "acc_c", ErrNotFound},
		{"the account itself", as(user.Owner, "acc_c"), "acc_c", ErrNotFound},
		{"a child reaching for its parent", as(user.Owner, "acc_c"), "acc_r", ErrNotFound},
		{"the grandparent", as(user.Owner, "acc_top"), "acc_c", ErrNotFound},
		{"another tree's reseller", as(user.Owner, "acc_o"), "acc_c", ErrNotFound},
		{"an unknown id", as(user.Owner, "acc_r"), "acc_nope", ErrNotFound},
		{"an operator, an unknown id", Console, "acc_nope", ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.calls = nil
			got, err := s.SuspendAccount(ctx, tc.actor, tc.target)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("suspend: %v, want %v", err, tc.wantErr)
				}
				if _, err := s.ResumeAccount(ctx, tc.actor, tc.target); !errors.Is(err, tc.wantErr) {
					t.Fatalf("resume: %v, want %v", err, tc.wantErr)
				}
				if len(f.calls) != 0 {
					t.Fatalf("refused, yet the store was called: %v", f.calls)
				}
				return
			}
			if err != nil || !got.SuspendedAt.Equal(now) || got.SuspendedBy != tc.target {
				t.Fatalf("suspend: %+v, %v", got, err)
			}
			got, err = s.ResumeAccount(ctx, tc.actor, tc.target)
			if err != nil || got.Suspended() {
				t.Fatalf("resume: %+v, %v", got, err)
			}
		})
	}

	// A suspended account's users are refused, their own actions included;
	// its parent's are not.
	if _, err := s.SuspendAccount(ctx, as(user.Owner, "acc_r"), "acc_c"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.account(ctx, as(user.Viewer, "acc_c"), "", user.Viewer); !errors.Is(err, ErrSuspended) {
		t.Fatalf("a suspended account's user: %v, want ErrSuspended", err)
	}
	if _, err := s.account(ctx, as(user.Viewer, "acc_r"), "", user.Viewer); err != nil {
		t.Fatalf("the parent's user: %v", err)
	}
	r := f.accounts["acc_r"]
	r.SuspendedAt, r.SuspendedBy = now, "acc_top"
	f.accounts["acc_r"] = r
	if _, err := s.ResumeAccount(ctx, as(user.Owner, "acc_r"), "acc_c"); !errors.Is(err, ErrSuspended) {
		t.Fatalf("a suspended parent resuming its child: %v, want ErrSuspended", err)
	}
}
