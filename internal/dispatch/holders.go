package dispatch

import (
	"cmp"
	"context"
	"fmt"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// SenderHolders tells which accounts hold a value as an approved sender of
// a channel (at most one; store.Store implements it).
type SenderHolders interface {
	SenderOwners(ctx context.Context, channel domain.Channel, value string) ([]string, error)
}

// heldSenders answers, for one batch, who holds the providers' own
// senders. It is a query, not a cache: each batch asks afresh, once per
// channel and sender it meets, so an operator's approval or withdrawal
// applies from the next batch on every node. The cost is one lookup on a
// unique index per own sender per batch, whatever the batch's size.
type heldSenders struct {
	holders SenderHolders
	seen    map[heldKey][]string // the holders' account ids, none for nobody
}

type heldKey struct {
	channel domain.Channel
	value   string
}

func (d *Dispatcher) heldSenders() *heldSenders {
	return &heldSenders{holders: d.holders, seen: map[heldKey][]string{}}
}

// of lists the accounts that hold sender on a channel, none for nobody.
func (h *heldSenders) of(ctx context.Context, channel domain.Channel, sender string) ([]string, error) {
	if h.holders == nil {
		return nil, nil
	}
	k := heldKey{channel, domain.RouteSenderKey(sender)}
	if ids, ok := h.seen[k]; ok {
		return ids, nil
	}
	ids, err := h.holders.SenderOwners(ctx, channel, k.value)
	if err != nil {
		return nil, fmt.Errorf("who holds sender %q: %w", sender, err)
	}
	h.seen[k] = ids
	return ids, nil
}

// pick chooses a message's provider and notes on it the route taken and
// what the hand-over will cost. A message that names no sender goes out
// from its provider's own sender (on WhatsApp every message does), so a
// provider whose own sender another account holds is not used for it: the
// route's next eligible provider is, else none (NO_ROUTE). An own sender
// nobody holds is the deployment's, usable by every account. Without a
// provider, reason says why (the message's errorMessage).
func (d *Dispatcher) pick(ctx context.Context, held *heldSenders, m *domain.Message) (p provider.Provider, reason string, err error) {
	dec := d.routes.ChooseFor(m, func(sender string) bool {
		ids, e := held.of(ctx, m.Channel, sender)
		if e != nil {
			err = cmp.Or(err, e)
			return false
		}
		return domain.MayUseRouteSender(ids, m.AccountID)
	})
	if err != nil {
		return nil, "", err
	}
	m.Route, m.Cost, m.CostCurrency = dec.Route, 0, ""
	if dec.Costed {
		m.Cost, m.CostCurrency = dec.Cost, dec.Currency
	}
	return dec.Provider, dec.Reason, nil
}
