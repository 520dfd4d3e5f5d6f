package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/fraud"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
)

// GuardAlone is what the guard adds to a node's transactions, measured
// in process: the hour's sends handed to fraud.Guard.Check one at a time,
// each in a transaction of its own (at the bench's pace a node's group
// commit holds 1.0 to 1.2 sends a transaction), in a SQLite store that
// holds the same accounts, rules and history as a run's node, and whose
// clock moves along the compressed hour as the node's does, so that its
// once-a-second rows and its 100 ms version checks come as often. The
// figure is the process's CPU time over each such transaction, less that
// of an empty transaction of a second store taken right after it: the
// check, its rows, its share of the commit and the bookkeeping after it,
// and nothing of the rest of a node. The empty transactions run in turns
// with the guard's so that the machine's drift falls on both alike.
type GuardAlone struct {
	Messages        int     `json:"messages"`
	CPUMicrosPerMsg float64 `json:"cpuMicrosPerMessage"`
	AttackStopped   int     `json:"attackStopped"`
	NormalStopped   int     `json:"normalStopped"`
}

// guardGroup is how many sends one transaction holds in the measure.
const guardGroup = 1

func guardAlone(ctx context.Context, tr Traffic, history []HourCount, rules domain.FraudRules,
	hour time.Duration) (GuardAlone, error) {
	return guardAloneRestarting(ctx, tr, history, rules, hour, 0)
}

// guardClock is the stores' clock in the measure: set to each send's
// moment of the compressed hour before its transaction.
type guardClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *guardClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *guardClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// guardAloneRestarting is guardAlone that, given restartAt > 0, also
// writes each send's messages in its transaction (and so in the measure)
// and, before the send at restartAt, closes the store and opens it again
// with a new guard, as a node restarted within the hour: on SQLite every
// counter the rest of the hour meets is then seeded from the messages.
func guardAloneRestarting(ctx context.Context, tr Traffic, history []HourCount, rules domain.FraudRules,
	hour time.Duration, restartAt int) (GuardAlone, error) {
	if hour <= 0 {
		hour = time.Hour
	}
	dir, err := os.MkdirTemp("", "msgsvc-guard-")
	if err != nil {
		return GuardAlone{}, err
	}
	defer os.RemoveAll(dir)
	now := time.Now().UTC()
	clock := &guardClock{t: now}
	path := filepath.Join(dir, "guard.db")
	st, err := bootstrap.OpenStoreWith(ctx, path, store.Options{Now: clock.now})
	if err != nil {
		return GuardAlone{}, err
	}
	defer func() { st.Close() }()
	bare, err := bootstrap.OpenStoreWith(ctx, filepath.Join(dir, "bare.db"), store.Options{Now: clock.now})
	if err != nil {
		return GuardAlone{}, err
	}
	defer bare.Close()
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
	empty := func(*store.Tx) error { return nil }
	for start := 0; start < len(tr.Sends); start += guardGroup {
		if restartAt > 0 && start == restartAt {
			if err := st.Close(); err != nil {
				return out, err
			}
			if st, err = bootstrap.OpenStoreWith(ctx, path, store.Options{Now: clock.now}); err != nil {
				return out, err
			}
			g = fraud.New(fraud.Config{})
		}
		group := tr.Sends[start:min(start+guardGroup, len(tr.Sends))]
		clock.set(now.Add(time.Duration(float64(group[0].At) * float64(hour) / float64(time.Hour))))
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
		var ds []fraud.Decision
		t0, ok0 := selfCPU()
		err := st.Write(ctx, func(tx *store.Tx) error {
			var err error
			if ds, err = g.Check(ctx, tx, now, sends); err != nil || restartAt == 0 {
				return err
			}
			for _, d := range ds {
				fraud.Apply(&sends[d.Send].Messages[d.Message], d.FraudDecision, now)
			}
			return insertGuarded(ctx, tx, camps, group, sends, now)
		})
		t1, ok1 := selfCPU()
		if err != nil {
			return out, fmt.Errorf("guard check: %w", err)
		}
		if err := bare.Write(ctx, empty); err != nil {
			return out, fmt.Errorf("empty transaction: %w", err)
		}
		t2, ok2 := selfCPU()
		if !ok0 || !ok1 || !ok2 {
			return out, errProcessCPU
		}
		used += (t1 - t0) - (t2 - t1)
		for _, d := range ds {
			if group[d.Send].Label == LabelAttack {
				out.AttackStopped++
			} else {
				out.NormalStopped++
			}
		}
		out.Messages += len(group)
	}
	out.CPUMicrosPerMsg = float64(used.Nanoseconds()) / 1000 / float64(out.Messages)
	return out, nil
}

var errProcessCPU = errors.New("no process CPU clock on this system")

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
