// Package trackingtest is an in-memory storage of what tracking and its
// notifiers write, for unit tests without a database: its Tx implements
// tracking.Tx and the notifiers' transaction interfaces (events, SMPP
// items), and its Store the tracker's reads. A transaction works on a copy
// of the rows and replaces them only when it commits, so a failed one
// leaves nothing behind. It keeps rows as given: no column the store would
// derive (an event's state, a feed position) is filled in.
package trackingtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

// Rows are the tables.
type Rows struct {
	Messages  map[string]domain.Message
	Balances  map[string]int64 // by account
	Ledger    []ledger.Entry
	Usage     []domain.UsageDelta
	Parts     []domain.Part
	Parked    []domain.PendingReport
	Events    []domain.Event
	SMPPItems []domain.SMPPItem
	Inbound   []domain.Inbound
	OptOuts   []domain.OptOut
	Campaigns []domain.Campaign
	Redacted  map[string]domain.Redaction // by message
	Alerts    map[string]string           // marks of alerts posted: account/event/period → event id
	Accounts  map[string]domain.Account
	// SMPPUsers are the accounts with SMPP users, by account and
	// environment ("acc_1/live").
	SMPPUsers map[string]bool
}

func (r Rows) clone() Rows {
	c := r
	c.Messages = maps.Clone(r.Messages)
	c.Balances = maps.Clone(r.Balances)
	c.Ledger = slices.Clone(r.Ledger)
	c.Usage = slices.Clone(r.Usage)
	c.Parts = slices.Clone(r.Parts)
	c.Parked = slices.Clone(r.Parked)
	c.Events = slices.Clone(r.Events)
	c.SMPPItems = slices.Clone(r.SMPPItems)
	c.Inbound = slices.Clone(r.Inbound)
	c.OptOuts = slices.Clone(r.OptOuts)
	c.Campaigns = slices.Clone(r.Campaigns)
	c.Redacted = maps.Clone(r.Redacted)
	c.Alerts = maps.Clone(r.Alerts)
	return c
}

// Store holds the rows; its zero value is empty and ready.
type Store struct {
	mu   sync.Mutex
	rows Rows
	// Fail, when set, is returned by the next transaction's commit (the
	// rows it wrote are dropped).
	Fail error
	// Writes counts committed transactions.
	Writes int
}

// Put adds messages as they are (no usage, no ledger).
func (s *Store) Put(msgs ...domain.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rows.Messages == nil {
		s.rows.Messages = map[string]domain.Message{}
	}
	for _, m := range msgs {
		s.rows.Messages[m.ID] = m
	}
}

// Seed changes the rows outside any transaction (accounts, balances,
// SMPP users).
func (s *Store) Seed(fn func(r *Rows)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.rows)
}

// Rows is a copy of the committed rows.
func (s *Store) Rows() Rows {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows.clone()
}

// Message is one committed message.
func (s *Store) Message(id string) domain.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows.Messages[id]
}

// Write runs fn in a transaction, one at a time.
func (s *Store) Write(_ context.Context, fn func(tx *Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx := &Tx{r: s.rows.clone()}
	if err := fn(tx); err != nil {
		return err
	}
	if err := s.Fail; err != nil {
		s.Fail = nil
		return err
	}
	s.rows = tx.r
	s.Writes++
	return nil
}

// Tx is a transaction on a copy of the rows.
type Tx struct{ r Rows }

// LockMessages implements tracking.StatusTx.
func (tx *Tx) LockMessages(_ context.Context, ids []string) (map[string]domain.Message, error) {
	out := make(map[string]domain.Message, len(ids))
	for _, id := range ids {
		if m, ok := tx.r.Messages[id]; ok {
			out[id] = m
		}
	}
	return out, nil
}

// MessageIDsByProviderRef implements tracking.StatusTx.
func (tx *Tx) MessageIDsByProviderRef(_ context.Context, provider string, refs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, m := range tx.r.Messages {
		if m.Provider == provider && m.ProviderRef != "" && slices.Contains(refs, m.ProviderRef) {
			out[m.ProviderRef] = m.ID
		}
	}
	return out, nil
}

// UpdateChangedMessages implements tracking.StatusTx: before must be the
// rows as they are.
func (tx *Tx) UpdateChangedMessages(_ context.Context, before, after []domain.Message) error {
	if len(before) != len(after) {
		return errors.New("trackingtest: before and after differ in length")
	}
	for i, b := range before {
		if cur, ok := tx.r.Messages[b.ID]; !ok || cur.Status != b.Status || cur.UpdatedAt != b.UpdatedAt {
			return fmt.Errorf("trackingtest: message %s changed since it was read", b.ID)
		}
		tx.r.Messages[after[i].ID] = after[i]
	}
	return nil
}

// InsertParts implements tracking.StatusTx.
func (tx *Tx) InsertParts(_ context.Context, ps []domain.Part) error {
	tx.r.Parts = append(tx.r.Parts, ps...)
	return nil
}

// PartsByRef implements tracking.StatusTx.
func (tx *Tx) PartsByRef(_ context.Context, provider string, refs []string) (map[string]domain.Part, error) {
	out := map[string]domain.Part{}
	for _, p := range tx.r.Parts {
		if p.Provider == provider && slices.Contains(refs, p.Ref) {
			out[p.Ref] = p
		}
	}
	return out, nil
}

// SetPartStatus implements tracking.StatusTx.
func (tx *Tx) SetPartStatus(_ context.Context, provider, ref string, status domain.Status) ([]domain.Part, error) {
	mid := ""
	for i, p := range tx.r.Parts {
		if p.Provider == provider && p.Ref == ref {
			tx.r.Parts[i].Status, mid = status, p.MessageID
		}
	}
	if mid == "" {
		return nil, fmt.Errorf("trackingtest: no part %s/%s", provider, ref)
	}
	var out []domain.Part
	for _, p := range tx.r.Parts {
		if p.MessageID == mid {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Part < out[j].Part })
	return out, nil
}

// ParkReports implements tracking.StatusTx.
func (tx *Tx) ParkReports(_ context.Context, rs []domain.PendingReport) error {
	tx.r.Parked = append(tx.r.Parked, rs...)
	return nil
}

// TakePendingReports implements tracking.StatusTx.
func (tx *Tx) TakePendingReports(_ context.Context, provider string, refs []string) ([]domain.PendingReport, error) {
	var out, kept []domain.PendingReport
	for _, r := range tx.r.Parked {
		if r.Provider == provider && slices.Contains(refs, r.Ref) {
			out = append(out, r)
		} else {
			kept = append(kept, r)
		}
	}
	tx.r.Parked = kept
	sort.SliceStable(out, func(i, j int) bool { return out[i].ReportedAt.Before(out[j].ReportedAt) })
	return out, nil
}

// AddBalance implements ledger.Tx.
func (tx *Tx) AddBalance(_ context.Context, accountID string, delta int64, _ time.Time) (int64, error) {
	if tx.r.Balances == nil {
		tx.r.Balances = map[string]int64{}
	}
	b := tx.r.Balances[accountID] + delta
	if b < 0 {
		return 0, ledger.ErrInsufficientCredits
	}
	tx.r.Balances[accountID] = b
	return b, nil
}

// InsertLedger implements ledger.Tx.
func (tx *Tx) InsertLedger(_ context.Context, entries []ledger.Entry) error {
	tx.r.Ledger = append(tx.r.Ledger, entries...)
	return nil
}

// BalanceRose implements ledger.Tx.
func (tx *Tx) BalanceRose(context.Context, string, int64) error { return nil }

// AddUsage implements tracking.UsageTx.
func (tx *Tx) AddUsage(_ context.Context, deltas []domain.UsageDelta) error {
	tx.r.Usage = append(tx.r.Usage, deltas...)
	return nil
}

// InsertEvents is the events' table (notify.EventTx, tracking.AlertTx).
func (tx *Tx) InsertEvents(_ context.Context, evs []domain.Event) error {
	tx.r.Events = append(tx.r.Events, evs...)
	return nil
}

// InsertSMPPItems is the deliver_sm queue (smppserver.ReceiptTx).
func (tx *Tx) InsertSMPPItems(_ context.Context, items []domain.SMPPItem) error {
	tx.r.SMPPItems = append(tx.r.SMPPItems, items...)
	return nil
}

// InsertInbound implements tracking.InboundTx: the same provider's
// reference twice is domain.ErrConflict.
func (tx *Tx) InsertInbound(_ context.Context, in domain.Inbound) error {
	for _, x := range tx.r.Inbound {
		if x.ID == in.ID || (in.ProviderRef != "" && x.Provider == in.Provider && x.ProviderRef == in.ProviderRef) {
			return domain.ErrConflict
		}
	}
	tx.r.Inbound = append(tx.r.Inbound, in)
	return nil
}

// AddOptOut implements tracking.InboundTx.
func (tx *Tx) AddOptOut(_ context.Context, o domain.OptOut) (bool, error) {
	for _, x := range tx.r.OptOuts {
		if x.AccountID == o.AccountID && x.Env == o.Env && x.Phone == o.Phone {
			return false, nil
		}
	}
	tx.r.OptOuts = append(tx.r.OptOuts, o)
	return true, nil
}

// RemoveOptOut implements tracking.InboundTx.
func (tx *Tx) RemoveOptOut(_ context.Context, accountID string, env domain.Environment, phone string) (bool, error) {
	n := len(tx.r.OptOuts)
	tx.r.OptOuts = slices.DeleteFunc(tx.r.OptOuts, func(x domain.OptOut) bool {
		return x.AccountID == accountID && x.Env == env && x.Phone == phone
	})
	return len(tx.r.OptOuts) < n, nil
}

// InsertCampaign implements tracking.InboundTx.
func (tx *Tx) InsertCampaign(_ context.Context, c domain.Campaign) error {
	tx.r.Campaigns = append(tx.r.Campaigns, c)
	return nil
}

// InsertMessages implements tracking.InboundTx.
func (tx *Tx) InsertMessages(_ context.Context, msgs []domain.Message) error {
	if tx.r.Messages == nil {
		tx.r.Messages = map[string]domain.Message{}
	}
	for _, m := range msgs {
		if _, ok := tx.r.Messages[m.ID]; ok {
			return domain.ErrConflict
		}
		tx.r.Messages[m.ID] = m
	}
	return nil
}

// MarkAlert implements tracking.AlertTx.
func (tx *Tx) MarkAlert(_ context.Context, accountID, event, period, eventID string, _ time.Time) (bool, error) {
	return tx.mark(accountID+"/"+event+"/"+period, eventID), nil
}

// MarkSpend implements tracking.AlertTx.
func (tx *Tx) MarkSpend(_ context.Context, accountID string, day, threshold int64, eventID string, _ time.Time) (bool, error) {
	return tx.mark(fmt.Sprintf("%s/spend/%d/%d", accountID, day, threshold), eventID), nil
}

func (tx *Tx) mark(key, eventID string) bool {
	if _, ok := tx.r.Alerts[key]; ok {
		return false
	}
	if tx.r.Alerts == nil {
		tx.r.Alerts = map[string]string{}
	}
	tx.r.Alerts[key] = eventID
	return true
}

// RedactMessages implements tracking.RedactTx: it records the redaction
// and empties the text.
func (tx *Tx) RedactMessages(_ context.Context, ids []string, r domain.Redaction) error {
	if tx.r.Redacted == nil {
		tx.r.Redacted = map[string]domain.Redaction{}
	}
	for _, id := range ids {
		m, ok := tx.r.Messages[id]
		if !ok {
			continue
		}
		m.Body = ""
		tx.r.Messages[id] = m
		tx.r.Redacted[id] = r
	}
	return nil
}

// The tracker's reads.

// LatestMessageTo implements tracking.Store.
func (s *Store) LatestMessageTo(_ context.Context, accountID string, env domain.Environment, phone string, since time.Time) (domain.Message, error) {
	return s.latest(func(m domain.Message) bool {
		return m.AccountID == accountID && m.Env == env && m.To == phone && !m.CreatedAt.Before(since)
	})
}

// LatestMessageVia implements tracking.Store.
func (s *Store) LatestMessageVia(_ context.Context, provider, phone string, since time.Time) (domain.Message, error) {
	return s.latest(func(m domain.Message) bool {
		return m.Provider == provider && m.To == phone && !m.CreatedAt.Before(since)
	})
}

func (s *Store) latest(match func(domain.Message) bool) (domain.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out domain.Message
	found := false
	for _, m := range s.rows.Messages {
		if match(m) && (!found || m.CreatedAt.After(out.CreatedAt) || (m.CreatedAt.Equal(out.CreatedAt) && m.ID > out.ID)) {
			out, found = m, true
		}
	}
	if !found {
		return domain.Message{}, domain.ErrNotFound
	}
	return out, nil
}

// MessageByID implements tracking.Store.
func (s *Store) MessageByID(_ context.Context, id string) (domain.Message, error) {
	return lookup(s, func(r *Rows) map[string]domain.Message { return r.Messages }, id)
}

// lookup reads one row of a table by id, or domain.ErrNotFound.
func lookup[T any](s *Store, table func(r *Rows) map[string]T, id string) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := table(&s.rows)[id]
	if !ok {
		return v, domain.ErrNotFound
	}
	return v, nil
}

// SenderOwners implements tracking.Store: the accounts whose senders of
// the channel include value.
func (s *Store) SenderOwners(_ context.Context, channel domain.Channel, value string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, a := range s.rows.Accounts {
		if slices.Contains(a.Senders[channel].Values, value) {
			out = append(out, a.ID)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Account implements tracking.Store.
func (s *Store) Account(_ context.Context, id string) (domain.Account, error) {
	return lookup(s, func(r *Rows) map[string]domain.Account { return r.Accounts }, id)
}

// KnownParkedRefs implements tracking.Store: parked references that a
// message now carries, by provider.
func (s *Store) KnownParkedRefs(_ context.Context, limit int) (map[string][]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{}
	n := 0
	for _, r := range s.rows.Parked {
		if n >= limit {
			break
		}
		for _, m := range s.rows.Messages {
			if m.Provider == r.Provider && m.ProviderRef == r.Ref && !slices.Contains(out[r.Provider], r.Ref) {
				out[r.Provider] = append(out[r.Provider], r.Ref)
				n++
				break
			}
		}
	}
	return out, nil
}

// HasSMPPUsers is the SMPP notifier's read.
func (s *Store) HasSMPPUsers(_ context.Context, accountID string, env domain.Environment) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows.SMPPUsers[accountID+"/"+string(env)], nil
}
