package smppserver

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/channel/sms"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/lease"
	smpp "github.com/msgsvc/msgsvc/internal/pdu"
)

// Items is the table of deliver_sm waiting for their SMPP user's binds.
type Items interface {
	ClaimSMPPItems(ctx context.Context, users, accounts map[string]int, owner string, now time.Time, lease time.Duration,
		limit int) ([]domain.SMPPItem, error)
	ReleaseSMPPItems(ctx context.Context, owner string, ids []string, now time.Time) error
	AckSMPPItems(ctx context.Context, ids []string) error
	PurgeSMPPItems(ctx context.Context, now time.Time) (int64, error)
}

// laneCap is how many rows of one SMPP user wait in memory for room in
// its binds' windows, as a multiple of the window. A user past it (a
// receiver that stopped reading) has its newer rows wait in the table.
const laneCap = 4

// receiptQueue is the leased queue of waiting deliver_sm. Rows come to
// it two ways: a receipt for a user with a receiving bind here is written
// already leased to this node and handed over after its commit, without a
// claim; and this node claims from the table the rows of the users bound
// to it for receiving that were written elsewhere, before the bind, or
// given back (each user no more than its binds' windows have room for, so
// that one user's stalled receiver never holds back the others'). Either
// way a row joins its user's lane, oldest first, and goes out as soon as a
// receiving bind's window has room, pipelined; each is deleted once a bind
// acknowledged it. A row whose bind went away is released at once for the
// user's next bind, here or on another node; one a bind refused waits out
// its lease and goes again.
type receiptQueue struct {
	srv *Server
	q   *lease.Queue[queued]

	mu sync.Mutex
	// held counts the rows claimed and not yet in their lane, by user and
	// by account: a bind's window has room only for what is neither in
	// flight, nor waiting in its lane, nor about to.
	held  map[string]int
	heldA map[string]int
	lanes map[string]*lane // by SMPP user

	// backlog names the users whose new rows go to the table rather than
	// their lane, because older rows of theirs may wait there: since
	// their bind, or since their lane filled up, until a claim finds
	// their due rows all taken. Under its own lock, which is never held
	// across a write: the transactions that write receipts read it.
	bmu     sync.Mutex
	backlog map[string]bool

	amu    sync.Mutex
	acks   []string // acknowledged rows not yet deleted
	acking bool     // a goroutine is deleting acknowledged rows
}

// queued is a row of the queue: claimed from the table, or handed over by
// the transaction that wrote it.
type queued struct {
	domain.SMPPItem
	claimed bool
}

// lane is what one SMPP user's binds have to receive on this node.
type lane struct {
	acct    string            // "accountID:env"
	items   []domain.SMPPItem // not yet written, oldest first
	pumping bool              // a goroutine is writing them
	again   bool              // room or rows came while it wrote
}

func newReceiptQueue(s *Server) *receiptQueue {
	rq := &receiptQueue{srv: s, held: map[string]int{}, heldA: map[string]int{}, lanes: map[string]*lane{},
		backlog: map[string]bool{}}
	// One handler at a time: rows handed over in memory reach the lanes in
	// the order they were handed, so a later chunk cannot be written to a
	// bind before an earlier one is in its lane (oldest first). Handling
	// only fills lanes and starts writes that do not wait for answers.
	rq.q = lease.New(lease.Config[queued]{Name: "smpp receipts", Owner: s.cfg.Owner,
		Lease: 2 * s.cfg.ResponseTimeout, Claim: rq.claim, Release: s.cfg.Items.ReleaseSMPPItems,
		ID: func(it queued) string { return it.ID }, Until: func(it queued) time.Time { return it.NextAttemptAt },
		Batch: 256, Workers: 1, Poll: s.cfg.Poll, Now: s.cfg.Now, Log: s.cfg.Log})
	return rq
}

// lease says whether a new row of a user is handed over here, and until
// when it is then leased: when the user has a receiving bind on this node
// and no backlog in the table.
func (rq *receiptQueue) lease(userID string) (time.Time, bool) {
	if userID == "" || !rq.srv.binds.receivesHere(userID) {
		return time.Time{}, false
	}
	rq.bmu.Lock()
	behind := rq.backlog[userID]
	rq.bmu.Unlock()
	if behind {
		return time.Time{}, false
	}
	return rq.srv.cfg.Now().Add(rq.q.Lease()), true
}

// bound notes a new receiving bind of a user: rows of the user may wait
// in the table, so its new rows go there too until a claim took them.
func (rq *receiptQueue) bound(userID string) {
	rq.bmu.Lock()
	rq.backlog[userID] = true
	rq.bmu.Unlock()
	rq.q.Wake()
}

// unbound notes that a receiving bind of a user closed: what waits in its
// lane goes to another bind of the user, or back to the table.
func (rq *receiptQueue) unbound(ctx context.Context, userID string) {
	if !rq.srv.binds.receivesHere(userID) {
		rq.bmu.Lock()
		delete(rq.backlog, userID)
		rq.bmu.Unlock()
	}
	rq.pump(ctx, userID)
}

// hand takes rows written leased to this node, after their commit.
func (rq *receiptQueue) hand(ctx context.Context, items []domain.SMPPItem) {
	qs := make([]queued, len(items))
	for i, it := range items {
		qs[i] = queued{SMPPItem: it}
	}
	rq.q.Hand(ctx, qs)
}

// claim leases the due rows of the users with a receiving bind here, each
// no more than its binds' windows have room for, less what waits for them
// here already. It first looks over the lanes: rows whose lease runs short
// go back to the table, and rows that found no room try again.
func (rq *receiptQueue) claim(ctx context.Context, owner string, now time.Time, d time.Duration, limit int) ([]queued, error) {
	rq.sweep(ctx)
	rq.mu.Lock()
	defer rq.mu.Unlock()
	users, accounts := rq.srv.binds.receivers()
	waiting := map[string]int{}
	for _, l := range rq.lanes {
		waiting[l.acct] += len(l.items)
	}
	for u, room := range users {
		if l := rq.lanes[u]; l != nil {
			room -= len(l.items)
		}
		if room -= rq.held[u]; room > 0 {
			users[u] = room
		} else {
			delete(users, u)
		}
	}
	for a, room := range accounts {
		if room -= rq.heldA[a] + waiting[a]; room > 0 {
			accounts[a] = room
		} else {
			delete(accounts, a)
		}
	}
	if len(users) == 0 {
		return nil, nil
	}
	items, err := rq.srv.cfg.Items.ClaimSMPPItems(ctx, users, accounts, owner, now, d, limit)
	rq.hold(items, 1)
	got := map[string]int{}
	out := make([]queued, len(items))
	for i, it := range items {
		got[it.UserID]++
		out[i] = queued{SMPPItem: it, claimed: true}
	}
	if err == nil {
		rq.bmu.Lock()
		for u, quota := range users {
			if got[u] < quota {
				delete(rq.backlog, u) // the table holds no more of the user's rows due now
			}
		}
		rq.bmu.Unlock()
	}
	return out, err
}

func (rq *receiptQueue) run(ctx context.Context) {
	rq.q.Run(ctx, rq.handle)
	// Whatever still waits here goes back to the table for the next bind.
	rq.mu.Lock()
	var left []string
	for u, l := range rq.lanes {
		for _, it := range l.items {
			left = append(left, it.ID)
		}
		l.items = nil
		delete(rq.lanes, u)
	}
	rq.mu.Unlock()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	rq.release(rctx, left)
}

// hold adds n (1 when claimed, -1 once in a lane or released) to the rows
// held for the items' users and accounts; the caller holds rq.mu.
func (rq *receiptQueue) hold(items []domain.SMPPItem, n int) {
	for _, it := range items {
		if it.UserID != "" {
			if rq.held[it.UserID] += n; rq.held[it.UserID] <= 0 {
				delete(rq.held, it.UserID)
			}
		}
		a := it.AccountID + ":" + string(it.Env)
		if rq.heldA[a] += n; rq.heldA[a] <= 0 {
			delete(rq.heldA, a)
		}
	}
}

// handle puts rows, claimed or handed over, in their users' lanes and
// writes what the windows have room for. A reply for any receiving bind of
// its account joins the lane of one of them. A row handed over for a user
// whose lane is full, or has overflowed, goes to the table instead, behind
// the rows waiting there.
func (rq *receiptQueue) handle(ctx context.Context, items []queued) error {
	var release []string
	var touched []string
	limit := laneCap * rq.srv.cfg.Window
	rq.mu.Lock()
	for _, q := range items {
		it := q.SMPPItem
		if q.claimed {
			rq.hold([]domain.SMPPItem{it}, -1)
		}
		user := it.UserID
		if user == "" {
			user = rq.srv.binds.receiverOf(it.AccountID, it.Env)
		}
		if user == "" {
			release = append(release, it.ID)
			continue
		}
		l := rq.lanes[user]
		if l == nil {
			l = &lane{acct: it.AccountID + ":" + string(it.Env)}
			rq.lanes[user] = l
		}
		if !q.claimed && rq.behind(user, len(l.items) >= limit) {
			release = append(release, it.ID)
			continue
		}
		l.insert(it)
		touched = append(touched, user)
	}
	rq.mu.Unlock()
	rq.release(ctx, release)
	if len(release) > 0 {
		rq.q.Wake()
	}
	for i, u := range touched {
		if i == 0 || touched[i-1] != u {
			rq.pump(ctx, u)
		}
	}
	return nil
}

// behind reports whether a user's new rows go to the table, and puts them
// there from now on when full says its lane has no more room.
func (rq *receiptQueue) behind(user string, full bool) bool {
	rq.bmu.Lock()
	defer rq.bmu.Unlock()
	if full {
		rq.backlog[user] = true
	}
	return rq.backlog[user]
}

// insert puts a row in its place in the lane, oldest first: a claimed row
// written elsewhere can be older than rows handed over here.
func (l *lane) insert(it domain.SMPPItem) {
	i := len(l.items)
	for i > 0 && itemBefore(it, l.items[i-1]) {
		i--
	}
	l.items = slices.Insert(l.items, i, it)
}

func itemBefore(a, b domain.SMPPItem) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.Before(b.CreatedAt)
	}
	return a.ID < b.ID
}

// sweep writes what waits in every lane, as far as there is room, and
// gives back to the table the rows whose lease runs short.
func (rq *receiptQueue) sweep(ctx context.Context) {
	rq.mu.Lock()
	users := make([]string, 0, len(rq.lanes))
	for u := range rq.lanes {
		users = append(users, u)
	}
	rq.mu.Unlock()
	for _, u := range users {
		rq.pump(ctx, u)
	}
}

// sent is a deliver_sm written, awaiting its answer.
type sent struct {
	ss   *session
	it   domain.SMPPItem
	wait func() (smpp.PDU, error)
	at   time.Time
}

// pump writes a user's lane, oldest first, over its receiving binds while
// their windows have room; one goroutine at a time per lane. A row goes
// out only with at least a response timeout left of its lease, so that
// its answer comes while the lease is still ours; a shorter one goes back
// to the table. Without a receiving bind, the lane goes back to the table.
func (rq *receiptQueue) pump(ctx context.Context, user string) {
	s := rq.srv
	ctx = context.WithoutCancel(ctx) // what is written must be settled
	var release []string
	defer func() { rq.release(ctx, release) }()
	rq.mu.Lock()
	defer rq.mu.Unlock()
	l := rq.lanes[user]
	if l == nil {
		return
	}
	if l.pumping {
		l.again = true
		return
	}
	l.pumping = true
	defer func() {
		l.pumping = false
		if len(l.items) == 0 {
			delete(rq.lanes, user)
		}
	}()
	for len(l.items) > 0 {
		l.again = false
		it := l.items[0]
		if s.cfg.Now().Add(s.cfg.ResponseTimeout).After(it.NextAttemptAt) {
			release = append(release, it.ID)
			l.items = l.items[1:]
			continue
		}
		ss := s.binds.receiver(user)
		if ss == nil {
			for _, it := range l.items {
				release = append(release, it.ID)
			}
			l.items = nil
			return
		}
		rq.mu.Unlock()
		wait, err := ss.request(ctx, smpp.DeliverSM, deliverSM(it))
		at := s.cfg.Now()
		rq.mu.Lock()
		switch {
		case errors.Is(err, errWindowFull):
			ss.starved.Store(true)
			if !l.again {
				return // the next answer pumps again
			}
		case errors.Is(err, errClosed):
			// The bind is gone: the next turn takes another, or gives
			// the lane back to the table.
		case err != nil:
			return
		default:
			if i := slices.IndexFunc(l.items, func(x domain.SMPPItem) bool { return x.ID == it.ID }); i >= 0 {
				l.items = slices.Delete(l.items, i, i+1)
			}
			f := sent{ss, it, wait, at}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				rq.settle(ctx, user, f)
			}()
		}
	}
}

// settle records the answer to a written deliver_sm as soon as it comes:
// an acknowledged row is deleted, one whose bind went away is released,
// one refused or not answered in time goes again when its lease ends. The
// room its answer freed is filled at once.
func (rq *receiptQueue) settle(ctx context.Context, user string, f sent) {
	s := rq.srv
	p, err := f.wait()
	acked := err == nil && p.Command == smpp.DeliverSMResp && p.Status == smpp.StatusOK
	if obs := s.cfg.Observer.Receipt; obs != nil {
		obs(acked, s.cfg.Now().Sub(f.at))
	}
	switch {
	case acked:
		rq.ack(ctx, f.it.ID)
	case errors.Is(err, errClosed):
		rq.release(ctx, []string{f.it.ID})
	}
	rq.pump(ctx, user)
	if f.ss.starved.CompareAndSwap(true, false) {
		rq.q.Wake() // the window has room again for rows that found it full
	}
}

// ack deletes an acknowledged row. Acknowledgements that come while a
// delete is being written wait for it and go together in the next one, so
// a busy bind costs one write per group commit rather than one per row.
func (rq *receiptQueue) ack(ctx context.Context, id string) {
	rq.amu.Lock()
	rq.acks = append(rq.acks, id)
	if rq.acking {
		rq.amu.Unlock()
		return
	}
	rq.acking = true
	for {
		ids := rq.acks
		rq.acks = nil
		if len(ids) == 0 {
			rq.acking = false
			rq.amu.Unlock()
			return
		}
		rq.amu.Unlock()
		if err := rq.srv.cfg.Items.AckSMPPItems(ctx, ids); err != nil {
			rq.srv.cfg.Log.Error("smpp: record acknowledged receipts; they may be sent again", "err", err, "rows", len(ids))
		}
		rq.amu.Lock()
	}
}

func (rq *receiptQueue) release(ctx context.Context, ids []string) {
	if len(ids) == 0 {
		return
	}
	s := rq.srv
	if err := s.cfg.Items.ReleaseSMPPItems(ctx, s.cfg.Owner, ids, s.cfg.Now()); err != nil {
		s.cfg.Log.Warn("smpp: release receipts; they go again when their lease ends", "err", err)
	}
}

// deliverSM is the PDU of a waiting row: a receipt from the handset to
// the sender the message went out with, or a reply from the handset to
// the number it answered.
func deliverSM(it domain.SMPPItem) *smpp.SM {
	dstTON, dstNPI := byte(smpp.TONInternational), byte(smpp.NPIISDN)
	if !allDigits(it.Dest) {
		dstTON, dstNPI = smpp.TONAlphanumeric, smpp.NPIUnknown
	}
	sm := &smpp.SM{SourceTON: smpp.TONInternational, SourceNPI: smpp.NPIISDN, SourceAddr: it.Source,
		DestTON: dstTON, DestNPI: dstNPI, DestAddr: it.Dest, ESMClass: byte(it.ESMClass)}
	if it.ESMClass&smpp.ESMClassReceipt != 0 {
		sm.DataCoding, sm.ShortMessage = smpp.CodingDefault, gsmText(it.Text)
		sm.TLVs = smpp.TLVs{smpp.StringTLV(smpp.TagReceiptedMessageID, it.MessageID),
			smpp.ByteTLV(smpp.TagMessageState, byte(it.State))}
		return sm
	}
	var text []byte
	if b, ok := sms.EncodeGSM7(it.Text); ok {
		sm.DataCoding, text = smpp.CodingDefault, b
	} else {
		sm.DataCoding, text = smpp.CodingUCS2, sms.EncodeUCS2(it.Text)
	}
	if len(text) > smpp.MaxShortMessage {
		sm.TLVs = smpp.TLVs{{Tag: smpp.TagMessagePayload, Value: text}}
	} else {
		sm.ShortMessage = text
	}
	return sm
}

// gsmText encodes a receipt's text in GSM 03.38, one septet per octet,
// as data_coding 0 says (a message id's '_' is 0x11 there); a character
// outside the alphabet becomes '?'.
func gsmText(text string) []byte {
	out, ok := sms.EncodeGSM7(text)
	if !ok {
		out = out[:0]
		for _, r := range text {
			b, ok := sms.EncodeGSM7(string(r))
			if !ok {
				b = []byte{'?'}
			}
			out = append(out, b...)
		}
	}
	if len(out) > smpp.MaxShortMessage {
		out = out[:smpp.MaxShortMessage]
	}
	return out
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
