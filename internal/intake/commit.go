package intake

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/fraud"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

// SendTx is what committing sends needs of a write transaction: the ledger,
// the usage counts and the account's alerts, the rows of campaigns (of
// sends to several recipients) and messages, idempotency keys, the daily
// count of WhatsApp conversations and the opt-out list.
type SendTx interface {
	ledger.Tx
	UsageTx
	AlertTx
	// The fraud guard's hour marks, and its counters when no shared ones
	// are configured.
	MarkFraudHours(ctx context.Context, hs []domain.FraudHour) ([]bool, error)
	fraud.Counters
	InsertCampaign(ctx context.Context, c domain.Campaign) error
	InsertCampaigns(ctx context.Context, cs []domain.Campaign) error
	InsertMessages(ctx context.Context, msgs []domain.Message) error
	ClaimIdempotency(ctx context.Context, in domain.Idempotency) (domain.Idempotency, bool, error)
	ForgetIdempotency(ctx context.Context, keyID, key string) error
	ReserveConversations(ctx context.Context, c *domain.Conversations) error
	ReleaseConversations(ctx context.Context, c *domain.Conversations) error
	RecordConversations(ctx context.Context, c *domain.Conversations) error
	OptedOut(ctx context.Context, accountID string, env domain.Environment, phones []string) (map[string]bool, error)
	AuthVersion(ctx context.Context) (int64, error)
	// Ancestors reads the accounts above a sub-account, parent first: each
	// pays its own price for the sub-account's messages. Read only for a
	// send whose account has a parent.
	Ancestors(ctx context.Context, accountID string) ([]domain.Account, error)
}

// pendingSend is one accepted send, ready to be written: the campaign, its
// messages, the conversations it opens and the response to remember under
// its idempotency key.
type pendingSend struct {
	campaign      domain.Campaign
	messages      []domain.Message
	conversations *domain.Conversations
	idem          *domain.Idempotency
	alerts        *alertAccount // nil: the account has none
	authVersion   int64         // Principal.AuthVersion: 0, or the auth counter to find unchanged
	parentID      string        // the sender's parent: "" for a top-level account, whose send reads no chain
	// guard is the account the fraud guard checks the messages for, nil
	// when its rules are all off; undo what the guard changed in this
	// run; respond renders the remembered answer from the messages.
	guard   *domain.Account
	undo    []undo
	respond func(msgs []domain.Message) (int, []byte, error)
	// chunk: one chunk of a campaign from a file, whose campaign row is
	// written once, after its last chunk (see SendFile).
	chunk bool
}

// sendResult tells how one pendingSend of a batch ended: replayed from an
// earlier request with the same key, or refused (err is
// ErrInsufficientCredits, a *domain.DailyLimitError, ErrIdempotencyConflict,
// ErrStaleAuth or the *domain.Refusal of an opted-out recipient).
type sendResult struct {
	replay *domain.Idempotency
	err    error
}

// commitSends writes a batch of sends in one transaction (group commit): on
// SQLite one fsync for many requests is the difference between hundreds and
// thousands of sends per second. A refusal of one send (credits, daily
// limit, idempotency) leaves the others alone; a database error fails the
// batch. Leased messages go to the local dispatcher once committed.
func (s *Service) commitSends(ctx context.Context, sends []pendingSend) ([]sendResult, error) {
	return s.commitTaken(ctx, func() []pendingSend { return sends })
}

// commitTaken is commitSends for a group that is gathered when its
// transaction starts (batch.NewLate): the sends that arrived while the
// writer was busy with earlier transactions all join it.
func (s *Service) commitTaken(ctx context.Context, take func() []pendingSend) ([]sendResult, error) {
	var sends []pendingSend
	var results []sendResult
	err := s.writer.Write(ctx, func(tx SendTx) error {
		sends = take()
		var err error
		results, err = s.commitGroup(ctx, tx, sends)
		return err
	})
	if err != nil {
		return nil, err
	}
	// Messages written leased to the local dispatcher (leaseAtInsert) are
	// handed to it now.
	n := 0
	for i, snd := range sends {
		if results[i] == (sendResult{}) {
			n += len(snd.messages)
		}
	}
	leased := make([]domain.Message, 0, n) // sized once: a message is a large value
	for i, snd := range sends {
		if results[i] != (sendResult{}) {
			continue
		}
		for _, m := range snd.messages {
			if m.LeaseOwner != "" {
				leased = append(leased, m)
			}
		}
	}
	if len(leased) > 0 {
		s.dispatch.Hand(ctx, leased)
	}
	return results, nil
}

// commitGroup writes a batch of sends in the caller's transaction with as
// few statements as the batch allows: one balance update per account
// when the balance covers all of its sends, and one insert each for the
// campaigns, the messages and the ledger lines of the whole batch (on
// PostgreSQL every statement is a round trip). Sends that open WhatsApp
// conversations go one by one, so that a send refused for its credits
// never holds conversations another send of the batch needed under the
// daily limit.
func (s *Service) commitGroup(ctx context.Context, tx SendTx, sends []pendingSend) ([]sendResult, error) {
	results := make([]sendResult, len(sends))
	going := make([]bool, len(sends))
	stale, err := staleAuth(ctx, tx, sends)
	if err != nil {
		return nil, err
	}
	// The guard decides before anything is claimed or charged: a blocked
	// message is charged nothing, and the answer a key remembers shows
	// the decision.
	if err := s.checkFraud(ctx, tx, sends, stale, groupTime(sends)); err != nil {
		return nil, err
	}
	optedOut, err := readOptOuts(ctx, tx, sends)
	if err != nil {
		return nil, err
	}
	for i, snd := range sends {
		var err error
		if stale[i] {
			results[i] = sendResult{err: ErrStaleAuth}
			continue
		}
		if snd.conversations != nil {
			if results[i], err = commitSend(ctx, tx, snd, optedOut); err != nil {
				return nil, err
			}
			continue
		}
		if results[i], going[i], err = claimKey(ctx, tx, snd); err != nil {
			return nil, err
		}
		if going[i] {
			if results[i], going[i], err = checkOptOuts(ctx, tx, snd, optedOut); err != nil {
				return nil, err
			}
		}
	}
	debited, err := chargeAll(ctx, tx, sends, results, going)
	if err != nil {
		return nil, err
	}
	var cs []domain.Campaign
	var ms []domain.Message
	for i, snd := range sends {
		if !going[i] {
			continue
		}
		if !snd.chunk && hasCampaignRow(snd.campaign, snd.messages) {
			cs = append(cs, snd.campaign)
		}
		ms = append(ms, snd.messages...)
	}
	if len(ms) == 0 {
		return results, nil
	}
	if len(cs) > 0 {
		if err := tx.InsertCampaigns(ctx, cs); err != nil {
			return nil, err
		}
	}
	if err := InsertCounted(ctx, tx, ms); err != nil {
		return nil, err
	}
	for _, d := range debited {
		if err := checkAlerts(ctx, tx, d.alerts, d.balance, d.at); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// groupTime is when the group's latest send was accepted: the time of
// the fraud guard's decisions and the hour it counts in.
func groupTime(sends []pendingSend) time.Time {
	var t time.Time
	for _, snd := range sends {
		if snd.campaign.CreatedAt.After(t) {
			t = snd.campaign.CreatedAt
		}
	}
	return t
}

// debit is what one account's charges of a group left: the balance, when,
// and the account's alerts to check against it.
type debit struct {
	alerts  *alertAccount
	balance int64
	at      time.Time
}

// staleAuth tells which sends were authenticated from a cache whose auth
// counter has moved since (pendingSend.authVersion): a key revoked or an
// account changed meanwhile. The counter is read once for the whole group,
// inside its transaction, which is what lets the API skip reading it for
// every send request: a change committed before a request arrived is seen
// here, as the request's own read would have seen it.
func staleAuth(ctx context.Context, tx SendTx, sends []pendingSend) ([]bool, error) {
	stale := make([]bool, len(sends))
	var current int64
	read := false // only a group with a cached caller reads the counter
	for i, snd := range sends {
		if snd.authVersion == 0 {
			continue
		}
		if !read {
			v, err := tx.AuthVersion(ctx)
			if err != nil {
				return nil, err
			}
			current, read = v, true
		}
		stale[i] = snd.authVersion != current
	}
	return stale, nil
}

// claimKey claims a send's idempotency key; a key already used decides
// the send (a replay or a conflict) and stops it.
func claimKey(ctx context.Context, tx SendTx, snd pendingSend) (sendResult, bool, error) {
	if snd.idem == nil {
		return sendResult{}, true, nil
	}
	prev, fresh, err := tx.ClaimIdempotency(ctx, *snd.idem)
	if err != nil {
		return sendResult{}, false, err
	}
	if fresh {
		return sendResult{}, true, nil
	}
	if prev.RequestHash != snd.idem.RequestHash {
		return sendResult{err: ErrIdempotencyConflict}, false, nil
	}
	return sendResult{replay: &prev}, false, nil
}

// checkOptOuts runs the opt-out check of a send whose key let it go on: a
// send to an opted-out recipient is refused and stops.
func checkOptOuts(ctx context.Context, tx SendTx, snd pendingSend, optedOut optedOutSets) (sendResult, bool, error) {
	refusal := refuseOptedOut(snd, optedOut)
	if refusal == nil {
		return sendResult{}, true, nil
	}
	res, err := refuse(ctx, tx, snd, refusal)
	return res, false, err
}

// chargeAll reserves the credits of the going sends, account by account
// (ledger.ReserveAll); a send the balance does not cover is refused and
// stops. It returns what the debits left of the accounts that have
// alerts. A group with a sub-account's send is charged as a tree
// (chargeTree).
func chargeAll(ctx context.Context, tx SendTx, sends []pendingSend, results []sendResult, going []bool) ([]debit, error) {
	byAccount := map[string][]int{}
	var accounts []string
	for i, snd := range sends {
		if !going[i] {
			continue
		}
		if snd.parentID != "" {
			return chargeTree(ctx, tx, sends, results, going)
		}
		a := snd.campaign.AccountID
		if _, ok := byAccount[a]; !ok {
			accounts = append(accounts, a)
		}
		byAccount[a] = append(byAccount[a], i)
	}
	var out []debit
	for _, a := range accounts {
		idx := byAccount[a]
		debits := make([]ledger.Send, len(idx))
		var last time.Time
		for j, i := range idx {
			c := sends[i].campaign
			debits[j] = ledger.Send{CampaignID: c.ID, Charges: charges(sends[i].messages), At: c.CreatedAt}
			if c.CreatedAt.After(last) {
				last = c.CreatedAt
			}
		}
		charged, after, err := ledger.ReserveAll(ctx, tx, a, debits)
		if err != nil {
			return nil, err
		}
		if al := sends[idx[0]].alerts; after.Debited && al != nil {
			out = append(out, debit{alerts: al, balance: after.Balance, at: last})
		}
		for j, i := range idx {
			if charged[j] {
				continue
			}
			going[i] = false
			if results[i], err = refuse(ctx, tx, sends[i], ledger.ErrInsufficientCredits); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// tree is what charging a group's sends up their chains has learned: the
// accounts above each sender (read once per group), every account's depth
// below the operator, and the alerts of those that have them.
type tree struct {
	above  map[string][]domain.Account
	depth  map[string]int
	alerts map[string]*alertAccount
	last   time.Time
}

func newTree() *tree {
	return &tree{above: map[string][]domain.Account{}, depth: map[string]int{}, alerts: map[string]*alertAccount{}}
}

// chargeTree charges the going sends of a group that has a sub-account's
// send: each send at every level of its chain, all or nothing
// (ledger.ReserveLegs), the accounts debited top first so that concurrent
// groups lock the rows of a tree in one order.
func chargeTree(ctx context.Context, tx SendTx, sends []pendingSend, results []sendResult, going []bool) ([]debit, error) {
	t := newTree()
	var idx []int
	var legs [][]ledger.Leg
	for i, snd := range sends {
		if !going[i] {
			continue
		}
		l, err := t.legs(ctx, tx, snd)
		if err != nil {
			return nil, err
		}
		idx, legs = append(idx, i), append(legs, l)
	}
	charged, out, err := t.reserve(ctx, tx, legs)
	if err != nil {
		return nil, err
	}
	for j, i := range idx {
		if charged[j] {
			continue
		}
		going[i] = false
		if results[i], err = refuse(ctx, tx, sends[i], ledger.ErrInsufficientCredits); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// legs are what one send costs each account of its chain: the sender its
// own price (the one its parent set), each account above it that account's
// own price. Each message records what every level above pays
// (Message.Upline), which refunds give back.
func (t *tree) legs(ctx context.Context, tx SendTx, snd pendingSend) ([]ledger.Leg, error) {
	c := snd.campaign
	if c.CreatedAt.After(t.last) {
		t.last = c.CreatedAt
	}
	if snd.alerts != nil {
		t.alerts[c.AccountID] = snd.alerts
	}
	own := ledger.Leg{AccountID: c.AccountID, Send: ledger.Send{CampaignID: c.ID, Charges: charges(snd.messages), At: c.CreatedAt}}
	if snd.parentID == "" || !c.Env.Live() { // test keys pay at no level: no chain to read
		t.depth[c.AccountID] = 0
		return []ledger.Leg{own}, nil
	}
	above, ok := t.above[c.AccountID]
	if !ok {
		var err error
		if above, err = tx.Ancestors(ctx, c.AccountID); err != nil {
			return nil, err
		}
		t.above[c.AccountID] = above
		for l, anc := range above {
			t.depth[anc.ID] = len(above) - 1 - l
			if al := alertsOf(anc); al != nil {
				t.alerts[anc.ID] = al
			}
		}
	}
	t.depth[c.AccountID] = len(above)
	prices := make([]domain.Prices, len(above))
	for l := range above {
		var err error
		if prices[l], err = above[l].PriceList(); err != nil {
			return nil, fmt.Errorf("account %s: %w", above[l].ID, err)
		}
	}
	var opened map[string]bool
	if cv := snd.conversations; cv != nil {
		opened = make(map[string]bool, len(cv.Phones))
		for _, p := range cv.Phones {
			opened[p] = true
		}
	}
	out := make([]ledger.Leg, 1+len(above))
	out[0] = own
	for l, anc := range above {
		out[l+1] = ledger.Leg{AccountID: anc.ID, Send: ledger.Send{CampaignID: c.ID,
			Charges: make([]ledger.Charge, len(snd.messages)), At: c.CreatedAt}}
	}
	for k := range snd.messages {
		m := &snd.messages[k]
		m.Upline = nil // a group run again after a conflict prices afresh
		if !m.Env.Live() || len(above) == 0 {
			continue // test keys never pay, at any level
		}
		if m.Status == domain.Failed {
			continue // blocked by the fraud guard: no level pays
		}
		m.Upline = make([]domain.Level, len(above))
		for l, anc := range above {
			lv := domain.LevelPrice(prices[l], anc.CountryCode, *m, opened[m.To])
			lv.AccountID = anc.ID
			m.Upline[l] = lv
			out[l+1].Send.Charges[k] = ledger.Charge{MessageID: m.ID, Amount: lv.Charged}
		}
	}
	return out, nil
}

// reserve debits the legs, the accounts ordered by depth (top first) and
// id, and returns which sends were charged and what the debits left of
// the accounts with alerts.
func (t *tree) reserve(ctx context.Context, tx SendTx, legs [][]ledger.Leg) ([]bool, []debit, error) {
	accounts := make([]string, 0, len(t.depth))
	for a := range t.depth {
		accounts = append(accounts, a)
	}
	slices.SortFunc(accounts, func(a, b string) int {
		if d := cmp.Compare(t.depth[a], t.depth[b]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	charged, after, err := ledger.ReserveLegs(ctx, tx, accounts, legs)
	if err != nil {
		return nil, nil, err
	}
	var out []debit
	for _, a := range accounts {
		if af := after[a]; af.Debited && t.alerts[a] != nil {
			out = append(out, debit{alerts: t.alerts[a], balance: af.Balance, at: t.last})
		}
	}
	return charged, out, nil
}

func charges(msgs []domain.Message) []ledger.Charge {
	out := make([]ledger.Charge, len(msgs))
	for i, m := range msgs {
		out[i] = ledger.Charge{MessageID: m.ID, Amount: m.Charged}
	}
	return out
}

// commitSend writes one send. Every check that can refuse it runs before
// its first row is written, since it shares the transaction with others.
func commitSend(ctx context.Context, tx SendTx, snd pendingSend, optedOut optedOutSets) (sendResult, error) {
	res, ok, err := claimKey(ctx, tx, snd)
	if err != nil || !ok {
		return res, err
	}
	if res, ok, err := checkOptOuts(ctx, tx, snd, optedOut); err != nil || !ok {
		return res, err
	}
	if err := tx.ReserveConversations(ctx, snd.conversations); err != nil {
		if !errors.Is(err, domain.ErrDailyLimit) {
			return sendResult{}, err
		}
		return refuse(ctx, tx, snd, err)
	}
	c := snd.campaign
	var after ledger.After
	var debited []debit
	if snd.parentID == "" {
		after, err = ledger.Reserve(ctx, tx, c.AccountID, c.ID, charges(snd.messages), c.CreatedAt)
	} else {
		t := newTree()
		var legs []ledger.Leg
		var charged []bool
		if legs, err = t.legs(ctx, tx, snd); err == nil {
			charged, debited, err = t.reserve(ctx, tx, [][]ledger.Leg{legs})
		}
		if err == nil && !charged[0] {
			err = ledger.ErrInsufficientCredits
		}
	}
	if err != nil {
		if !errors.Is(err, ledger.ErrInsufficientCredits) {
			return sendResult{}, err
		}
		if err := tx.ReleaseConversations(ctx, snd.conversations); err != nil {
			return sendResult{}, err
		}
		return refuse(ctx, tx, snd, err)
	}
	if err := tx.RecordConversations(ctx, snd.conversations); err != nil {
		return sendResult{}, err
	}
	if hasCampaignRow(c, snd.messages) {
		if err := tx.InsertCampaign(ctx, c); err != nil {
			return sendResult{}, err
		}
	}
	if err := InsertCounted(ctx, tx, snd.messages); err != nil {
		return sendResult{}, err
	}
	if after.Debited {
		debited = append(debited, debit{alerts: snd.alerts, balance: after.Balance, at: c.CreatedAt})
	}
	for _, d := range debited {
		if err := checkAlerts(ctx, tx, d.alerts, d.balance, d.at); err != nil {
			return sendResult{}, err
		}
	}
	return sendResult{}, nil
}

// refuse ends a send that a business rule refused: the refusal is its
// result, and its idempotency key is forgotten so that the client may
// retry once the balance or the limit allows.
func refuse(ctx context.Context, tx SendTx, snd pendingSend, why error) (sendResult, error) {
	if snd.idem != nil {
		if err := tx.ForgetIdempotency(ctx, snd.idem.KeyID, snd.idem.Key); err != nil {
			return sendResult{}, err
		}
	}
	return sendResult{err: why}, nil
}
