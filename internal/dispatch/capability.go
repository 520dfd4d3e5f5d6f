package dispatch

import (
	"context"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/tracking"
)

// CapabilityCache remembers what providers said about devices, per
// environment (store.Store implements it).
type CapabilityCache interface {
	RCSCapabilities(ctx context.Context, env domain.Environment, phones []string, since time.Time) (map[string]bool, error)
	SaveRCSCapabilities(ctx context.Context, env domain.Environment, caps map[string]bool, at time.Time) error
}

// routed is a claimed message and the provider chosen for it.
type routed struct {
	m domain.Message
	p provider.Provider
}

// screenRCS asks, for RCS messages whose provider can tell, whether the
// recipient's device takes RCS, from the cache first. Capable and unknown
// devices are returned to be sent; the others get a report: Fallback to SMS
// when the message has a fallback, else Rejected with RCS_NOT_SUPPORTED.
func (d *Dispatcher) screenRCS(ctx context.Context, items []routed, now time.Time) ([]routed, []tracking.Report) {
	type group struct {
		checker provider.CapabilityChecker
		env     domain.Environment
	}
	groups := map[group][]routed{}
	var send []routed
	for _, it := range items {
		c := provider.CapabilitiesOf(it.p).Checker
		if c == nil {
			send = append(send, it)
			continue
		}
		g := group{c, it.m.Env}
		groups[g] = append(groups[g], it)
	}
	var reports []tracking.Report
	for g, its := range groups {
		known := d.capabilities(ctx, g.checker, g.env, its, now)
		for _, it := range its {
			if capable, ok := known[it.m.To]; ok && !capable {
				reports = append(reports, d.notCapable(it, now))
				continue
			}
			send = append(send, it)
		}
	}
	return send, reports
}

// capabilities answers from the cache and asks the provider only about the
// numbers the cache does not know (or knew too long ago).
func (d *Dispatcher) capabilities(ctx context.Context, c provider.CapabilityChecker, env domain.Environment, its []routed, now time.Time) map[string]bool {
	seen := make(map[string]bool, len(its))
	phones := make([]string, 0, len(its))
	for _, it := range its {
		if !seen[it.m.To] {
			seen[it.m.To] = true
			phones = append(phones, it.m.To)
		}
	}
	known := map[string]bool{}
	if d.caps != nil {
		cached, err := d.caps.RCSCapabilities(ctx, env, phones, now.Add(-d.capTTL))
		if err != nil {
			d.log.Warn("read rcs capabilities; asking the provider", "err", err)
		} else {
			known = cached
		}
	}
	var ask []string
	for _, p := range phones {
		if _, ok := known[p]; !ok {
			ask = append(ask, p)
		}
	}
	if len(ask) == 0 {
		return known
	}
	fresh := map[string]bool{}
	for p, v := range c.Capabilities(ctx, ask) {
		if seen[p] {
			fresh[p], known[p] = v, v
		}
	}
	d.remember(ctx, env, fresh, now)
	return known
}

func (d *Dispatcher) remember(ctx context.Context, env domain.Environment, caps map[string]bool, now time.Time) {
	if d.caps == nil || len(caps) == 0 {
		return
	}
	if err := d.caps.SaveRCSCapabilities(ctx, env, caps, now); err != nil {
		d.log.Warn("save rcs capabilities", "err", err)
	}
}

// notCapable is the report for an RCS message the device cannot take.
func (d *Dispatcher) notCapable(it routed, now time.Time) tracking.Report {
	if _, ok := it.m.Content.SMSFallback(); ok {
		r := tracking.Report{Kind: tracking.Fallback, MessageID: it.m.ID, At: now, LeaseOwner: d.owner}
		if p := d.routes.Pick(it.m.Env, domain.SMS, it.m.CountryCode); p != nil {
			r.Provider = p.Name()
		}
		return r
	}
	return tracking.Report{Kind: tracking.Rejected, MessageID: it.m.ID, Provider: it.p.Name(), ErrorCode: domain.CodeRCSNotSupported, At: now, LeaseOwner: d.owner}
}

// outbound is a message as handed to its provider. After a fallback an RCS
// message goes out as plain SMS with its fallback text.
func outbound(m domain.Message) provider.Outbound {
	o := provider.Outbound{ID: m.ID, AccountID: m.AccountID, Env: m.Env, To: m.To, CountryCode: m.CountryCode, From: m.From, Channel: m.Channel,
		Body: m.Body, Content: m.Content, ExpiresAt: m.ExpiresAt}
	if m.Type == domain.RCS && m.Channel == domain.SMS {
		o.Content = domain.Content{}
		if plan, ok := m.Content.SMSFallback(); ok {
			o.Body = plan.Message
		}
	}
	return o
}
