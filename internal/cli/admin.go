package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/store"
)

// adminCommand is one "msgsvc GROUP VERB" command of the operators'
// command line: it registers its flags and returns what runs once they
// are parsed. Adding a command is adding an entry to adminCommands.
type adminCommand struct {
	name    string // "account create"
	summary string
	// needsAccount commands take --account, which must be given.
	needsAccount bool
	// operand names the one argument the command takes besides its
	// flags, before or after them ("SID"); "" takes none.
	operand string
	// ownJSON commands take --json for a file of their own and always
	// print JSON.
	ownJSON bool
	flags   func(fs *flag.FlagSet, account *string) adminRun
}

// adminRun does the command's work and returns its JSON and human answers.
type adminRun func(ctx context.Context, in adminInput) (out any, human string, err error)

// adminInput is what a running command works with.
type adminInput struct {
	st    *store.Store
	now   time.Time
	stdin io.Reader
	// operand is the command's argument (see adminCommand.operand).
	operand string
}

// manage is the panel's actions, run by the console at the command's time.
func (in adminInput) manage() *manage.Service { return bootstrap.Console(in.st, in.now) }

// adminCommands lists every admin command, grouped by their first word.
var adminCommands = []adminCommand{
	accountCreate, accountSettings, accountLimits, accountPrices, accountSecretRotate,
	accountSuspend, accountResume, accountPlan, accountStatement,
	planList, planCreate, planSet,
	keyCreate, keyList, keyRevoke,
	smppUserCreate, smppUserList, smppUserRemove,
	twilioCredentialCreate, twilioCredentialList, twilioCredentialRemove,
	creditsAdd,
	userCreate,
	templateCreate,
	senderAdd, senderRemove, senderList,
	optOutList, optOutAdd, optOutRemove,
	fraudSet, fraudShow,
}

// adminGroups are the first words of the admin commands.
func adminGroups() map[string]bool {
	out := map[string]bool{}
	for _, c := range adminCommands {
		out[strings.Fields(c.name)[0]] = true
	}
	return out
}

// runAdmin runs "msgsvc GROUP [VERB] [flags]".
func runAdmin(ctx context.Context, group string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		groupHelp(stdout, group)
		if len(args) == 0 {
			return fmt.Errorf("%s needs a subcommand (listed above)", group)
		}
		return nil
	}
	cmd, rest := findAdmin(group, args)
	if cmd == nil {
		// "account secret -h": the first words of longer commands.
		if prefix := group + " " + args[0]; hasCommandsUnder(prefix) && (len(args) == 1 || isHelp(args[1])) {
			groupHelp(stdout, prefix)
			if len(args) == 1 {
				return fmt.Errorf("%s needs a subcommand (listed above)", prefix)
			}
			return nil
		}
		return fmt.Errorf("unknown command \"%s %s\"; run \"msgsvc %s -h\" for the %s commands", group, args[0], group, group)
	}
	name := cmd.name
	fs := flag.NewFlagSet("msgsvc "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "msgsvc %s — %s\n\nFlags:\n", strings.TrimSpace(name+" "+cmd.operand), cmd.summary)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
	}
	db := dbFlag(fs)
	asJSON := &cmd.ownJSON
	if !cmd.ownJSON {
		asJSON = fs.Bool("json", false, "print JSON")
	}
	var account *string
	if cmd.needsAccount {
		account = fs.String("account", "", "account id (required; msgsvc account create printed it)")
	}
	run := cmd.flags(fs, account)
	operand, err := "", error(nil)
	if cmd.operand != "" {
		operand, err = parseOperand(fs, rest, cmd.operand)
	} else {
		err = parseFlags(fs, rest)
	}
	if err != nil {
		return err
	}
	if account != nil && *account == "" {
		return errors.New("--account is required: give the id that msgsvc account create printed (acc_…)")
	}
	st, err := bootstrap.OpenExisting(ctx, db())
	if err != nil {
		return err
	}
	defer st.Close()
	out, human, err := run(ctx, adminInput{st: st, now: time.Now().UTC(), stdin: stdin, operand: operand})
	if err != nil {
		return readable(err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	_, err = io.WriteString(stdout, human)
	return err
}

// parseOperand parses flags on either side of a command's one argument
// (the flag package stops at the first argument that is not a flag).
func parseOperand(fs *flag.FlagSet, args []string, name string) (string, error) {
	var operand string
	for {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		if fs.NArg() == 0 {
			break
		}
		if operand != "" {
			return "", fmt.Errorf("unexpected argument %q: the command takes one %s, and %s was given", fs.Arg(0), name, operand)
		}
		operand, args = fs.Arg(0), fs.Args()[1:]
	}
	if operand == "" {
		return "", fmt.Errorf("the %s is required (msgsvc %s -h)", name, strings.TrimPrefix(fs.Name(), "msgsvc "))
	}
	return operand, nil
}

// findAdmin finds the command that the words after the group name, one
// or two, name ("key create", "account secret rotate").
func findAdmin(group string, args []string) (*adminCommand, []string) {
	for n := min(2, len(args)); n >= 1; n-- {
		name := group + " " + strings.Join(args[:n], " ")
		for i := range adminCommands {
			if adminCommands[i].name == name {
				return &adminCommands[i], args[n:]
			}
		}
	}
	return nil, nil
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "help" || arg == "-help"
}

// hasCommandsUnder reports whether some command's name starts with the
// words of prefix ("account secret").
func hasCommandsUnder(prefix string) bool {
	for _, c := range adminCommands {
		if strings.HasPrefix(c.name, prefix+" ") {
			return true
		}
	}
	return false
}

// groupHelp lists the commands whose names start with the words of group
// ("key", "account secret").
func groupHelp(w io.Writer, group string) {
	fmt.Fprintf(w, "msgsvc %s commands:\n", group)
	var lines []string
	for _, c := range adminCommands {
		if strings.HasPrefix(c.name, group+" ") {
			lines = append(lines, fmt.Sprintf("  msgsvc %-22s %s", c.name, c.summary))
		}
	}
	sort.Strings(lines)
	fmt.Fprintln(w, strings.Join(lines, "\n"))
	fmt.Fprintf(w, "\nRun \"msgsvc %s VERB -h\" for a command's flags.\n", group)
}

// readable spells out a validation error's fields, which the panel shows
// beside its inputs and the command line can only list.
func readable(err error) error {
	v, ok := domain.IsValidation(err)
	if !ok || len(v.Fields) == 0 {
		return err
	}
	var parts []string
	for _, f := range v.Fields {
		parts = append(parts, f.Field+" "+f.Message)
	}
	return errors.New(strings.Join(parts, "; "))
}
