package bench

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/fraud"
	"github.com/msgsvc/msgsvc/internal/store"
)

// seedHistory writes the accounts' history into the guard's counters in
// the database, hour by hour before now's, through the counters the guard
// itself adds to: what a day of the same traffic would have left there.
func seedHistory(ctx context.Context, st *store.Store, accounts []string, history []HourCount, now time.Time) error {
	if len(history) == 0 {
		return nil
	}
	hour := now.Unix() / 3600
	cs := make([]fraud.Count, 0, len(history))
	for _, h := range history {
		cs = append(cs, fraud.Count{AccountID: accounts[h.Account], Env: domain.Live, Scope: h.Scope, Key: h.Key,
			Hour: hour - int64(h.Ago), N: h.N})
	}
	return st.Write(ctx, func(tx *store.Tx) error {
		c, ok := any(tx).(fraud.Counters)
		if !ok {
			return errors.New("this build's store keeps no fraud counters")
		}
		_, err := c.AddFraudCounts(ctx, cs)
		return err
	})
}

// fraudRuleColumn is the messages' column that holds the guard's decision.
const fraudRuleColumn = "fraud"

// ruleOf names a stored decision's rule and scope ("" for none).
func ruleOf(decision string) string {
	if decision == "" || decision == "null" {
		return ""
	}
	var d domain.FraudDecision
	if err := json.Unmarshal([]byte(decision), &d); err != nil || d.Rule == "" {
		return ""
	}
	return d.Rule + "/" + d.Scope
}
