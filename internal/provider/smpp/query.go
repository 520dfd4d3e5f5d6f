package smpp

import (
	"context"
	"errors"
	"fmt"

	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Query asks the SMSC with query_sm (§4.8) how messages it accepted ended,
// one request per message over the binds, within the window and the TPS
// cap like submissions. It returns the final states; a message still en
// route, one the SMSC no longer knows (ESME_RQUERYFAIL, ESME_RINVMSGID) or
// one whose query went unanswered is left out. The error is set only when
// no query could be asked at all (no bind up).
func (c *Client) Query(ctx context.Context, qs []provider.QueryRef) ([]provider.Status, error) {
	var out []provider.Status
	var firstErr error
	asked := 0
	for _, q := range qs {
		st, final, err := c.query(ctx, q)
		switch {
		case err == nil:
			asked++
			if final {
				out = append(out, st)
			}
		case errors.Is(err, errNoQuery):
			asked++
		case ctx.Err() != nil:
			return out, ctx.Err()
		default:
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if asked == 0 && firstErr != nil {
		return out, firstErr
	}
	return out, nil
}

// errNoQuery: the SMSC answered, but not with a state (it does not know
// the message, or does not take query_sm).
var errNoQuery = errors.New("smpp: no state for the message")

func (c *Client) query(ctx context.Context, q provider.QueryRef) (provider.Status, bool, error) {
	from := q.From
	if from == "" {
		from = c.cfg.SourceAddr // as the submission had it
	}
	ton, npi, addr, err := sourceAddress(from)
	if err != nil {
		// A sender that could not have been submitted: ask without it.
		ton, npi, addr = pdu.TONUnknown, pdu.NPIUnknown, ""
	}
	s, err := c.pick(ctx)
	if err != nil {
		return provider.Status{}, false, err
	}
	resp, err := s.call(ctx, pdu.QuerySM, &pdu.Query{MessageID: q.Ref, SourceTON: ton, SourceNPI: npi, SourceAddr: addr},
		callOpts{window: true, bucket: c.bucket})
	if err != nil {
		return provider.Status{}, false, fmt.Errorf("query_sm %s: %w", q.Ref, err)
	}
	if resp.Command == pdu.GenericNack || resp.Status != pdu.StatusOK {
		return provider.Status{}, false, errNoQuery
	}
	body, ok := resp.Body.(*pdu.QueryResp)
	if !ok {
		return provider.Status{}, false, errNoQuery
	}
	r := receipt{ID: q.Ref, State: body.MessageState, HasState: true}
	if body.ErrorCode != 0 {
		r.Err = fmt.Sprintf("%03d", body.ErrorCode)
	}
	if body.MessageState == pdu.StateUnknown {
		// Unlike a receipt saying UNKNOWN, a query answering it says the
		// SMSC cannot tell yet: not an outcome.
		return provider.Status{}, false, nil
	}
	st, final := r.outcome(c.clock.Now())
	return st, final, nil
}
