package intake

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/msgsvc/msgsvc/internal/channel/whatsapp"
	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/phone"
)

// sendPlan is a validated send turned into the rows it will write.
type sendPlan struct {
	campaign      domain.Campaign
	messages      []domain.Message
	conversations *domain.Conversations // WhatsApp conversations the send opens
	dueNow        bool
	start         time.Time // when the messages become due
	aud           audience
	hasFallback   bool
}

// plan reads what the channel rules need about the recipients, refuses a
// free-form WhatsApp message outside the conversation window, and prices
// and builds each message.
func (s *Service) plan(ctx context.Context, who domain.Principal, req request, now time.Time, dry bool) (sendPlan, error) {
	prices, err := who.Account.PriceList()
	if err != nil {
		return sendPlan{}, fmt.Errorf("account %s: %w", who.Account.ID, err)
	}
	p := sendPlan{start: now, dueNow: req.scheduled.IsZero(), hasFallback: req.fallback != nil}
	if !p.dueNow {
		p.start = req.scheduled
	}
	phones := make([]string, len(req.numbers))
	for i, n := range req.numbers {
		phones[i] = n.Digits
	}
	if p.aud, err = s.lookAudience(ctx, who, req.send.Channel, phones, p.start, dry); err != nil {
		return sendPlan{}, fmt.Errorf("read recipients' channel state: %w", err)
	}
	if req.send.Channel == domain.WhatsApp && !req.chk.template {
		if err := p.aud.refuseClosed(phones, p.start); err != nil {
			return sendPlan{}, err
		}
	}
	env := who.Env
	ids := id.Sequence(id.Message, now, len(req.numbers))
	p.campaign = domain.Campaign{ID: campaignID(ids, now), AccountID: who.Account.ID, KeyID: who.CredentialID, Env: env,
		Type: req.send.Channel, CallbackURL: req.send.CallbackURL, Total: len(req.numbers), CreatedAt: now}
	p.messages = make([]domain.Message, len(req.numbers))
	quiet, err := compliance.ParseWindow(who.Account.Compliance.QuietHours)
	if err != nil {
		return sendPlan{}, fmt.Errorf("account %s: %w", who.Account.ID, err)
	}
	var opened []string
	for i, n := range req.numbers {
		m := s.newMessage(who, req, p, n, now)
		m.ID = ids[i]
		holdForQuietHours(&m, quiet)
		if !req.noLease {
			s.leaseAtInsert(&m, now)
		}
		m.Credits, m.Content.Fallback = s.price(prices, who.Account, req, p, n, &opened)
		m.Charged = m.Credits
		if who.Test() {
			m.Charged = 0 // test keys show the cost but never pay it
		}
		p.messages[i] = m
	}
	if len(opened) > 0 {
		p.conversations = &domain.Conversations{AccountID: who.Account.ID, Env: env, Phones: opened,
			At: p.start, Day: now, Limit: whatsapp.DailyLimit(who.Account.WAQualityTier)}
	}
	return p, nil
}

// campaignID names the campaign of a send's messages. Most sends have one
// recipient: their campaign is named after the message and written as no
// row of its own (see hasCampaignRow); a send to several gets an id of its
// own and a row.
func campaignID(messageIDs []string, now time.Time) string {
	if len(messageIDs) == 1 {
		return id.Derive(id.Campaign, messageIDs[0])
	}
	return id.New(id.Campaign, now)
}

// hasCampaignRow reports whether a send's campaign is written as a row: not
// when it is named after its only message, whose row then describes it
// (the store reads such a campaign from the message).
func hasCampaignRow(c domain.Campaign, msgs []domain.Message) bool {
	return len(msgs) != 1 || c.ID != id.Derive(id.Campaign, msgs[0].ID)
}

// newMessage builds the row of one recipient, unpriced.
func (s *Service) newMessage(who domain.Principal, req request, p sendPlan, n phone.Number, now time.Time) domain.Message {
	provider := ""
	if s.picker != nil {
		provider = s.picker.PickName(who.Env, req.send.Channel, n.CountryCode)
	}
	m := domain.Message{
		CampaignID: p.campaign.ID, AccountID: who.Account.ID, Env: who.Env, To: n.Digits, From: req.from,
		CountryCode: n.CountryCode, Type: req.send.Channel, Channel: req.send.Channel, Body: req.chk.body, Content: req.chk.content,
		Status: domain.Sending, Segments: req.chk.segments, Encoding: req.chk.encoding, Provider: provider,
		Reference: req.send.Reference, CallbackURL: req.send.CallbackURL, CreatedAt: now, UpdatedAt: now,
		ScheduledAt: req.scheduled, ExpiresAt: p.start.Add(req.validity), NextAttemptAt: p.start,
		BillDelivery: who.Account.BillsOnDelivery(),
	}
	return m
}

// leaseAtInsert writes a message that is due now (not scheduled, not held
// by quiet hours) already claimed by the local dispatcher, as a claim
// would leave it; it is handed over in memory after the commit.
func (s *Service) leaseAtInsert(m *domain.Message, now time.Time) {
	if h := s.dispatch; h != nil && !m.NextAttemptAt.After(now) {
		m.LeaseOwner, m.NextAttemptAt, m.Attempts = h.Owner(), now.Add(h.Lease()), 1
	}
}

// handsOver reports whether a send's messages go to this node's
// dispatcher in memory once written (leaseAtInsert).
func handsOver(msgs []domain.Message) bool {
	for _, m := range msgs {
		if m.LeaseOwner != "" {
			return true
		}
	}
	return false
}

// holdForQuietHours makes a message due when the account's quiet hours
// allow it in the recipient's local time: the one quiet-hours check of a
// send. The window is kept in the message's
// content, so that a retry or a fallback is not handed over inside it
// either; the validity still counts from the requested time.
func holdForQuietHours(m *domain.Message, w compliance.Window) {
	if w.IsZero() {
		return
	}
	m.Content.Quiet = w.String()
	m.NextAttemptAt = w.Until(m.NextAttemptAt, compliance.Zones(m.To))
}

// price is what one message costs, and for RCS with a fallback the plan of
// the fallback: the larger of the two prices is reserved, and the
// difference to the channel actually used is refunded when it is known.
func (s *Service) price(prices domain.Prices, a domain.Account, req request, p sendPlan, n phone.Number, opened *[]string) (int64, *domain.Fallback) {
	dest, home := n.CountryCode, a.CountryCode
	switch req.send.Channel {
	case domain.SMS:
		return prices.SMS(dest, home, req.chk.segments), nil
	case domain.WhatsApp:
		fresh := p.aud.newConversation(n.Digits, p.start)
		if fresh {
			*opened = append(*opened, n.Digits)
		}
		return prices.WhatsApp(dest, home, fresh), nil
	}
	price := prices.RCS(dest, home)
	if req.fallback == nil {
		return price, nil
	}
	fb := &domain.Fallback{Channel: domain.SMS, Message: req.fallback.body, Segments: req.fallback.analysis.Segments,
		Encoding: string(req.fallback.analysis.Encoding), SMSCredits: prices.SMS(dest, home, req.fallback.analysis.Segments),
		RCSCredits: price}
	return max(price, fb.SMSCredits), fb
}

// receipt tells what the plan does.
func (p sendPlan) receipt(dry bool) Receipt {
	rc := Receipt{DryRun: dry, Messages: make([]Planned, len(p.messages))}
	if !dry {
		rc.Campaign = p.campaign
	}
	for i, m := range p.messages {
		rc.Credits += m.Credits
		pl := Planned{Message: m}
		if dry {
			pl.Message.ID = ""
			p.explain(&pl)
		}
		rc.Messages[i] = pl
	}
	return rc
}

// explain adds what a dry run tells about a message beyond its price.
func (p sendPlan) explain(pl *Planned) {
	to := pl.Message.To
	switch pl.Message.Type {
	case domain.WhatsApp:
		pl.Window = "closed"
		if p.aud.windowOpen(to, p.start) {
			pl.Window = "open"
		}
		fresh := p.aud.newConversation(to, p.start)
		pl.NewConv = &fresh
	case domain.RCS:
		if capable, known := p.aud.rcsCapable[to]; known {
			fb := !capable && p.hasFallback
			pl.RCSCapable, pl.Fallback = &capable, &fb
		}
	}
}

// dryRun checks what accepting would check, without writing.
func (s *Service) dryRun(ctx context.Context, who domain.Principal, p sendPlan) (Receipt, error) {
	rc := p.receipt(true)
	phones := make([]string, len(p.messages))
	for i, m := range p.messages {
		phones[i] = m.To
	}
	out, err := s.store.OptedOut(ctx, who.Account.ID, who.Env, phones)
	if err != nil {
		return Receipt{}, err
	}
	if len(out) > 0 {
		return Receipt{}, optedOutRefusal(phones, out)
	}
	if !who.Test() {
		a, err := s.store.Account(ctx, who.Account.ID)
		if err != nil {
			return Receipt{}, err
		}
		if rc.Credits > a.Balance {
			return Receipt{}, ErrInsufficientCredits
		}
		if err := s.dryRunAbove(ctx, a, p); err != nil {
			return Receipt{}, err
		}
	}
	if c := p.conversations; c != nil && c.Limit > 0 {
		used, err := s.store.ConversationsOn(ctx, c.AccountID, c.Env, c.Day)
		if err != nil {
			return Receipt{}, err
		}
		if used+len(c.Phones) > c.Limit {
			return Receipt{}, dailyLimitRefusal(&domain.DailyLimitError{Day: domain.DayKey(c.Day), Limit: c.Limit,
				Used: used, Asked: len(c.Phones)}, who.Account.WAQualityTier)
		}
	}
	return rc, nil
}

// dryRunAbove checks, for a sub-account's dry run, that every account
// above it covers its own price of the send, as accepting would.
func (s *Service) dryRunAbove(ctx context.Context, a domain.Account, p sendPlan) error {
	opened := map[string]bool{}
	if c := p.conversations; c != nil {
		for _, ph := range c.Phones {
			opened[ph] = true
		}
	}
	for depth, parent := 0, a.ParentID; parent != "" && depth < domain.MaxDepth; depth++ {
		anc, err := s.store.Account(ctx, parent)
		if err != nil {
			return fmt.Errorf("account %s: %w", parent, err)
		}
		prices, err := anc.PriceList()
		if err != nil {
			return fmt.Errorf("account %s: %w", anc.ID, err)
		}
		var total int64
		for _, m := range p.messages {
			total += domain.LevelPrice(prices, anc.CountryCode, m, opened[m.To]).Charged
		}
		if total > anc.Balance {
			return ErrInsufficientCredits
		}
		parent = anc.ParentID
	}
	return nil
}

// accept writes the send, grouped with concurrent ones into one commit.
func (s *Service) accept(ctx context.Context, who domain.Principal, p sendPlan, key *IdempotencyKey, now time.Time) (Outcome, error) {
	rc := p.receipt(false)
	snd := pendingSend{campaign: p.campaign, messages: p.messages, conversations: p.conversations,
		alerts: alertsOf(who.Account), authVersion: who.AuthVersion, parentID: who.Account.ParentID,
		guard: guarded(who.Account)}
	if key != nil {
		snd.respond = func(msgs []domain.Message) (int, []byte, error) {
			q := p
			q.messages = msgs
			return key.Response(q.receipt(false))
		}
		status, body, err := key.Response(rc)
		if err != nil {
			return Outcome{}, fmt.Errorf("render the response to remember: %w", err)
		}
		snd.idem = &domain.Idempotency{KeyID: who.CredentialID, Key: key.Key, RequestHash: key.RequestHash,
			StatusCode: status, Response: body, CreatedAt: now}
	}
	if handsOver(p.messages) {
		s.pace.wait(ctx)
	}
	res, err := s.commits.Do(ctx, snd)
	if err != nil {
		return Outcome{}, fmt.Errorf("accept send: %w", err)
	}
	if errors.Is(res.err, domain.ErrDailyLimit) {
		return Outcome{}, dailyLimitRefusal(res.err, who.Account.WAQualityTier)
	}
	if res.err != nil {
		return Outcome{}, res.err
	}
	if res.replay != nil {
		return Outcome{Replay: res.replay}, nil
	}
	if p.dueNow && s.dispatch == nil {
		s.wake()
	}
	for _, m := range p.messages {
		if m.Fraud != nil { // the guard decided: the answer shows it
			return Outcome{Receipt: p.receipt(false)}, nil
		}
	}
	return Outcome{Receipt: rc}, nil
}
