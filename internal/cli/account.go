package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
)

var accountCreate = adminCommand{name: "account create", summary: "create an account; prints its id and webhook secret",
	flags: func(fs *flag.FlagSet, _ *string) adminRun {
		name := fs.String("name", "", "account name (required)")
		tier := fs.String("tier", "free", "free, basic, pro or enterprise")
		credits := fs.Float64("credits", 0, "opening credits")
		currency := fs.String("currency", "USD", "currency code")
		country := fs.String("country", "1", "home country calling code, used for pricing")
		reseller := fs.Bool("reseller", false, "let the account create children of its own (sub-accounts)")
		parent := fs.String("parent", "", "create the account under this reseller (its currency; --credits moved from the parent)")
		plan := fs.String("plan", "", "the price plan it sells at (default: the default plan, if one is set; not for a reseller's child)")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			a, err := bootstrap.CreateAccount(ctx, in.st, bootstrap.NewAccount{Name: *name, Tier: *tier, Credits: *credits, Currency: *currency,
				Country: *country, Reseller: *reseller, ParentID: *parent, PricePlan: *plan}, in.now)
			if err != nil {
				return nil, "", err
			}
			kind := "account"
			if a.Reseller {
				kind = "reseller account"
			}
			under := ""
			if a.ParentID != "" {
				under = " under " + a.ParentID
			}
			return accountJSON(a), fmt.Sprintf("%s %s created%s (tier %s, balance %v %s)\nwebhook signing secret: %s\n",
				kind, a.ID, under, a.Tier, ledger.Credits(a.Balance), a.Currency, a.WebhookSecret), nil
		}
	}}

var accountLimits = adminCommand{name: "account limits", summary: "set an account's rate limits (0 = unlimited)", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		tierRPM := fs.Int("tier-rpm", -1, "tier requests per minute (0 = unlimited)")
		sendRPM := fs.Int("send-rpm", -1, "sending requests per minute (0 = unlimited)")
		statusRPM := fs.Int("status-rpm", -1, "status queries per minute (0 = unlimited)")
		mediaRPM := fs.Int("media-rpm", -1, "media uploads per minute (0 = unlimited)")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			a, err := in.st.Account(ctx, *account)
			if err != nil {
				return nil, "", fmt.Errorf("account %s: %w", *account, err)
			}
			l := a.Limits
			for _, f := range []struct {
				v   int
				dst *int
			}{{*tierRPM, &l.TierRPM}, {*sendRPM, &l.SendRPM}, {*statusRPM, &l.StatusRPM}, {*mediaRPM, &l.MediaRPM}} {
				if f.v >= 0 {
					*f.dst = f.v
				}
			}
			if err := in.st.SetLimits(ctx, a.ID, l); err != nil {
				return nil, "", err
			}
			a.Limits = l
			return accountJSON(a), fmt.Sprintf("limits of %s: tier %d/min, sending %d/min, status %d/min, media %d/min (0 = unlimited)\n",
				a.ID, l.TierRPM, l.SendRPM, l.StatusRPM, l.MediaRPM), nil
		}
	}}

var accountSettings = adminCommand{name: "account settings",
	summary: "RCS fallback default, WhatsApp quality tier, IP allow-list, quiet hours, retention, opt-out replies", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		rcsFallback := config.Switch(fs, "rcs-fallback", "", "send RCS to devices without RCS as SMS by default (--rcs-fallback=false turns it off; unchanged when not given)")
		waTier := fs.Int("wa-tier", 0, "WhatsApp quality tier 1-4 (daily new conversations 1000, 10000, 100000, unlimited)")
		allowlist := fs.String("ip-allowlist", "-", "comma-separated addresses and CIDR ranges allowed to use the API; empty allows all")
		complianceOf := complianceFlags(fs)
		return func(ctx context.Context, in adminInput) (any, string, error) {
			a, err := in.st.Account(ctx, *account)
			if err != nil {
				return nil, "", fmt.Errorf("account %s: %w", *account, err)
			}
			settings, complianceChanged, err := complianceOf(a)
			if err != nil {
				return nil, "", err
			}
			if *rcsFallback != "" {
				if a.RCSFallback, err = strconv.ParseBool(*rcsFallback); err != nil {
					return nil, "", fmt.Errorf("--rcs-fallback must be true or false")
				}
			}
			if *waTier != 0 {
				if *waTier < 1 || *waTier > 4 {
					return nil, "", fmt.Errorf("--wa-tier must be 1, 2, 3 or 4")
				}
				a.WAQualityTier = *waTier
			}
			if *allowlist != "-" {
				if a.IPAllowlist, err = manage.ParseAllowlist(splitList(*allowlist)); err != nil {
					return nil, "", fmt.Errorf("--ip-allowlist: %w", err)
				}
			}
			if err := in.st.UpdateAccountSettings(ctx, a.ID, a.IPAllowlist, a.RCSFallback, a.WAQualityTier); err != nil {
				return nil, "", err
			}
			if complianceChanged {
				if a.Compliance, err = compliance.SetSettings(ctx, in.st, a.ID, settings); err != nil {
					return nil, "", err
				}
			}
			c := a.Compliance
			return map[string]any{"id": a.ID, "rcsFallback": a.RCSFallback, "waQualityTier": a.WAQualityTier, "ipAllowlist": a.IPAllowlist,
					"quietHours": c.QuietHours, "retentionDays": c.RetentionDays, "optOutReply": c.OptOutReply, "optInReply": c.OptInReply},
				fmt.Sprintf("settings of %s: RCS fallback %v, WhatsApp quality tier %d, IP allow-list %v\n"+
					"quiet hours %q, retention %d days (0 keeps), opt-out reply %q, opt-in reply %q\n",
					a.ID, a.RCSFallback, a.WAQualityTier, a.IPAllowlist, c.QuietHours, c.RetentionDays, c.OptOutReply, c.OptInReply), nil
		}
	}}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

var accountPrices = adminCommand{name: "account prices", summary: "show or set an account's price table", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		prices := fs.String("set", "", `price table in credits, e.g. {"home":{"smsSegment":1},"countries":{"44":{"smsSegment":3}}}; `+
			`rates: smsSegment, rcsMessage, waConversation, waInWindow; "{}" restores the defaults; without it the table is shown`)
		return func(ctx context.Context, in adminInput) (any, string, error) {
			a, err := in.st.Account(ctx, *account)
			if err != nil {
				return nil, "", fmt.Errorf("account %s: %w", *account, err)
			}
			if *prices != "" {
				stored, _, err := ledger.ParsePriceTable([]byte(*prices), a.CountryCode)
				if err != nil {
					return nil, "", err
				}
				if err := in.st.SetPrices(ctx, a.ID, stored); err != nil {
					return nil, "", err
				}
				a.Prices, a.PriceTable = stored, nil
			}
			// What it pays: its plan, if any, under the rates it overrides.
			table, err := a.PriceList()
			if err != nil {
				return nil, "", fmt.Errorf("account %s: %w", a.ID, err)
			}
			shown := ledger.PriceTableJSON(table)
			raw, _ := json.MarshalIndent(shown, "", "  ")
			return map[string]any{"accountId": a.ID, "country": a.CountryCode, "prices": shown},
				fmt.Sprintf("prices of %s (home calling code %s), in credits:\n%s\n", a.ID, a.CountryCode, raw), nil
		}
	}}

var accountSecretRotate = adminCommand{name: "account secret rotate",
	summary: "new webhook signing secret; for 24 hours webhooks carry both signatures", needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		return func(ctx context.Context, in adminInput) (any, string, error) {
			sec, err := in.manage().RotateSecret(ctx, manage.Console, *account)
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"accountId": *account, "secret": sec.Current, "previousValidUntil": stamp(sec.PreviousValidUntil)},
				fmt.Sprintf("new webhook signing secret of %s: %s\nthe previous one keeps signing too until %s\n",
					*account, sec.Current, sec.PreviousValidUntil.Format("2006-01-02 15:04 MST")), nil
		}
	}}
