package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

var smppUserCreate = adminCommand{name: "smpp-user create",
	summary: "make an SMPP user of an account; the password is printed this once", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		env := fs.String("env", "test", "test or live")
		systemID := fs.String("system-id", "", "the bind's system_id, at most 15 characters (default: generated)")
		maxBinds := fs.Int("max-binds", manage.DefaultMaxBinds, "most binds open at once")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			u, pw, err := in.manage().CreateSMPPUser(ctx, manage.Console, *account,
				manage.NewSMPPUser{Environment: *env, SystemID: *systemID, MaxBinds: *maxBinds})
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"id": u.ID, "systemId": u.SystemID, "password": pw, "accountId": u.AccountID,
					"environment": u.Env, "maxBinds": u.MaxBinds},
				fmt.Sprintf("%s SMPP user %s created for %s (password shown only now):\nsystem_id %s\npassword  %s\n",
					u.Env, u.ID, u.AccountID, u.SystemID, pw), nil
		}
	}}

var smppUserList = adminCommand{name: "smpp-user list", summary: "an account's SMPP users (never their passwords)", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		return func(ctx context.Context, in adminInput) (any, string, error) {
			users, err := in.manage().SMPPUsers(ctx, manage.Console, *account)
			if err != nil {
				return nil, "", err
			}
			out := []map[string]any{}
			var b strings.Builder
			for _, u := range users {
				out = append(out, map[string]any{"id": u.ID, "systemId": u.SystemID, "environment": u.Env,
					"maxBinds": u.MaxBinds, "createdAt": stamp(u.CreatedAt)})
				fmt.Fprintf(&b, "%s  %-15s  %-4s  max %d binds  %s\n", u.ID, u.SystemID, u.Env, u.MaxBinds,
					u.CreatedAt.Format(time.DateOnly))
			}
			return map[string]any{"smppUsers": out}, b.String(), nil
		}
	}}

var smppUserRemove = adminCommand{name: "smpp-user remove", summary: "remove an SMPP user: its binds are closed", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		userID := fs.String("id", "", "the user's id (smu_…, from msgsvc smpp-user list)")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			if err := in.manage().RemoveSMPPUser(ctx, manage.Console, *account, *userID); err != nil {
				if errors.Is(err, domain.ErrNotFound) {
					return nil, "", fmt.Errorf("no SMPP user %q in account %s; msgsvc smpp-user list shows them", *userID, *account)
				}
				return nil, "", err
			}
			return map[string]any{"id": *userID, "removed": true}, fmt.Sprintf("SMPP user %s removed\n", *userID), nil
		}
	}}
