package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

var accountSuspend = adminCommand{name: "account suspend", operand: "ID",
	summary: "suspend an account and its subtree: requests refused, binds closed, queued and scheduled messages held",
	flags: func(*flag.FlagSet, *string) adminRun {
		return suspension(func(ctx context.Context, m *manage.Service, id string) (domain.Account, error) {
			return m.SuspendAccount(ctx, manage.Console, id)
		})
	}}

var accountResume = adminCommand{name: "account resume", operand: "ID",
	summary: "resume an account suspended with account suspend: its held messages go out",
	flags: func(*flag.FlagSet, *string) adminRun {
		return suspension(func(ctx context.Context, m *manage.Service, id string) (domain.Account, error) {
			return m.ResumeAccount(ctx, manage.Console, id)
		})
	}}

func suspension(act func(ctx context.Context, m *manage.Service, id string) (domain.Account, error)) adminRun {
	return func(ctx context.Context, in adminInput) (any, string, error) {
		a, err := act(ctx, in.manage(), in.operand)
		if errors.Is(err, domain.ErrNotFound) {
			return nil, "", fmt.Errorf("no account %q", in.operand)
		}
		if err != nil {
			return nil, "", err
		}
		out := map[string]any{"id": a.ID, "parentId": a.ParentID, "suspended": a.Suspended(), "suspendedBy": a.SuspendedBy,
			"suspendedAt": nil}
		human := fmt.Sprintf("account %s is not suspended\n", a.ID)
		if a.Suspended() {
			out["suspendedAt"] = domain.FormatTime(a.SuspendedAt)
			human = fmt.Sprintf("account %s suspended since %s by %s\n", a.ID, domain.FormatTime(a.SuspendedAt), a.SuspendedBy)
		}
		return out, human, nil
	}
}
