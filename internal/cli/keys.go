package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/template"
	"github.com/msgsvc/msgsvc/internal/user"
)

var keyCreate = adminCommand{name: "key create", summary: "make an API key; the key is printed this once", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		env := fs.String("env", "test", "test or live")
		name := fs.String("name", "", "a label for the key, e.g. the system that uses it")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			k, rec, err := in.manage().CreateKey(ctx, manage.Console, *account, *env, *name)
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"key": k.Secret, "id": rec.ID, "accountId": rec.AccountID, "env": rec.Env, "prefix": rec.Prefix},
				fmt.Sprintf("%s key %s created for %s (shown only now):\n%s\n", rec.Env, rec.ID, rec.AccountID, k.Secret), nil
		}
	}}

var keyList = adminCommand{name: "key list", summary: "an account's API keys (never the keys themselves)", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		return func(ctx context.Context, in adminInput) (any, string, error) {
			keys, err := in.manage().Keys(ctx, manage.Console, *account)
			if err != nil {
				return nil, "", err
			}
			out := []map[string]any{}
			var b strings.Builder
			for _, k := range keys {
				out = append(out, map[string]any{"id": k.ID, "prefix": k.Prefix, "environment": k.Env, "name": k.Name,
					"createdAt": stamp(k.CreatedAt), "lastUsedAt": stamp(k.LastUsedAt), "revokedAt": stamp(k.RevokedAt)})
				state := "active"
				if !k.RevokedAt.IsZero() {
					state = "revoked " + k.RevokedAt.Format(time.DateOnly)
				}
				fmt.Fprintf(&b, "%s  %s…  %-4s  %s  %s  %s\n", k.ID, k.Prefix, k.Env, k.CreatedAt.Format(time.DateOnly), state, k.Name)
			}
			return map[string]any{"keys": out}, b.String(), nil
		}
	}}

var keyRevoke = adminCommand{name: "key revoke", summary: "revoke an API key: its next request is refused", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		keyID := fs.String("id", "", "the key's id (key_…, from msgsvc key list)")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			if err := in.manage().RevokeKey(ctx, manage.Console, *account, *keyID); err != nil {
				if errors.Is(err, domain.ErrNotFound) {
					return nil, "", fmt.Errorf("no active key %q in account %s; msgsvc key list shows the keys", *keyID, *account)
				}
				return nil, "", err
			}
			return map[string]any{"id": *keyID, "revokedAt": stamp(in.now)}, fmt.Sprintf("key %s revoked\n", *keyID), nil
		}
	}}

// stamp is a time as the API shows it, or nil when zero.
func stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return domain.FormatTime(t)
}

var creditsAdd = adminCommand{name: "credits add", summary: "top up (or, negative, deduct) an account's credits", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		amount := fs.Float64("amount", 0, "credits to add (negative to deduct)")
		note := fs.String("note", "", "why, for the ledger")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			bal, err := in.manage().TopUp(ctx, manage.Console, *account, *amount, *note)
			if err != nil {
				return nil, "", fmt.Errorf("credits for %s: %w", *account, err)
			}
			return map[string]any{"accountId": *account, "amount": *amount, "balance": ledger.Credits(bal)},
				fmt.Sprintf("balance of %s is now %v\n", *account, ledger.Credits(bal)), nil
		}
	}}

var userCreate = adminCommand{name: "user create", summary: "add a panel user (or, with --operator, an operator); the password is generated unless given",
	flags: func(fs *flag.FlagSet, _ *string) adminRun {
		account := fs.String("account", "", "the user's account (acc_…); not with --operator")
		email := fs.String("email", "", "login email (required)")
		role := fs.String("role", "developer", "owner, admin, developer or viewer")
		op := fs.Bool("operator", false, "an operator: no account, approves limit requests, tops up credits, sees every account")
		pwStdin := fs.Bool("password-stdin", false, "read the password from standard input (else one is generated)")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			if *op == (*account != "") {
				return nil, "", errors.New("give --account ID for an account's user, or --operator (and no --account) for an operator")
			}
			if *op {
				*role = user.Operator
			}
			pw := ""
			if *pwStdin {
				var err error
				if pw, err = readPassword(in.stdin); err != nil {
					return nil, "", err
				}
			}
			u, password, err := in.manage().CreateUser(ctx, manage.Console, manage.NewUser{AccountID: *account, Email: *email, Role: *role,
				Password: pw})
			if err != nil {
				return nil, "", err
			}
			res := map[string]any{"id": u.ID, "accountId": u.AccountID, "email": u.Email, "role": u.Role}
			if u.AccountID == "" {
				res["accountId"] = nil
			}
			human := fmt.Sprintf("user %s (%s) created\n", u.Email, u.Role)
			if !*pwStdin {
				res["password"] = password
				human += "password (shown only now): " + password + "\n"
			}
			return res, human, nil
		}
	}}

func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("read password: %w", err)
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", fmt.Errorf("empty password on standard input")
	}
	return pw, nil
}

var templateCreate = adminCommand{name: "template create", summary: "add an approved WhatsApp template", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		name := fs.String("name", "", "template name: lower-case letters, digits and _ (required)")
		language := fs.String("language", "en", "language code, e.g. en or pt_BR")
		category := fs.String("category", "", "MARKETING, UTILITY or AUTHENTICATION (required)")
		status := fs.String("status", template.Approved, "review status: APPROVED, PENDING or REJECTED")
		body := fs.String("body", "", "text with {{1}}, {{2}}, … placeholders (required)")
		params := fs.String("parameters", "", "comma-separated labels of the placeholders (default {{1}}, {{2}}, …)")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			var labels []string
			if *params != "" {
				for _, l := range strings.Split(*params, ",") {
					labels = append(labels, strings.TrimSpace(l))
				}
			}
			if _, err := in.st.Account(ctx, *account); err != nil {
				return nil, "", fmt.Errorf("account %s: %w", *account, err)
			}
			t, err := template.New(in.st, nil).Create(ctx, *account, template.NewTemplate{Name: *name, Language: *language,
				Category: *category, Status: *status, Body: *body, Parameters: labels})
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"accountId": *account, "name": t.Name, "language": t.Language, "category": t.Category,
					"status": t.Status, "body": t.Body, "parameters": t.Parameters},
				fmt.Sprintf("template %s (%s) created for %s, %s, %d parameters\n", t.Name, t.Language, *account, t.Status,
					len(t.Parameters)), nil
		}
	}}

var senderAdd = adminCommand{name: "sender add", summary: "approve a sender ID or number for a channel", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		channel := fs.String("channel", "SMS", "SMS, WHATSAPP or RCS")
		value := fs.String("value", "", "SMS: a sender ID (1-11 letters, digits, spaces) or a number; WhatsApp: the business number; RCS: the agent id")
		def := fs.Bool("default", false, "use it when a send names no sender")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			sd, err := in.manage().AddSender(ctx, manage.Console, *account, manage.NewSender{Channel: strings.ToUpper(*channel), Value: *value,
				Default: *def})
			if errors.Is(err, manage.ErrSenderTaken) {
				return nil, "", fmt.Errorf("%s %s is approved for another account already; msgsvc sender list --account ID shows whose", strings.ToUpper(*channel), *value)
			}
			if err != nil {
				return nil, "", err
			}
			return senderJSON(sd), fmt.Sprintf("sender %s (%s %s) approved for %s\n", sd.ID, sd.Channel, sd.Value, *account), nil
		}
	}}

var senderRemove = adminCommand{name: "sender remove", summary: "withdraw an approved sender", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		sid := fs.String("id", "", "the sender's id (snd_…, from msgsvc sender list)")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			if err := in.manage().RemoveSender(ctx, manage.Console, *account, *sid); err != nil {
				if errors.Is(err, domain.ErrNotFound) {
					return nil, "", fmt.Errorf("no sender %q in account %s; msgsvc sender list shows them", *sid, *account)
				}
				return nil, "", err
			}
			return map[string]any{"id": *sid, "removed": true}, fmt.Sprintf("sender %s removed\n", *sid), nil
		}
	}}

var senderList = adminCommand{name: "sender list", summary: "an account's senders and sender requests", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		return func(ctx context.Context, in adminInput) (any, string, error) {
			list, err := in.manage().Senders(ctx, manage.Console, *account)
			if err != nil {
				return nil, "", err
			}
			out := []map[string]any{}
			var b strings.Builder
			for _, sd := range list {
				out = append(out, senderJSON(sd))
				def := ""
				if sd.Default {
					def = "  (default)"
				}
				fmt.Fprintf(&b, "%s  %-8s %-8s %s%s\n", sd.ID, sd.Channel, sd.Status, sd.Value, def)
			}
			return map[string]any{"senders": out}, b.String(), nil
		}
	}}

func senderJSON(sd domain.Sender) map[string]any {
	return map[string]any{"id": sd.ID, "channel": sd.Channel, "value": sd.Value, "default": sd.Default, "status": sd.Status,
		"createdAt": stamp(sd.CreatedAt)}
}
