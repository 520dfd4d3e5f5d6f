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

var twilioCredentialCreate = adminCommand{name: "twilio-credentials create",
	summary: "make a Twilio account SID and auth token (or --api-key: an API key); the secret is printed this once", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		env := fs.String("env", "", "test or live (required for an account SID; an API key takes its parent's)")
		apiKey := fs.Bool("api-key", false, "make an API key (SK…) acting for --parent instead of an account SID")
		parent := fs.String("parent", "", "with --api-key: the account SID (AC…) the key acts for")
		name := fs.String("name", "", "a label, e.g. the system that uses it")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			if !*apiKey && *parent != "" {
				return nil, "", errors.New("--parent is for an API key: add --api-key")
			}
			if *apiKey && *parent == "" {
				return nil, "", errors.New("--api-key needs --parent AC…, the account SID the key acts for (msgsvc twilio-credentials list)")
			}
			if !*apiKey && *env == "" {
				return nil, "", errors.New("--env is required: test or live")
			}
			c, err := in.manage().CreateTwilioCredential(ctx, manage.Console, *account,
				manage.NewTwilioCredential{Environment: *env, APIKey: *apiKey, AccountSid: *parent, Name: *name})
			if err != nil {
				return nil, "", err
			}
			if c.Kind == domain.TwilioAPIKey {
				return map[string]any{"sid": c.Sid, "secret": c.Secret, "accountSid": c.Parent, "environment": c.Env},
					fmt.Sprintf("%s API key created for %s, acting for %s (secret shown only now):\nsid     %s\nsecret  %s\n",
						c.Env, c.AccountID, c.Parent, c.Sid, c.Secret), nil
			}
			return map[string]any{"accountSid": c.Sid, "authToken": c.Secret, "environment": c.Env},
				fmt.Sprintf("%s Twilio account SID created for %s (auth token shown only now):\naccount SID  %s\nauth token   %s\n",
					c.Env, c.AccountID, c.Sid, c.Secret), nil
		}
	}}

var twilioCredentialList = adminCommand{name: "twilio-credentials list",
	summary: "an account's Twilio account SIDs and API keys (never their secrets)", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		return func(ctx context.Context, in adminInput) (any, string, error) {
			list, err := in.manage().TwilioCredentials(ctx, manage.Console, *account)
			if err != nil {
				return nil, "", err
			}
			out := []map[string]any{}
			var b strings.Builder
			for _, c := range list {
				kind, accountSid := "accountSid", c.Sid
				if c.Kind == domain.TwilioAPIKey {
					kind, accountSid = "apiKey", c.Parent
				}
				out = append(out, map[string]any{"sid": c.Sid, "kind": kind, "accountSid": accountSid, "environment": c.Env,
					"name": c.Name, "createdAt": stamp(c.CreatedAt)})
				of := ""
				if c.Kind == domain.TwilioAPIKey {
					of = "key of " + c.Parent
				}
				fmt.Fprintf(&b, "%s  %-4s  %s  %s  %s\n", c.Sid, c.Env, c.CreatedAt.Format(time.DateOnly), of, c.Name)
			}
			return map[string]any{"twilioCredentials": out}, b.String(), nil
		}
	}}

var twilioCredentialRemove = adminCommand{name: "twilio-credentials remove", operand: "SID",
	summary: "remove an account SID (with its API keys) or an API key: its next request is refused", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		return func(ctx context.Context, in adminInput) (any, string, error) {
			if err := in.manage().RemoveTwilioCredential(ctx, manage.Console, *account, in.operand); err != nil {
				if errors.Is(err, domain.ErrNotFound) {
					return nil, "", fmt.Errorf("no Twilio credential %q in account %s; msgsvc twilio-credentials list shows them", in.operand, *account)
				}
				return nil, "", err
			}
			return map[string]any{"sid": in.operand, "removed": true}, fmt.Sprintf("Twilio credential %s removed\n", in.operand), nil
		}
	}}
