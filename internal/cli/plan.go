package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// The price plans of the operators' command line: the same actions as the
// panel's Operator → Plans and /api/v1/manage/price-plans.

const planPricesHelp = `price table in credits, e.g. {"home":{"smsSegment":0.05},"countries":{"44":{"smsSegment":0.04}}}; ` +
	`rates: smsSegment, rcsMessage, waConversation, waInWindow; a rate left out is the built-in default`

var planList = adminCommand{name: "plan list", summary: "the price plans, the default marked, with how many accounts are on each",
	flags: func(*flag.FlagSet, *string) adminRun {
		return func(ctx context.Context, in adminInput) (any, string, error) {
			plans, err := in.manage().PricePlans(ctx, manage.Console)
			if err != nil {
				return nil, "", err
			}
			out := make([]map[string]any, 0, len(plans))
			var b strings.Builder
			if len(plans) == 0 {
				b.WriteString("no price plans: new accounts sell at the built-in defaults (msgsvc plan create --default)\n")
			}
			for _, p := range plans {
				out = append(out, planJSON(p))
				mark := ""
				if p.Default {
					mark = " (default)"
				}
				raw, _ := json.Marshal(planJSON(p)["prices"])
				fmt.Fprintf(&b, "%s  %s%s  %d accounts  %s\n", p.ID, p.Name, mark, p.Accounts, raw)
			}
			return map[string]any{"plans": out}, b.String(), nil
		}
	}}

var planCreate = adminCommand{name: "plan create", summary: "make a price plan (--default: the plan new accounts start on)",
	flags: func(fs *flag.FlagSet, _ *string) adminRun {
		name := fs.String("name", "", "plan name (required)")
		prices := fs.String("prices", "", planPricesHelp+" (required)")
		def := fs.Bool("default", false, "new top-level accounts start on this plan")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			if *prices == "" {
				return nil, "", errors.New("--prices is required: the plan's price table in credits")
			}
			p, err := in.manage().CreatePricePlan(ctx, manage.Console, manage.PlanInput{Name: name, Prices: []byte(*prices), Default: def})
			if err != nil {
				return nil, "", err
			}
			return planJSON(p), fmt.Sprintf("price plan %s (%s) created%s\n", p.ID, p.Name, defaultNote(p)), nil
		}
	}}

var planSet = adminCommand{name: "plan set", summary: "change a price plan: its accounts pay the new prices from their next send",
	flags: func(fs *flag.FlagSet, _ *string) adminRun {
		planID := fs.String("plan", "", "plan id (required; plan list shows them)")
		name := fs.String("name", "", "new name")
		prices := fs.String("prices", "", planPricesHelp+" (replaces the plan's whole table)")
		def := fs.String("default", "", "true makes it the default plan, false makes it not")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			if *planID == "" {
				return nil, "", errors.New("--plan is required: the plan's id (msgsvc plan list)")
			}
			var ch manage.PlanInput
			if *name != "" {
				ch.Name = name
			}
			if *prices != "" {
				ch.Prices = []byte(*prices)
			}
			if *def != "" {
				v, err := strconv.ParseBool(*def)
				if err != nil {
					return nil, "", errors.New("--default must be true or false")
				}
				ch.Default = &v
			}
			p, err := in.manage().UpdatePricePlan(ctx, manage.Console, *planID, ch)
			if errors.Is(err, domain.ErrNotFound) {
				return nil, "", fmt.Errorf("no price plan %q", *planID)
			}
			if err != nil {
				return nil, "", err
			}
			return planJSON(p), fmt.Sprintf("price plan %s (%s) changed%s; its %d accounts pay the new prices from their next send\n",
				p.ID, p.Name, defaultNote(p), p.Accounts), nil
		}
	}}

var accountPlan = adminCommand{name: "account plan", summary: `put an account on a price plan ("" takes it off)`, needsAccount: true,
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		planID := fs.String("plan", "-", `plan id (required; "" takes the account off its plan)`)
		return func(ctx context.Context, in adminInput) (any, string, error) {
			if *planID == "-" {
				return nil, "", errors.New(`--plan is required: the plan's id (msgsvc plan list), or "" for none`)
			}
			a, err := in.manage().SetAccountPlan(ctx, manage.Console, *account, *planID)
			if errors.Is(err, domain.ErrNotFound) {
				return nil, "", fmt.Errorf("no account %q", *account)
			}
			if err != nil {
				return nil, "", err
			}
			table, err := a.PriceList()
			if err != nil {
				return nil, "", err
			}
			human := fmt.Sprintf("account %s is on no plan: it pays the defaults under its own prices\n", a.ID)
			if a.PricePlanID != "" {
				human = fmt.Sprintf("account %s is on plan %s from its next send\n", a.ID, a.PricePlanID)
			}
			return map[string]any{"accountId": a.ID, "pricePlan": a.PricePlanID, "prices": ledger.PriceTableJSON(table)}, human, nil
		}
	}}

func planJSON(p domain.PricePlan) map[string]any {
	sheet, _ := domain.ParseSheet(p.Prices)
	return map[string]any{"id": p.ID, "name": p.Name, "prices": ledger.SheetJSON(sheet), "default": p.Default, "accounts": p.Accounts}
}

func defaultNote(p domain.PricePlan) string {
	if p.Default {
		return ", the default plan of new accounts"
	}
	return ""
}
