package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
)

// On SQLite one process holds the database, so the fraud guard's counts
// are kept in that process's memory rather than upserted as rows with
// every group: a counter row cost about as much CPU as the rest of the
// guard together. The messages are the truth the memory is rebuilt from:
// an hour this process has not seen from its start (it started within
// it, or another connection wrote to the file) has each counter seeded
// once from the messages of the hour when first touched. Countries are
// few, so their counts are also written as rows, at most once a second
// (rowsEvery): they seed a country's counter and are what its baseline is
// read from. The counts committed since the last write are kept as
// pending and added to every read of the rows; a crash loses at most that
// second of the countries' counts, which only the burst rule reads (the
// caps of recipients and ranges are taken from the messages).
//
// Memory changes with the write transaction that made them: a transaction
// stages its counts, and they join the memory when it commits, under the
// lock a committing transaction holds until its commit has returned, so
// the next transaction (the only writer connection) starts from them.

// maxFraudKeys bounds the keys kept for an hour; past it the hour is
// forgotten and its counters seeded again from the messages.
const maxFraudKeys = 1_000_000

// versionEvery is how often a transaction reads PRAGMA data_version: at
// a node's rate, reading it in every transaction cost more than the rest
// of the counting. Another process's writes to the file are seen within
// that time, so two processes on one file may together pass a cap by
// what the other sent meanwhile, before the counts are seeded again.
const versionEvery = 100 * time.Millisecond

// rowsEvery is how often the countries' counts are written as rows.
const rowsEvery = time.Second

// fraudMemory is the process's counts, by Unix hour.
type fraudMemory struct {
	mu sync.Mutex
	// version is PRAGMA data_version as last seen by the writer
	// connection: it moves only when another connection commits, which
	// makes every hour incomplete again.
	version int64
	// checkedAt is when version was last read (versionEvery).
	checkedAt time.Time
	hours     map[int64]*fraudHourMem
	// pending are the countries' counts committed and not yet written as
	// rows (rowsEvery); flushedAt is when they last were.
	pending   map[fraudHourKey]domain.FraudCount
	flushedAt time.Time
	// marks are the decisions' hour rows known to exist (fraud_hours): a
	// decision of a known row adds to markPending, written with the
	// countries' rows, instead of an upsert in its transaction. Only a
	// row's first decision needs the upsert: it tells whether the row is
	// new, which sends the hour's alert.
	marks       map[markKey]bool
	marksHour   int64 // the latest hour of marks: older than the one before it are forgotten
	markPending map[markKey]domain.FraudHour
	spare       *fraudTx // fraudState
	// gen counts the commits joined to the memory: a count missing from
	// it when a transaction met it is still missing at that
	// transaction's commit when no commit came between.
	gen uint64
}

// markKey is a row of fraud_hours.
type markKey struct {
	hour                int64
	account, rule, fkey string
}

func markKeyOf(h domain.FraudHour) markKey {
	return markKey{hourOf(h.Hour), h.AccountID, h.Rule, h.Key}
}

// fraudHourMem is one hour's counts. complete: no message of the hour
// existed when the process first met the hour, and none was written by
// another connection since, so a key missing here counts 0; otherwise a
// missing key is seeded from the messages.
type fraudHourMem struct {
	complete bool
	idx      map[memCountKey]int32 // into vals
	vals     []int64
}

func newFraudHourMem(complete bool) *fraudHourMem {
	return &fraudHourMem{complete: complete, idx: map[memCountKey]int32{}}
}

func newFraudMemory() *fraudMemory {
	return &fraudMemory{hours: map[int64]*fraudHourMem{}, pending: map[fraudHourKey]domain.FraudCount{},
		marks: map[markKey]bool{}, markPending: map[markKey]domain.FraudHour{}}
}

// fraudTx is one transaction's staged counts: the seeds it read (committed
// counts, or counts including earlier writes of the same transaction),
// the hours it found complete, and its own additions in order, so that a
// write's savepoint rolled back takes back its additions.
type fraudTx struct {
	checked bool // data_version read in this transaction
	hours   map[int64]bool
	// cellv are the counts met, each with where it stands in memory, so
	// that the commit adds to it without a lookup. A transaction of a
	// node meets a few (three a message, one or two sends): they are
	// found by a scan, and cells indexes them only past smallCells.
	cells map[fraudHourKey]int32
	cellv []txCell
	log   []fraudDelta
	// The country counts met (txCell.row) become pending once
	// committed, or are written as rows with the pending ones when the
	// transaction flushes them (flushed: how much of each pending count
	// it wrote).
	flushed map[fraudHourKey]int64
	// markLog are the decisions' hour marks in order: a row this
	// transaction upserted, or messages added to a known row.
	markLog      []markEntry
	marksFlushed map[markKey]int64
}

type markEntry struct {
	h        domain.FraudHour
	upserted bool
}

// fraudHourKey is a count's key and hour.
type fraudHourKey struct {
	hour int64
	key  memCountKey
}

type fraudDelta struct {
	cell int32
	n    int64
}

// txCell is a count met by the transaction: its total before (the
// memory's, or seeded from the messages) and what the transaction added;
// hm and at are its place in the memory (hm its hour's, nil when the hour
// had none; at -1 when the hour had no such count), as of the memory's
// gen; row: a country's count, also kept as rows.
type txCell struct {
	hk          fraudHourKey
	base, added int64
	hm          *fraudHourMem
	at          int32
	row         bool
	gen         uint64
}

// countOf is the cell's count as a row holds it (its N 0).
func (c *txCell) countOf() domain.FraudCount {
	k := c.hk.key
	return domain.FraudCount{AccountID: k.account, Env: k.env, Scope: k.scope, Key: k.key, Hour: c.hk.hour}
}

// smallCells is how many counts a transaction finds by a scan before it
// indexes them: below it a scan costs less than hashing the key.
const smallCells = 16

// cellOf finds the count's cell.
func (fx *fraudTx) cellOf(hk fraudHourKey) (int32, bool) {
	if fx.cells != nil {
		i, ok := fx.cells[hk]
		return i, ok
	}
	for i := range fx.cellv {
		if fx.cellv[i].hk == hk {
			return int32(i), true
		}
	}
	return 0, false
}

// addCell adds a cell met for the first time.
func (fx *fraudTx) addCell(c txCell) int32 {
	i := int32(len(fx.cellv))
	fx.cellv = append(fx.cellv, c)
	switch {
	case fx.cells != nil:
		fx.cells[c.hk] = i
	case len(fx.cellv) > smallCells:
		fx.cells = make(map[fraudHourKey]int32, 2*len(fx.cellv))
		for j := range fx.cellv {
			fx.cells[fx.cellv[j].hk] = int32(j)
		}
	}
	return i
}

// memScope tells which counts SQLite keeps in memory: all of them, the
// countries' also as rows, written at most once a second (flushFraudRows).
func memScope(scope string) bool {
	return scope == domain.ScopeRecipient || scope == domain.ScopeRange || scope == domain.ScopeCountry
}

// memCountKey is a count's key within its hour: a struct rather than
// one text, which would be built (allocated) for every count.
type memCountKey struct {
	account string
	env     domain.Environment
	scope   string
	key     string
}

func memKey(c domain.FraudCount) memCountKey { return memCountKey{c.AccountID, c.Env, c.Scope, c.Key} }

// fraudState is the transaction's staged counts, made on first use; it
// is called with the memory's lock held, and takes the state a committed
// transaction left (its maps emptied, their room kept): a node commits
// hundreds of small transactions a second.
func (tx *Tx) fraudState() *fraudTx {
	if tx.fx == nil {
		if m := tx.s.fmem; m.spare != nil {
			tx.fx, m.spare = m.spare, nil
		} else {
			tx.fx = &fraudTx{hours: map[int64]bool{}}
		}
	}
	return tx.fx
}

// spareFraudState keeps a committed transaction's state for the next
// one. Called with the memory's lock held. A large transaction's index
// and slices are dropped rather than kept: clearing a map costs as much
// as its largest size, which the next transactions would pay each.
func (tx *Tx) spareFraudState() {
	fx := tx.fx
	tx.fx = nil
	fx.checked = false
	if len(fx.hours) > 4 {
		fx.hours = map[int64]bool{}
	} else {
		clear(fx.hours)
	}
	fx.cells = nil
	if cap(fx.cellv) > 4*smallCells {
		fx.cellv, fx.log = nil, nil
	}
	fx.cellv = fx.cellv[:0]
	fx.log, fx.markLog = fx.log[:0], fx.markLog[:0]
	fx.flushed, fx.marksFlushed = nil, nil
	tx.s.fmem.spare = fx
}

// fraudMark is where a write of a careful group starts; fraudUndo takes
// back what the write staged after it, when its savepoint is rolled back.
type fraudMarkAt struct{ log, marks int }

func (tx *Tx) fraudMark() fraudMarkAt {
	if tx.fx == nil {
		return fraudMarkAt{}
	}
	return fraudMarkAt{len(tx.fx.log), len(tx.fx.markLog)}
}

func (tx *Tx) fraudUndo(at fraudMarkAt) {
	fx := tx.fx
	if fx == nil {
		return
	}
	if len(fx.log) > at.log {
		for _, d := range fx.log[at.log:] {
			fx.cellv[d.cell].added -= d.n
		}
		fx.log = fx.log[:at.log]
	}
	if len(fx.markLog) > at.marks {
		fx.markLog = fx.markLog[:at.marks]
	}
}

// syncFraud checks, at most once per versionEvery, that no other
// connection wrote since this process last looked; if one did, the memory
// is dropped and every hour seeded afresh. Called with the memory's lock
// held.
func (tx *Tx) syncFraud(ctx context.Context, m *fraudMemory) error {
	fx := tx.fraudState()
	if fx.checked {
		return nil
	}
	now := tx.s.now()
	if since := now.Sub(m.checkedAt); m.version != 0 && since >= 0 && since < versionEvery {
		fx.checked = true
		return nil
	}
	var v int64
	if err := tx.queryRow(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		return fmt.Errorf("fraud counts: data version: %w", err)
	}
	if m.version != 0 && v != m.version {
		m.hours = map[int64]*fraudHourMem{}
	}
	m.version, m.checkedAt, fx.checked = v, now, true
	return nil
}

// hourComplete tells whether the hour's memory is whole, meeting the hour
// when new: it is whole when no message of it exists yet. Called with the
// memory's lock held.
func (tx *Tx) hourComplete(ctx context.Context, m *fraudMemory, hour int64) (bool, error) {
	if h, ok := m.hours[hour]; ok {
		return h.complete, nil
	}
	fx := tx.fraudState()
	if c, ok := fx.hours[hour]; ok {
		return c, nil
	}
	var one int
	err := tx.queryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM messages WHERE id >= $1 AND id < $2 LIMIT 1)`,
		hourID(hour), hourID(hour+1)).Scan(&one)
	if err != nil {
		return false, fmt.Errorf("fraud counts: hour probe: %w", err)
	}
	fx.hours[hour] = one == 0
	return one == 0, nil
}

// meetHours is called before messages are inserted: the first messages
// of an hour written by this process must not make it look incomplete.
func (tx *Tx) meetHours(ctx context.Context, msgs []domain.Message) error {
	m := tx.s.fmem
	if m == nil || len(msgs) == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var last int64 = -1
	for i := range msgs {
		h := msgs[i].CreatedAt.Unix() / 3600
		if h == last {
			continue
		}
		last = h
		if _, ok := m.hours[h]; ok {
			continue
		}
		if err := tx.syncFraud(ctx, m); err != nil {
			return err
		}
		if _, err := tx.hourComplete(ctx, m, h); err != nil {
			return err
		}
	}
	return nil
}

// hourID is the least message id of a Unix hour: ids start with their
// time, so the ids of an hour are [hourID(h), hourID(h+1)).
func hourID(hour int64) string { return id.Floor(id.Message, time.Unix(hour*3600, 0)) }

// countsGoOut is the condition on a message row that it counts: not
// blocked or held by the guard (an alert-only decision counts).
const countsGoOut = `(fraud = '' OR fraud LIKE '%"action":"alert"%')`

// seedFraud counts the messages of the count's account, environment and
// key (a number, or a range: the numbers of its length plus 3 with it as
// prefix) whose ids fall in the hours [from, to); a country's count is
// the sum of its rows over those hours.
func (tx *Tx) seedFraud(ctx context.Context, c domain.FraudCount, from, to int64) (int64, error) {
	var n int64
	var err error
	switch c.Scope {
	case domain.ScopeCountry:
		// Its rows, and the counts committed since they were written.
		c.Hour = to
		got, err := tx.trailingFraudRows(ctx, []domain.FraudCount{c}, to-from)
		if err != nil {
			return 0, err
		}
		return got[0] + tx.s.fmem.pendingSum(c, from, to), nil
	case domain.ScopeRecipient:
		err = tx.queryRow(ctx, `SELECT count(*) FROM messages WHERE account_id = $1 AND to_phone = $2
			AND env = $3 AND id >= $4 AND id < $5 AND `+countsGoOut,
			c.AccountID, c.Key, string(c.Env), hourID(from), hourID(to)).Scan(&n)
	default:
		// A range is its numbers' digits but the last RangeDigits: every
		// such number sorts in [key, key+":") (':' follows the digits) and
		// has that length; a number no longer than RangeDigits is its own
		// range.
		self := ""
		if len(c.Key) <= domain.RangeDigits {
			self = c.Key
		}
		err = tx.queryRow(ctx, `SELECT count(*) FROM messages WHERE account_id = $1
			AND to_phone >= $2 AND to_phone < $3 AND (length(to_phone) = $4 OR to_phone = $5)
			AND env = $6 AND id >= $7 AND id < $8 AND `+countsGoOut,
			c.AccountID, c.Key, c.Key+":", len(c.Key)+domain.RangeDigits, self, string(c.Env), hourID(from), hourID(to)).Scan(&n)
	}
	if err != nil {
		return 0, fmt.Errorf("fraud counts: seed %s: %w", c.Scope, err)
	}
	return n, nil
}

// addMemCounts adds counts kept in memory (cs[idx], or all of cs when
// idx is nil) and returns their totals after, staging them in the
// transaction.
func (tx *Tx) addMemCounts(ctx context.Context, cs []domain.FraudCount, idx []int, out []int64) error {
	m := tx.s.fmem
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := tx.syncFraud(ctx, m); err != nil {
		return err
	}
	fx := tx.fx
	n := len(idx)
	if idx == nil {
		n = len(cs)
	}
	for j := range n {
		i := j
		if idx != nil {
			i = idx[j]
		}
		c := &cs[i]
		key := memKey(*c)
		hk := fraudHourKey{c.Hour, key}
		ci, ok := fx.cellOf(hk)
		if !ok {
			cell := txCell{hk: hk, at: -1, row: c.Scope == domain.ScopeCountry, gen: m.gen}
			if h := m.hours[c.Hour]; h != nil {
				cell.hm = h
				if at, ok := h.idx[key]; ok {
					cell.at, cell.base = at, h.vals[at]
				}
			}
			if cell.at < 0 {
				complete, err := tx.hourComplete(ctx, m, c.Hour)
				if err != nil {
					return err
				}
				if !complete {
					if cell.base, err = tx.seedFraud(ctx, *c, c.Hour, c.Hour+1); err != nil {
						return err
					}
				}
			}
			ci = fx.addCell(cell)
		}
		cell := &fx.cellv[ci]
		fx.log = append(fx.log, fraudDelta{ci, c.N})
		cell.added += c.N
		out[i] = cell.base + cell.added
	}
	return nil
}

// commitFraud joins the transaction's staged counts to the memory; it is
// called with the memory's lock held, just before the commit. Only the
// latest hour met and the one before are kept.
func (tx *Tx) commitFraud() {
	m, fx := tx.s.fmem, tx.fx
	if m == nil || fx == nil {
		return
	}
	// Whether an hour was added or grew past its bound: only then are
	// the hours looked over (most commits add to known hours).
	prune := false
	for h, complete := range fx.hours {
		if _, ok := m.hours[h]; !ok {
			m.hours[h] = newFraudHourMem(complete)
			prune = true
		}
	}
	for i := range fx.cellv {
		c := &fx.cellv[i]
		hm := m.hours[c.hk.hour]
		if c.hm != nil && c.hm == hm {
			if c.at >= 0 {
				hm.vals[c.at] += c.added
				continue
			}
			if c.gen == m.gen {
				// Missing when counted, and no commit since: added
				// without looking it up again.
				hm.idx[c.hk.key] = int32(len(hm.vals))
				hm.vals = append(hm.vals, c.base+c.added)
				prune = prune || len(hm.vals) > maxFraudKeys
				continue
			}
		}
		if hm == nil {
			// Met without a probe (a key seeded in an hour whose state
			// another transaction dropped): incomplete, so seeded.
			hm = newFraudHourMem(false)
			m.hours[c.hk.hour] = hm
			prune = true
		}
		if at, ok := hm.idx[c.hk.key]; ok {
			hm.vals[at] += c.added
		} else {
			hm.idx[c.hk.key] = int32(len(hm.vals))
			hm.vals = append(hm.vals, c.base+c.added)
			prune = prune || len(hm.vals) > maxFraudKeys
		}
	}
	m.gen++
	if !prune {
		return
	}
	var latest int64
	for h := range m.hours {
		latest = max(latest, h)
	}
	for h, hm := range m.hours {
		if h < latest-1 || len(hm.vals) > maxFraudKeys {
			delete(m.hours, h)
		}
	}
}

// forgetFraud drops the memory: a commit that failed may or may not have
// written, so every hour is seeded again from the messages.
func (s *Store) forgetFraud() {
	if s.fmem != nil {
		s.fmem.hours = map[int64]*fraudHourMem{}
		s.fmem.version = 0
	}
}

// pendingSum is the country count's pending counts over the hours
// [from, to). Called with the memory's lock held.
func (m *fraudMemory) pendingSum(c domain.FraudCount, from, to int64) int64 {
	if len(m.pending) == 0 {
		return 0
	}
	key := memKey(c)
	var n int64
	for h := from; h < to; h++ {
		n += m.pending[fraudHourKey{h, key}].N
	}
	return n
}

// flushFraudRows writes the countries' counts as rows, once rowsEvery
// has passed since they last were: the pending ones and those the
// transaction added, net of those taken back, in one statement just
// before its commit; and the decisions pending on known hour rows.
// Otherwise the transaction's counts become pending when it commits
// (settleFraudRows).
func (tx *Tx) flushFraudRows(ctx context.Context) error {
	m := tx.s.fmem
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if since := tx.s.now().Sub(m.flushedAt); since >= 0 && since < rowsEvery {
		return nil
	}
	fx := tx.fraudState()
	fx.marksFlushed = make(map[markKey]int64, len(m.markPending))
	for k, h := range m.markPending {
		if _, err := tx.upsertFraudHour(ctx, h); err != nil {
			return err
		}
		fx.marksFlushed[k] = h.Messages
	}
	sum := make(map[fraudHourKey]domain.FraudCount, len(m.pending)+len(fx.cellv))
	fx.flushed = make(map[fraudHourKey]int64, len(m.pending))
	for hk, c := range m.pending {
		sum[hk] = c
		fx.flushed[hk] = c.N
	}
	for i := range fx.cellv {
		if c := &fx.cellv[i]; c.row {
			addPending(sum, c.hk, c.countOf(), c.added, countN)
		}
	}
	if len(sum) == 0 {
		return nil
	}
	cs := make([]domain.FraudCount, 0, len(sum))
	for _, c := range sum {
		cs = append(cs, c)
	}
	_, err := tx.addFraudRows(ctx, cs)
	return err
}

// settleFraudRows records, once the transaction has committed, what it
// did to the rows: the pending counts and decisions it wrote are no
// longer pending; if it wrote no counts, its own now are pending, and its
// decisions on known rows always are; the rows it upserted are known.
// Called with the memory's lock held.
func (tx *Tx) settleFraudRows() {
	m, fx := tx.s.fmem, tx.fx
	for _, e := range fx.markLog {
		k := markKeyOf(e.h)
		if e.upserted {
			if k.hour > m.marksHour {
				m.marksHour = k.hour
				for old := range m.marks {
					if old.hour < k.hour-1 {
						delete(m.marks, old)
					}
				}
			}
			m.marks[k] = true
			continue
		}
		addPending(m.markPending, k, e.h, e.h.Messages, hourMessages)
	}
	for k, n := range fx.marksFlushed {
		addPending(m.markPending, k, domain.FraudHour{}, -n, hourMessages)
	}
	if fx.flushed != nil {
		for hk, n := range fx.flushed {
			addPending(m.pending, hk, domain.FraudCount{}, -n, countN)
		}
		m.flushedAt = tx.s.now()
		return
	}
	for i := range fx.cellv {
		if c := &fx.cellv[i]; c.row {
			addPending(m.pending, c.hk, c.countOf(), c.added, countN)
		}
	}
}

// addPending adds n to the count of pending's entry k, made from tmpl
// (its count taken as 0) when missing; an entry whose count comes to 0
// is dropped. count names the entry's count. It serves the countries'
// counts and the decisions' hours, pending and about to be written.
func addPending[K comparable, V any](pending map[K]V, k K, tmpl V, n int64, count func(*V) *int64) {
	if n == 0 {
		return
	}
	v, ok := pending[k]
	if !ok {
		v = tmpl
		*count(&v) = 0
	}
	c := count(&v)
	if *c += n; *c == 0 {
		delete(pending, k)
		return
	}
	pending[k] = v
}

func countN(c *domain.FraudCount) *int64      { return &c.N }
func hourMessages(h *domain.FraudHour) *int64 { return &h.Messages }

// markMemHours is MarkFraudHours on SQLite: a row not known to exist is
// upserted now, which tells whether it is new; a known row's decisions
// are staged, pending once committed. Called without the memory's lock.
func (tx *Tx) markMemHours(ctx context.Context, hs []domain.FraudHour) ([]bool, error) {
	m := tx.s.fmem
	m.mu.Lock()
	defer m.mu.Unlock()
	fx := tx.fraudState()
	fresh := make([]bool, len(hs))
	for i, h := range hs {
		k := markKeyOf(h)
		if m.marks[k] || fx.upserted(k) {
			fx.markLog = append(fx.markLog, markEntry{h: h})
			continue
		}
		isNew, err := tx.upsertFraudHour(ctx, h)
		if err != nil {
			return nil, err
		}
		fresh[i] = isNew
		fx.markLog = append(fx.markLog, markEntry{h: h, upserted: true})
	}
	return fresh, nil
}

// upserted tells whether the transaction upserted the row (a savepoint
// rolled back takes its entries out of the log).
func (fx *fraudTx) upserted(k markKey) bool {
	for _, e := range fx.markLog {
		if e.upserted && markKeyOf(e.h) == k {
			return true
		}
	}
	return false
}

// addPendingMarks adds to rows read from fraud_hours the decisions
// pending on them.
func (s *Store) addPendingMarks(rows []domain.FraudHour) {
	m := s.fmem
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.markPending) == 0 {
		return
	}
	for i := range rows {
		rows[i].Messages += m.markPending[markKeyOf(rows[i])].Messages
	}
}

// flushPendingFraud writes the pending countries' counts as rows, when
// the store closes.
func (s *Store) flushPendingFraud(ctx context.Context) error {
	m := s.fmem
	if m == nil {
		return nil
	}
	m.mu.Lock()
	idle := len(m.pending) == 0 && len(m.markPending) == 0
	m.flushedAt = time.Time{}
	m.mu.Unlock()
	if idle {
		return nil
	}
	_, err := s.writeOnce(ctx, nil, false)
	return err
}
