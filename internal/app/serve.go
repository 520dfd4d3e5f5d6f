package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Node is a msgsvc node as the command line runs it (cli.Node): dev and
// serve, the provider types config check reads a file with, and this
// binary's version.
type Node struct{}

// Serve runs a node until ctx ends, as `msgsvc dev` (cfg.Dev) and `msgsvc
// serve` do: the demo account on a first dev start, a reload of
// cfg.Config on SIGHUP and SIGUSR2, a graceful stop.
func (Node) Serve(ctx context.Context, cfg config.Config, log *slog.Logger, stdout io.Writer) error {
	gcPercent := tuneGC(os.Getenv, setGCPercent)
	srv, err := NewServer(ctx, cfg, log, Options{})
	if err != nil {
		return err
	}
	if cfg.Dev {
		if err := devWelcome(ctx, srv, stdout); err != nil {
			return err
		}
	}
	attrs := []any{"addr", srv.Addr(), "db", redactDSN(cfg.DB), "node", cfg.NodeID, "dev", cfg.Dev, "gcPercent", gcPercent}
	if a := srv.SMPPAddr(); a != "" {
		attrs = append(attrs, "smpp", a)
	}
	log.Info("msgsvc listening", attrs...)
	if !cfg.Dev {
		warnNoDefaultPlan(ctx, srv.Store(), log)
	}
	reloadOnHangup(ctx, srv, cfg.Config, log)
	return srv.Run(ctx)
}

// ProviderTypes are the adapter types this build runs.
func (Node) ProviderTypes() (*provider.Registry, error) { return providerTypes() }

// VersionInfo describes this binary (VersionInfo).
func (Node) VersionInfo() map[string]string { return VersionInfo() }

// redactDSN hides a PostgreSQL password in logs.
func redactDSN(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.LastIndex(dsn, "@"); at > i {
			if colon := strings.Index(dsn[i+3:at], ":"); colon >= 0 {
				return dsn[:i+3+colon] + ":***" + dsn[at:]
			}
		}
	}
	return dsn
}

// reloadOnHangup reloads the configuration file on each SIGHUP until ctx
// ends, and on SIGUSR2 forces the reload of a file that leaves a channel
// without routes. A failed reload is logged by Reload and changes
// nothing. The signals are caught from the moment it returns.
func reloadOnHangup(ctx context.Context, srv *Server, file string, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP, syscall.SIGUSR2)
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
		case sig := <-hup:
			if file == "" {
				log.Warn("no --config file to reload", "signal", sig)
				continue
			}
			if sig == syscall.SIGUSR2 {
				_ = srv.ForceReload(ctx)
				continue
			}
			_ = srv.Reload(ctx)
		}
	}
}
