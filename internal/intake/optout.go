package intake

import (
	"context"
	"fmt"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// optOutScope is whose opt-out list a send is checked against.
type optOutScope struct {
	account string
	env     domain.Environment
}

// optedOutSets holds, per account and environment, which recipients of a
// group of sends are opted out.
type optedOutSets map[optOutScope]map[string]bool

// readOptOuts is the opt-out check of a group of sends, read up front:
// one lookup per account and environment for all of the group's
// recipients rather than one per send, since most groups are many
// one-recipient sends of few accounts. It runs inside the group's
// transaction, before anything is written, so a stop word recorded before
// the group commits refuses the sends to that number (the store orders
// the two; see store.Tx.OptedOut).
func readOptOuts(ctx context.Context, tx SendTx, sends []pendingSend) (optedOutSets, error) {
	var scopes []optOutScope
	phones := map[optOutScope][]string{}
	for _, snd := range sends {
		sc := optOutScope{snd.campaign.AccountID, snd.campaign.Env}
		if _, ok := phones[sc]; !ok {
			scopes = append(scopes, sc)
		}
		for _, m := range snd.messages {
			phones[sc] = append(phones[sc], m.To)
		}
	}
	var out optedOutSets
	for _, sc := range scopes {
		if len(phones[sc]) == 0 {
			continue
		}
		set, err := tx.OptedOut(ctx, sc.account, sc.env, phones[sc])
		if err != nil {
			return nil, err
		}
		if len(set) == 0 {
			continue
		}
		if out == nil {
			out = optedOutSets{}
		}
		out[sc] = set
	}
	return out, nil
}

// refuseOptedOut refuses a send to any opted-out recipient whole: it
// charges nothing.
func refuseOptedOut(snd pendingSend, sets optedOutSets) *domain.Refusal {
	set := sets[optOutScope{snd.campaign.AccountID, snd.campaign.Env}]
	if len(set) == 0 {
		return nil
	}
	phones := make([]string, len(snd.messages))
	hit := false
	for i, m := range snd.messages {
		phones[i] = m.To
		hit = hit || set[m.To]
	}
	if !hit {
		return nil
	}
	return optedOutRefusal(phones, set)
}

// optedOutRefusal names every opted-out recipient of a send, as
// OUTSIDE_CONVERSATION_WINDOW does.
func optedOutRefusal(phones []string, out map[string]bool) *domain.Refusal {
	r := &domain.Refusal{Code: "RECIPIENT_OPTED_OUT", Err: ErrOptedOut}
	var names []string
	for i, p := range phones {
		if !out[p] {
			continue
		}
		r.Fields = append(r.Fields, domain.FieldError{Path: recipientPath(i), Code: domain.FieldInvalid, Message: "this number opted out of the account's messages (it answered a stop word); it can opt in again by answering START"})
		if len(names) < 10 {
			names = append(names, p)
		}
	}
	more := ""
	if n := len(r.Fields); n > len(names) {
		more = fmt.Sprintf(" and %d more", n-len(names))
	}
	r.Detail = fmt.Sprintf("Recipients who answered a stop word receive no more messages from this account; nothing was sent or charged. "+
		"Opted out: %s%s.", strings.Join(names, ", "), more)
	return r
}
