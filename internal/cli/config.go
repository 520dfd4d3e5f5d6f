package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/routing"
)

// runConfig is `msgsvc config check FILE`: the checks serve makes at start
// and on SIGHUP, without starting anything. Secrets named ${NAME} are read
// from the environment as serve would; those that are not set are listed
// as warnings (serve refuses to start without them) and the rest is still
// checked. With --db the accounts that routes name are checked against
// that database; without it they are not, and it says so.
func runConfig(ctx context.Context, node Node, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("config", stdout, stderr, "msgsvc config check FILE [--db D] — validate a providers and routes file (as serve reads it)",
		"msgsvc config check --db postgres://msgsvc@db/msgsvc msgsvc.yaml")
	if len(args) == 0 || args[0] != "check" {
		fs.Usage()
		return errors.New(`want "config check FILE"`)
	}
	db := fs.String("db", os.Getenv("MSGSVC_DB"), "also check the accounts that routes name against this database (it must exist) [MSGSVC_DB]")
	if err := parseInterspersed(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(`want "config check FILE"`)
	}
	types, err := node.ProviderTypes()
	if err != nil {
		return err
	}
	file := fs.Arg(0)
	rc, warnings, err := routing.Check(file, os.Getenv, types)
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if err != nil {
		return err
	}
	accounts := "accounts not checked (no --db)"
	if *db != "" {
		st, err := bootstrap.OpenExisting(ctx, *db)
		if err != nil {
			return err
		}
		defer st.Close()
		if err := rc.CheckAccounts(file, bootstrap.AccountExists(ctx, st)); err != nil {
			return err
		}
		accounts = "accounts checked"
	}
	fmt.Fprintf(stdout, "%s: ok (%d providers, %d routes); %s", file, len(rc.Providers), len(rc.Routes), accounts)
	if len(warnings) > 0 {
		fmt.Fprintf(stdout, "; %d secrets not set here (see the warnings)", len(warnings))
	}
	fmt.Fprintln(stdout)
	return nil
}

// parseInterspersed parses fs allowing flags after the positional
// arguments too (config check FILE --db D).
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return fs.Parse(rest)
}
