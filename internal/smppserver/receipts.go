package smppserver

import (
	"context"
	"time"

	"github.com/msgsvc/msgsvc/internal/dlr"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/tracking"
)

// ReceiptTx is what the SMPP front's notifications need of the change's
// transaction: the deliver_sm queue.
type ReceiptTx interface {
	InsertSMPPItems(ctx context.Context, items []domain.SMPPItem) error
}

// Receipts is the SMPP front's notifier (tracking.Notifier): the delivery
// receipt of a message submitted over SMPP that asked for one, when it
// reaches its first final status, and the deliver_sm of an SMS reply to an
// account with SMPP users. They are queued (smpp_items) in the transaction
// that records the status or the reply, so neither can be lost between the
// two; the server's receipt queue sends them to the binds.
type Receipts struct {
	// OwnSender is the sender a provider's messages that name none go out
	// from ("" when the platform picks one); nil knows none. A receipt of
	// such a message is addressed to it.
	OwnSender func(provider string) string
	// Users tells whether an account has SMPP users in an environment
	// (a reply goes to any receiving bind of theirs); nil: none has.
	Users interface {
		HasSMPPUsers(ctx context.Context, accountID string, env domain.Environment) (bool, error)
	}
	// Wake, when set, is called after items were queued: they may wait
	// for this node's binds.
	Wake func()
	// Handoff, when set, is this node's SMPP server: the rows of a user
	// with a receiving bind on it are written leased to it and handed
	// over after the commit, rather than claimed from the table.
	Handoff Handoff
}

// Handoff is the SMPP server of this node as the writers of receipts see
// it (Server is one).
type Handoff interface {
	LeaseReceipt(userID string) (owner string, until time.Time, ok bool)
	HandReceipts(ctx context.Context, items []domain.SMPPItem)
}

var _ tracking.Notifier[ReceiptTx] = (*Receipts)(nil)

// Changed queues the receipts cs owe.
func (r *Receipts) Changed(ctx context.Context, tx ReceiptTx, cs []tracking.Change) (tracking.After, error) {
	var items []domain.SMPPItem
	for _, c := range cs {
		if !dlr.Wanted(*c.Message, c.Was) {
			continue
		}
		it := dlr.Item(*c.Message, c.At)
		if it.Dest == "" {
			// Sent from the route's own sender: the receipt comes from
			// the handset to it, as digits like every number we write.
			it.Dest = phone.Address(r.ownSender(c.Message.Provider))
		}
		items = append(items, it)
	}
	return r.queue(ctx, tx, items)
}

// Received queues the deliver_sm an SMS reply owes the account's SMPP
// binds: those of the SMPP user that sent the message it answers, else any
// receiving bind of the account in its environment (UserID ""). Nothing
// when the account has no SMPP user there.
func (r *Receipts) Received(ctx context.Context, tx ReceiptTx, rp tracking.Reply) (tracking.After, error) {
	in, last, now := rp.Inbound, rp.Answers, rp.Recorded
	if in.AccountID == "" || in.Channel != domain.SMS {
		return nil, nil
	}
	user := ""
	if last.AccountID == in.AccountID && last.Content.SMPP != nil {
		user = last.Content.SMPP.User
	} else {
		if r.Users == nil {
			return nil, nil
		}
		has, err := r.Users.HasSMPPUsers(ctx, in.AccountID, in.Env)
		if err != nil || !has {
			return nil, err
		}
	}
	dest := rp.To
	if dest == "" {
		dest = last.From
	}
	return r.queue(ctx, tx, []domain.SMPPItem{{ID: id.New(id.SMPPItem, now), UserID: user, AccountID: in.AccountID, Env: in.Env,
		MessageID: in.ID, Source: in.Phone, Dest: dest, Text: in.Body, CreatedAt: now, ExpiresAt: now.Add(dlr.Keep),
		NextAttemptAt: now}})
}

func (r *Receipts) queue(ctx context.Context, tx ReceiptTx, items []domain.SMPPItem) (tracking.After, error) {
	if len(items) == 0 {
		return nil, nil
	}
	var leased []domain.SMPPItem
	table := false
	for i := range items {
		it := &items[i]
		if r.Handoff == nil {
			table = true
			continue
		}
		owner, until, ok := r.Handoff.LeaseReceipt(it.UserID)
		if !ok {
			table = true
			continue
		}
		it.LeaseOwner, it.NextAttemptAt = owner, until
		leased = append(leased, *it)
	}
	if err := tx.InsertSMPPItems(ctx, items); err != nil {
		return nil, err
	}
	if table && r.Wake == nil {
		table = false
	}
	if !table && len(leased) == 0 {
		return nil, nil
	}
	return func(ctx context.Context) {
		if len(leased) > 0 {
			r.Handoff.HandReceipts(ctx, leased)
		}
		if table {
			r.Wake()
		}
	}, nil
}

func (r *Receipts) ownSender(provider string) string {
	if r.OwnSender == nil {
		return ""
	}
	return r.OwnSender(provider)
}
