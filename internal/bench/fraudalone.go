package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/fraud"
	"github.com/msgsvc/msgsvc/internal/store"
)

// GuardAlone is the guard's own cost, measured in process: the hour's
// messages handed to fraud.Guard.Check in groups of eight (as the group
// commit hands them over), each group in a transaction of a SQLite store
// that holds the same accounts, rules and history as a run's node. Only
// the CPU time of the thread that runs Check is counted, so the figure
// holds still on a busy machine where a whole node's CPU per message
// does not.
type GuardAlone struct {
	Messages        int     `json:"messages"`
	CPUMicrosPerMsg float64 `json:"cpuMicrosPerMessage"`
	AttackStopped   int     `json:"attackStopped"`
	NormalStopped   int     `json:"normalStopped"`
}

// guardGroup is how many sends one group commit holds in the measure.
const guardGroup = 8

func guardAlone(ctx context.Context, tr Traffic, history []HourCount, rules domain.FraudRules) (GuardAlone, error) {
	dir, err := os.MkdirTemp("", "msgsvc-guard-")
	if err != nil {
		return GuardAlone{}, err
	}
	defer os.RemoveAll(dir)
	st, err := bootstrap.OpenStore(ctx, filepath.Join(dir, "guard.db"))
	if err != nil {
		return GuardAlone{}, err
	}
	defer st.Close()
	now := time.Now().UTC()
	if err := st.SetFraudDefaults(ctx, rules); err != nil {
		return GuardAlone{}, err
	}
	ids := make([]string, len(tr.Accounts))
	for i, a := range tr.Accounts {
		acct, err := bootstrap.CreateAccount(ctx, st, bootstrap.NewAccount{Name: a.Name, Tier: "enterprise", Credits: 1000, Currency: "USD",
			Country: a.Home}, now)
		if err != nil {
			return GuardAlone{}, err
		}
		ids[i] = acct.ID
		if len(a.Staff) > 0 {
			own := rules
			own.Trusted = append(append([]string(nil), rules.Trusted...), a.Staff...)
			if err := st.SetAccountFraud(ctx, acct.ID, domain.FraudSettings{Rules: &own}); err != nil {
				return GuardAlone{}, err
			}
		}
	}
	accts := make([]domain.Account, len(ids))
	for i, id := range ids {
		if accts[i], err = st.Account(ctx, id); err != nil {
			return GuardAlone{}, err
		}
	}
	if err := seedHistory(ctx, st, ids, history, now); err != nil {
		return GuardAlone{}, err
	}
	countries := make([]string, len(tr.Sends))
	for i, m := range tr.Sends {
		countries[i] = countryOf(m.To)
	}
	g := fraud.New(fraud.Config{})
	var out GuardAlone
	var used time.Duration
	// Each group is checked as its own group commit would check it; a
	// transaction carries several groups only so that the measure is not
	// a thousand commits long.
	const perTx = 16 * guardGroup
	for txStart := 0; txStart < len(tr.Sends); txStart += perTx {
		txEnd := min(txStart+perTx, len(tr.Sends))
		err := st.Write(ctx, func(tx *store.Tx) error {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for start := txStart; start < txEnd; start += guardGroup {
				group := tr.Sends[start:min(start+guardGroup, txEnd)]
				sends := make([]fraud.Send, len(group))
				for j, m := range group {
					sends[j] = fraud.Send{Account: accts[m.Account], Messages: []domain.Message{{ID: fmt.Sprintf("msg_%d", start+j),
						AccountID: ids[m.Account], Env: domain.Live, To: m.To, CountryCode: countries[start+j], Type: domain.SMS,
						Channel: domain.SMS, CreatedAt: now}}}
				}
				t0, ok0 := threadCPU()
				ds, err := g.Check(ctx, tx, now, sends)
				t1, ok1 := threadCPU()
				if err != nil {
					return err
				}
				if !ok0 || !ok1 {
					return errThreadCPU
				}
				used += t1 - t0
				for _, d := range ds {
					if group[d.Send].Label == LabelAttack {
						out.AttackStopped++
					} else {
						out.NormalStopped++
					}
				}
				out.Messages += len(group)
			}
			return nil
		})
		if err != nil {
			return out, fmt.Errorf("guard check: %w", err)
		}
	}
	out.CPUMicrosPerMsg = float64(used.Nanoseconds()) / 1000 / float64(out.Messages)
	return out, nil
}

var errThreadCPU = errors.New("no thread CPU clock on this system")
