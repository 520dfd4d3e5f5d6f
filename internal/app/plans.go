package app

import (
	"context"
	"log/slog"

	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/store"
)

// warnNoDefaultPlan says at start when no price plan is the default: new
// accounts then sell at the built-in prices (1 credit per SMS at home),
// which the operator never chose and which may be far from the costs.
func warnNoDefaultPlan(ctx context.Context, st *store.Store, log *slog.Logger) {
	missing, err := manage.DefaultPlanMissing(ctx, st)
	if err != nil {
		log.Warn("could not read the default price plan", "err", err)
		return
	}
	if missing {
		log.Warn("no default price plan: new accounts sell at the built-in prices (1 credit per SMS segment at home, 2 abroad); " +
			"set one with msgsvc plan create --default or in the panel (Operator → Plans)")
	}
}
