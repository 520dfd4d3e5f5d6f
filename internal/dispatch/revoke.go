package dispatch

import (
	"context"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/tracking"
)

// revoke asks the providers of RCS messages still undelivered at their
// deadline to take them back: a message taken back falls back to SMS; one
// delivered meanwhile, or whose provider cannot take it back, stays RCS;
// a provider that could not answer is asked again later.
func (d *Dispatcher) revoke(ctx context.Context, items []routed, now time.Time) []tracking.Report {
	byProvider := map[provider.Revoker][]routed{}
	var reports []tracking.Report
	for _, it := range items {
		r := provider.CapabilitiesOf(it.p).Revoker
		if r == nil {
			// The provider left the configuration or cannot take messages
			// back: sending the SMS as well could reach the phone twice.
			d.log.Warn("rcs message cannot be taken back; no SMS fallback", "message", it.m.ID, "provider", it.m.Provider)
			reports = append(reports, tracking.Report{Kind: tracking.Unrevoked, MessageID: it.m.ID, At: now, LeaseOwner: d.owner})
			continue
		}
		byProvider[r] = append(byProvider[r], it)
	}
	for p, its := range byProvider {
		outs := make([]provider.Outbound, len(its))
		for i, it := range its {
			outs[i] = outbound(it.m)
		}
		// Like a hand-over, it must end well inside the lease.
		rctx, cancel := context.WithTimeout(ctx, d.lease/2)
		answers := p.Revoke(rctx, outs)
		cancel()
		for i, it := range its {
			reports = append(reports, d.revocationReport(it, answers, i, now))
		}
	}
	return reports
}

func (d *Dispatcher) revocationReport(it routed, answers []provider.Revocation, i int, now time.Time) tracking.Report {
	r := tracking.Report{MessageID: it.m.ID, At: now, LeaseOwner: d.owner}
	a := provider.Revocation{Err: &provider.Error{Message: "no answer from provider", Temporary: true}}
	if i < len(answers) {
		a = answers[i]
	}
	switch {
	case a.Err != nil && a.Err.Temporary:
		r.Kind, r.RetryAt = tracking.Retry, now.Add(retryDelay(it.m.Attempts))
	case a.Err != nil:
		d.log.Warn("rcs message could not be taken back; no SMS fallback", "message", it.m.ID, "provider", it.m.Provider,
			"code", a.Err.Code, "err", a.Err.Message)
		r.Kind = tracking.Unrevoked
	case a.Revoked:
		r.Kind = tracking.Revoked
		if sms := d.routes.Pick(it.m.Env, domain.SMS, it.m.CountryCode); sms != nil {
			r.Provider = sms.Name()
		}
	default:
		r.Kind = tracking.Unrevoked // delivered meanwhile: its report follows
	}
	return r
}
