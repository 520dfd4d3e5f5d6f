package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/exportcsv"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// The operator's console on the command line: an account's monthly
// statement, and the CSV exports streamed to standard output.

var accountStatement = adminCommand{name: "account statement", needsAccount: true,
	summary: "the account's statement of a month: opening, top-ups, transfers, charges by channel and country, refunds, closing",
	flags: func(fs *flag.FlagSet, account *string) adminRun {
		month := fs.String("month", "", "the month, YYYY-MM (UTC; default the current one)")
		asCSV := fs.Bool("csv", false, "print CSV (as GET /api/v1/manage/statements/{month}?format=csv)")
		return func(ctx context.Context, in adminInput) (any, string, error) {
			m := *month
			if m == "" {
				m = in.now.Format("2006-01")
			}
			v, err := in.manage().Statement(ctx, manage.Console, *account, m)
			if err != nil {
				return nil, "", err
			}
			st, cur := v.Statement, v.Account.Currency
			var b strings.Builder
			if *asCSV {
				if err := exportcsv.Statement(exportcsv.New(&b), v.Account.ID, v.Month, cur, st); err != nil {
					return nil, "", err
				}
			} else {
				fmt.Fprintf(&b, "statement of %s (%s) for %s, in credits (%s)\n", v.Account.Name, v.Account.ID, v.Month, cur)
				line := func(name string, amount int64) { fmt.Fprintf(&b, "  %-16s %14s\n", name, exportcsv.Credits(amount)) }
				line("opening", st.Opening)
				line("top-ups", st.TopUps)
				line("transfers", st.Transfers)
				for _, c := range st.Charges {
					fmt.Fprintf(&b, "  charges %-4s +%-4s %14s  (%d messages, %d segments)\n", c.Channel, c.Country, exportcsv.Credits(-c.Amount),
						c.Messages, c.Segments)
				}
				line("refunds", st.Refunds)
				line("closing", st.Closing)
				if v.Open {
					b.WriteString("the month is not over: its closing balance is the balance now\n")
				}
			}
			charges := []map[string]any{}
			for _, c := range st.Charges {
				charges = append(charges, map[string]any{"channel": c.Channel, "country": c.Country, "messages": c.Messages,
					"segments": c.Segments, "credits": ledger.Credits(c.Amount)})
			}
			return map[string]any{"accountId": v.Account.ID, "month": v.Month, "currency": cur, "opening": ledger.Credits(st.Opening),
				"topUps": ledger.Credits(st.TopUps), "transfers": ledger.Credits(st.Transfers), "charges": charges,
				"refunds": ledger.Credits(st.Refunds), "closing": ledger.Credits(st.Closing)}, b.String(), nil
		}
	}}

const exportUsage = `msgsvc export — stream a CSV export to standard output, a page of rows at a time

  msgsvc export messages --account ID | --all [--from DAY] [--to DAY] [--status S] [--phone DIGITS]
                         [--campaign ID] [--reference R] [--environment live|test]
  msgsvc export ledger   --account ID [--from DAY] [--to DAY]
  msgsvc export usage    --account ID [--from DAY] [--to DAY] [--environment live|test]

The columns are those of GET /api/v1/manage/exports/*.csv. Days are YYYY-MM-DD (UTC), both inclusive;
ledger and usage default to the current month.
`

// runExport runs "msgsvc export KIND".
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprint(stdout, exportUsage)
		if len(args) == 0 {
			return errors.New("export needs what to export: messages, ledger or usage")
		}
		return nil
	}
	kind := args[0]
	if kind != "messages" && kind != "ledger" && kind != "usage" {
		return fmt.Errorf("unknown export %q: messages, ledger or usage", kind)
	}
	fs := newFlags("export "+kind, stdout, stderr, "msgsvc export "+kind+" — the CSV export, streamed to standard output",
		"msgsvc export "+kind+" --account acc_… --from 2026-11-01 --to 2026-11-30 > "+kind+".csv")
	db := dbFlag(fs)
	account := fs.String("account", "", "account id")
	all := fs.Bool("all", false, "messages of every account (messages only)")
	from := fs.String("from", "", "first day, YYYY-MM-DD (UTC)")
	to := fs.String("to", "", "last day, YYYY-MM-DD (UTC), inclusive")
	env := fs.String("environment", "", "live or test (messages: both when empty; usage: live when empty)")
	status := fs.String("status", "", "messages: status")
	phone := fs.String("phone", "", "messages: the recipient, digits")
	campaign := fs.String("campaign", "", "messages: campaign id")
	reference := fs.String("reference", "", "messages: reference")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	switch {
	case kind != "messages" && *all:
		return errors.New("--all exports messages only")
	case kind != "messages" && *account == "":
		return errors.New("--account is required")
	case *all == (*account != ""):
		return errors.New("give --account ID or --all")
	}
	st, err := bootstrap.OpenExisting(ctx, db())
	if err != nil {
		return err
	}
	defer st.Close()
	m := bootstrap.Console(st, time.Now().UTC())
	out := exportcsv.New(stdout)
	started := false
	begin := func(header []string) error {
		if started {
			return nil
		}
		started = true
		return out.Row(header...)
	}
	switch kind {
	case "messages":
		q := manage.MessageQuery{Status: *status, To: *phone, CampaignID: *campaign, Reference: *reference, Environment: *env}
		for _, d := range []struct {
			v    string
			into *string
			add  int
		}{{*from, &q.CreatedFrom, 0}, {*to, &q.CreatedTo, 1}} {
			if d.v == "" {
				continue
			}
			t, err := time.Parse(time.DateOnly, d.v)
			if err != nil {
				return fmt.Errorf("%q is not a day YYYY-MM-DD", d.v)
			}
			*d.into = t.AddDate(0, 0, d.add).Format(time.RFC3339)
		}
		err = m.ExportMessages(ctx, manage.Console, *account, q, *all, func(page []domain.Message) error {
			if err := begin(exportcsv.MessageHeader); err != nil {
				return err
			}
			for _, msg := range page {
				if err := exportcsv.Message(out, msg); err != nil {
					return err
				}
			}
			return out.Flush()
		})
	case "ledger":
		err = m.ExportLedger(ctx, manage.Console, *account, manage.ExportRange{From: *from, To: *to}, func(page []ledger.Entry) error {
			if err := begin(exportcsv.LedgerHeader); err != nil {
				return err
			}
			for _, e := range page {
				if err := exportcsv.Ledger(out, e); err != nil {
					return err
				}
			}
			return out.Flush()
		})
	case "usage":
		err = m.ExportUsage(ctx, manage.Console, *account, manage.ExportRange{From: *from, To: *to}, *env, func(page []domain.UsageDelta) error {
			if err := begin(exportcsv.UsageHeader); err != nil {
				return err
			}
			for _, u := range page {
				if err := exportcsv.Usage(out, u); err != nil {
					return err
				}
			}
			return out.Flush()
		})
	}
	return readable(err)
}
