package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/domain"
)

// unchanged is the default of a text flag that was not given (an empty
// value is meaningful: it clears the setting).
const unchanged = "\x00unchanged"

// complianceFlags adds the compliance settings to "account settings" and
// returns what reads those given, checked and normalised
// (compliance.CheckSettings) but not stored, so that a bad value of any
// flag changes nothing; changed is false when none was given.
func complianceFlags(fs *flag.FlagSet) func(a domain.Account) (c domain.Compliance, changed bool, err error) {
	quiet := fs.String("quiet-hours", unchanged, `quiet hours in the recipient's local time, e.g. 21:00-08:00; "" or off for none`)
	retention := fs.Int("retention-days", -1, "erase message text and hash phone numbers after this many days; 0 keeps them")
	optOutReply := fs.String("opt-out-reply", unchanged, `confirmation sent back to a number that answers a stop word; "" sends none`)
	optInReply := fs.String("opt-in-reply", unchanged, `confirmation sent back to a number that answers a start word; "" sends none`)
	return func(a domain.Account) (domain.Compliance, bool, error) {
		c, changed := a.Compliance, false
		for _, f := range []struct {
			v   string
			dst *string
		}{{*quiet, &c.QuietHours}, {*optOutReply, &c.OptOutReply}, {*optInReply, &c.OptInReply}} {
			if f.v != unchanged {
				*f.dst, changed = f.v, true
			}
		}
		if *retention >= 0 {
			c.RetentionDays, changed = *retention, true
		}
		if !changed {
			return c, false, nil
		}
		c, err := compliance.CheckSettings(c)
		return c, true, err
	}
}

// optOutFlags are the flags of the opt-out commands.
func optOutFlags(fs *flag.FlagSet) (env, phone *string) {
	return fs.String("env", "live", "test or live: opt-outs are per environment"),
		fs.String("phone", "", "the number, digits only, country code first")
}

func optOutEnv(v string) (domain.Environment, error) {
	env, err := domain.ParseEnvironment(v)
	if err != nil {
		return "", errors.New("--env must be test or live")
	}
	return env, nil
}

func optOutJSON(o domain.OptOut) map[string]any {
	var ch any
	if o.Channel != "" {
		ch = o.Channel
	}
	return map[string]any{"phone": o.Phone, "environment": o.Env, "channel": ch, "source": o.Source, "createdAt": stamp(o.CreatedAt)}
}

// optOutCommand is an optout command: the flags they share, the
// environment checked, and the opt-out list of the account at the
// command's time.
func optOutCommand(name, summary string, run func(ctx context.Context, o *compliance.OptOuts, account string, env domain.Environment,
	phone string) (any, string, error)) adminCommand {
	return adminCommand{name: name, summary: summary, needsAccount: true,
		flags: func(fs *flag.FlagSet, account *string) adminRun {
			env, phone := optOutFlags(fs)
			return func(ctx context.Context, in adminInput) (any, string, error) {
				e, err := optOutEnv(*env)
				if err != nil {
					return nil, "", err
				}
				o := &compliance.OptOuts{Store: in.st, Now: func() time.Time { return in.now }}
				return run(ctx, o, *account, e, *phone)
			}
		}}
}

var optOutList = optOutCommand("optout list", "the numbers that opted out of an account's messages",
	func(ctx context.Context, o *compliance.OptOuts, account string, e domain.Environment, _ string) (any, string, error) {
		out := []map[string]any{}
		var b strings.Builder
		for cursor := ""; ; {
			p, err := o.List(ctx, account, e, cursor, 1000)
			if err != nil {
				return nil, "", err
			}
			for _, r := range p.OptOuts {
				out = append(out, optOutJSON(r))
				fmt.Fprintf(&b, "%s  %-4s  %-8s  %-8s  %s\n", r.Phone, r.Env, orDash(string(r.Channel)), r.Source, domain.FormatTime(r.CreatedAt))
			}
			if cursor = p.Next; cursor == "" {
				break
			}
		}
		if len(out) == 0 {
			b.WriteString("nobody opted out\n")
		}
		return map[string]any{"optOuts": out}, b.String(), nil
	})

var optOutAdd = optOutCommand("optout add", "opt a number out of an account's messages",
	func(ctx context.Context, o *compliance.OptOuts, account string, e domain.Environment, phone string) (any, string, error) {
		rec, added, err := o.Add(ctx, account, e, phone, domain.OptOutOperator)
		if err != nil {
			return nil, "", fmt.Errorf("--phone: %w", err)
		}
		human := fmt.Sprintf("%s opted out of %s's %s messages\n", rec.Phone, account, e)
		if !added {
			human = fmt.Sprintf("%s was already opted out (since %s)\n", rec.Phone, domain.FormatTime(rec.CreatedAt))
		}
		out := optOutJSON(rec)
		out["added"] = added
		return out, human, nil
	})

var optOutRemove = optOutCommand("optout remove", "opt a number back in",
	func(ctx context.Context, o *compliance.OptOuts, account string, e domain.Environment, phone string) (any, string, error) {
		removed, err := o.Remove(ctx, account, e, phone)
		if err != nil {
			return nil, "", fmt.Errorf("--phone: %w", err)
		}
		human := fmt.Sprintf("%s may receive %s's %s messages again\n", phone, account, e)
		if !removed {
			human = fmt.Sprintf("%s was not opted out\n", phone)
		}
		return map[string]any{"phone": phone, "environment": e, "removed": removed}, human, nil
	})

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
