package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/msgsvc/msgsvc/internal/routing"
)

// runConfig is `msgsvc config check FILE`: the checks serve makes at start
// and on SIGHUP, without starting anything. Secrets named ${NAME} are read
// from the environment as serve would.
func runConfig(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageOf(fs, stdout, "msgsvc config check FILE — validate a providers and routes file (as serve reads it)",
		"msgsvc config check msgsvc.yaml")
	if len(args) == 0 || args[0] != "check" {
		fs.Usage()
		return errors.New(`want "config check FILE"`)
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(`want "config check FILE"`)
	}
	types, err := providerTypes()
	if err != nil {
		return err
	}
	rc, err := routing.Load(fs.Arg(0), os.Getenv, types)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: ok (%d providers, %d routes)\n", fs.Arg(0), len(rc.Providers), len(rc.Routes))
	return nil
}

// reloadOnHangup reloads the configuration file on each SIGHUP until ctx
// ends. A failed reload is logged by Reload and changes nothing. The
// signal is caught from the moment it returns.
func reloadOnHangup(ctx context.Context, srv *Server, file string, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		reloadEach(ctx, hup, srv, file, log)
	}()
}

func reloadEach(ctx context.Context, hup <-chan os.Signal, srv *Server, file string, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if file == "" {
				log.Warn("SIGHUP: no --config file to reload")
				continue
			}
			_ = srv.Reload(ctx)
		}
	}
}
