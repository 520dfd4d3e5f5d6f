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
	"github.com/msgsvc/msgsvc/internal/id"
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
	return guardAloneRestarting(ctx, tr, history, rules, 0)
}

// guardAloneRestarting is guardAlone that, given restartAt > 0, also
// writes each group's messages (outside the measure) and, before the
// send at restartAt, closes the store and opens it again with a new
// guard, as a node restarted within the hour: on SQLite every counter
// the rest of the hour meets is then seeded from the messages.
func guardAloneRestarting(ctx context.Context, tr Traffic, history []HourCount, rules domain.FraudRules,
	restartAt int) (GuardAlone, error) {
	dir, err := os.MkdirTemp("", "msgsvc-guard-")
	if err != nil {
		return GuardAlone{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "guard.db")
	st, err := bootstrap.OpenStore(ctx, path)
	if err != nil {
		return GuardAlone{}, err
	}
	defer func() { st.Close() }()
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
	var camps []domain.Campaign
	if restartAt > 0 {
		// Every message of an account goes in one campaign: the rows
		// need one, and the guard reads none.
		for i := range ids {
			camps = append(camps, domain.Campaign{ID: id.New(id.Campaign, now), AccountID: ids[i], KeyID: "key_bench",
				Env: domain.Live, Type: domain.SMS, Total: 1, CreatedAt: now})
		}
		if err := st.Write(ctx, func(tx *store.Tx) error { return tx.InsertCampaigns(ctx, camps) }); err != nil {
			return GuardAlone{}, err
		}
	}
	g := fraud.New(fraud.Config{})
	var out GuardAlone
	var used time.Duration
	// Each group is checked as its own group commit would check it; a
	// transaction carries several groups only so that the measure is not
	// a thousand commits long.
	const perTx = 16 * guardGroup
	for txStart, txEnd := 0, 0; txStart < len(tr.Sends); txStart = txEnd {
		txEnd = min(txStart+perTx, len(tr.Sends))
		if restartAt > 0 && txStart < restartAt && restartAt < txEnd {
			txEnd = restartAt
		}
		if restartAt > 0 && txStart == restartAt {
			if err := st.Close(); err != nil {
				return out, err
			}
			if st, err = bootstrap.OpenStore(ctx, path); err != nil {
				return out, err
			}
			g = fraud.New(fraud.Config{})
		}
		err := st.Write(ctx, func(tx *store.Tx) error {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for start := txStart; start < txEnd; start += guardGroup {
				group := tr.Sends[start:min(start+guardGroup, txEnd)]
				sends := make([]fraud.Send, len(group))
				for j, m := range group {
					msgID := fmt.Sprintf("msg_%d", start+j)
					if restartAt > 0 {
						msgID = id.New(id.Message, now)
					}
					sends[j] = fraud.Send{Account: accts[m.Account], Messages: []domain.Message{{ID: msgID,
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
					if restartAt > 0 {
						fraud.Apply(&sends[d.Send].Messages[d.Message], d.FraudDecision, now)
					}
				}
				out.Messages += len(group)
				if restartAt > 0 {
					if err := insertGuarded(ctx, tx, camps, group, sends, now); err != nil {
						return err
					}
				}
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

// insertGuarded writes a group's messages as the guard left them, in the
// account's campaign.
func insertGuarded(ctx context.Context, tx *store.Tx, camps []domain.Campaign, group []FraudSend, sends []fraud.Send,
	now time.Time) error {
	ms := make([]domain.Message, 0, len(sends))
	for j, s := range sends {
		for _, m := range s.Messages {
			m.CampaignID = camps[group[j].Account].ID
			m.Body, m.Segments, m.Encoding = "Your code is 123456", 1, "GSM7"
			if m.Status == "" {
				m.Status = domain.Sending
			}
			m.UpdatedAt, m.ExpiresAt = now, now.Add(24*time.Hour)
			ms = append(ms, m)
		}
	}
	return tx.InsertMessages(ctx, ms)
}
