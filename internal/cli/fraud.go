package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// fraudTarget are the flags naming whose fraud rules a command works on:
// one account's, or the operator's defaults.
func fraudTarget(fs *flag.FlagSet) func() (account string, defaults bool, err error) {
	account := fs.String("account", "", "account id (acc_…)")
	defaults := fs.Bool("default", false, "the operator's default rules instead of an account's")
	return func() (string, bool, error) {
		if (*account == "") == !*defaults {
			return "", false, errors.New("give --account ID or --default (one of them)")
		}
		return *account, *defaults, nil
	}
}

var fraudSet = adminCommand{name: "fraud set", ownJSON: true,
	summary: `replace an account's fraud rules (or the defaults) with a JSON body as PUT /api/v1/manage/fraud takes it, from --json FILE or standard input`,
	flags: func(fs *flag.FlagSet, _ *string) adminRun {
		target := fraudTarget(fs)
		file := fs.String("json", "", `the rules as JSON, e.g. {"perRecipientHourly": 10, "action": "block"}; "-" or none: standard input`)
		return func(ctx context.Context, in adminInput) (any, string, error) {
			account, defaults, err := target()
			if err != nil {
				return nil, "", err
			}
			var r io.Reader = in.stdin
			if *file != "" && *file != "-" {
				f, err := os.Open(*file)
				if err != nil {
					return nil, "", fmt.Errorf("--json: %w", err)
				}
				defer f.Close()
				r = f
			}
			var rules domain.FraudRules
			dec := json.NewDecoder(io.LimitReader(r, 1<<20))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&rules); err != nil {
				return nil, "", fmt.Errorf("--json: the rules do not read as JSON of the fraud rules: %w", err)
			}
			out, err := in.manage().SetFraudRules(ctx, manage.Console, account, defaults, rules)
			if err != nil {
				return nil, "", err
			}
			return fraudJSON(out), "", nil
		}
	}}

var fraudShow = adminCommand{name: "fraud show", ownJSON: true,
	summary: "print an account's fraud rules in force (or the defaults) as JSON",
	flags: func(fs *flag.FlagSet, _ *string) adminRun {
		target := fraudTarget(fs)
		return func(ctx context.Context, in adminInput) (any, string, error) {
			account, defaults, err := target()
			if err != nil {
				return nil, "", err
			}
			out, err := in.manage().FraudRules(ctx, manage.Console, account, defaults)
			if err != nil {
				return nil, "", err
			}
			return fraudJSON(out), "", nil
		}
	}}

// fraudJSON is the rules as the API shows them.
func fraudJSON(r domain.FraudRules) map[string]any {
	trusted := r.Trusted
	if trusted == nil {
		trusted = []string{}
	}
	return map[string]any{"allowedCountries": r.AllowedCountries, "perRecipientHourly": r.PerRecipientHourly,
		"perRangeHourly": r.PerRangeHourly, "burstFactor": r.BurstFactor, "action": r.ActionOr(), "trusted": trusted}
}
