package smppserver

import (
	"context"
	"errors"
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
	AckSMPPItem(ctx context.Context, id string) error
	PurgeSMPPItems(ctx context.Context, now time.Time) (int64, error)
}

// receiptQueue is the leased queue of waiting deliver_sm: this node
// claims the rows of the users bound to it for receiving, each user no
// more than its binds' windows have room for (so that one user's stalled
// receiver never holds back the others'), sends them oldest first, and deletes each once a bind acknowledged it. A row whose
// bind went away is released at once for the user's next bind, here or on
// another node; one a bind refused waits out its lease and goes again.
type receiptQueue struct {
	srv *Server
	q   *lease.Queue[domain.SMPPItem]
	// held counts the rows claimed and not yet written (or released), by
	// user and by account: a bind's window has room only for what is
	// neither in flight nor about to be. Without it, a second claim could
	// take a user's next rows while a worker still holds the ones before
	// them, and the two workers would write them out of order.
	mu    sync.Mutex
	held  map[string]int
	heldA map[string]int
}

func newReceiptQueue(s *Server) *receiptQueue {
	rq := &receiptQueue{srv: s, held: map[string]int{}, heldA: map[string]int{}}
	claim := func(ctx context.Context, owner string, now time.Time, d time.Duration, limit int) ([]domain.SMPPItem, error) {
		rq.mu.Lock()
		defer rq.mu.Unlock()
		users, accounts := s.binds.receivers()
		for u, room := range users {
			if room -= rq.held[u]; room > 0 {
				users[u] = room
			} else {
				delete(users, u)
			}
		}
		for a, room := range accounts {
			if room -= rq.heldA[a]; room > 0 {
				accounts[a] = room
			} else {
				delete(accounts, a)
			}
		}
		if len(users) == 0 {
			return nil, nil
		}
		items, err := s.cfg.Items.ClaimSMPPItems(ctx, users, accounts, owner, now, d, limit)
		rq.hold(items, 1)
		return items, err
	}
	rq.q = lease.New(lease.Config[domain.SMPPItem]{Name: "smpp receipts", Owner: s.cfg.Owner,
		Lease: 2 * s.cfg.ResponseTimeout, Claim: claim, Release: s.cfg.Items.ReleaseSMPPItems,
		ID: func(it domain.SMPPItem) string { return it.ID }, Batch: 256, Workers: 4, Poll: s.cfg.Poll,
		Now: s.cfg.Now, Log: s.cfg.Log})
	return rq
}

func (rq *receiptQueue) run(ctx context.Context) { rq.q.Run(ctx, rq.handle) }

// hold adds n (1 when claimed, -1 once written or released) to the rows
// held for the items' users and accounts.
func (rq *receiptQueue) hold(items []domain.SMPPItem, n int) {
	if len(items) == 0 {
		return
	}
	if n < 0 {
		rq.mu.Lock()
		defer rq.mu.Unlock()
	}
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

// handle sends a claimed batch: each user's rows in order over one of its
// receiving binds, pipelined up to the bind's window. It returns once they
// are written; their answers are awaited apart, so a customer slow to
// answer holds its own window, not the queue's workers. Rows that find the
// window full go back to the table, claimed again when answers free it.
func (rq *receiptQueue) handle(ctx context.Context, items []domain.SMPPItem) error {
	defer rq.hold(items, -1) // written (in flight) or released by now
	var order []string
	byUser := map[string][]domain.SMPPItem{}
	for _, it := range items {
		if it.UserID == "" {
			// A reply for any receiving bind of the account.
			it.UserID = rq.srv.binds.receiverOf(it.AccountID, it.Env)
		}
		if _, ok := byUser[it.UserID]; !ok {
			order = append(order, it.UserID)
		}
		byUser[it.UserID] = append(byUser[it.UserID], it)
	}
	for _, u := range order {
		rq.sendAll(ctx, byUser[u])
	}
	return nil
}

// sent is a deliver_sm written, awaiting its answer.
type sent struct {
	ss   *session
	it   domain.SMPPItem
	wait func() (smpp.PDU, error)
	at   time.Time
}

func (rq *receiptQueue) sendAll(ctx context.Context, its []domain.SMPPItem) {
	s := rq.srv
	ss := s.binds.receiver(its[0].UserID)
	var inFlight []sent
	var release []string
	for _, it := range its {
		if ss == nil {
			release = append(release, it.ID)
			continue
		}
		wait, err := ss.request(ctx, smpp.DeliverSM, deliverSM(it))
		if errors.Is(err, errWindowFull) {
			ss.starved.Store(true)
		}
		if err != nil {
			// The window is full (the rest go once answers free it, in
			// order), or the bind is gone (they wait for another).
			release = append(release, it.ID)
			ss = nil
			continue
		}
		inFlight = append(inFlight, sent{ss, it, wait, s.cfg.Now()})
	}
	rq.release(ctx, release)
	for _, f := range inFlight {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			rq.settle(ctx, f)
		}()
	}
}

// settle records the answer to a written deliver_sm as soon as it comes:
// an acknowledged row is deleted, one whose bind went away is released,
// one refused or not answered in time goes again when its lease ends.
func (rq *receiptQueue) settle(ctx context.Context, f sent) {
	s := rq.srv
	p, err := f.wait()
	acked := err == nil && p.Command == smpp.DeliverSMResp && p.Status == smpp.StatusOK
	if obs := s.cfg.Observer.Receipt; obs != nil {
		obs(acked, s.cfg.Now().Sub(f.at))
	}
	switch {
	case acked:
		if err := s.cfg.Items.AckSMPPItem(ctx, f.it.ID); err != nil {
			s.cfg.Log.Error("smpp: record acknowledged receipt; it may be sent again", "err", err, "id", f.it.ID)
		}
	case errors.Is(err, errClosed):
		rq.release(ctx, []string{f.it.ID})
	}
	if f.ss.starved.CompareAndSwap(true, false) {
		rq.q.Wake() // the window has room again for rows that found it full
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
