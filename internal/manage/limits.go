package manage

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
	"github.com/msgsvc/msgsvc/internal/user"
)

// LimitStore is what requesting and deciding higher limits needs from storage.
type LimitStore interface {
	CreateLimitRequest(ctx context.Context, r domain.LimitRequest) error
	LimitRequest(ctx context.Context, id string) (domain.LimitRequest, error)
	LimitRequests(ctx context.Context, accountID string) ([]domain.LimitRequest, error)
	PendingLimitRequests(ctx context.Context) ([]domain.LimitRequest, error)
	DecideLimitRequest(ctx context.Context, d domain.LimitRequest) (domain.LimitRequest, error)
}

// Tiers are the account tiers, from the smallest.
var Tiers = []string{"free", "basic", "pro", "enterprise"}

var tierRPM = map[string]int{"free": 10, "basic": 30, "pro": 100, "enterprise": 500}

// TierLimits returns a tier's starting limits: its tier window, and the
// contract's defaults for the request-type windows; ok is false for an
// unknown tier.
func TierLimits(tier string) (domain.Limits, bool) {
	rpm, ok := tierRPM[tier]
	return domain.Limits{TierRPM: rpm, SendRPM: 60, StatusRPM: 2000, MediaRPM: 60}, ok
}

// The request types of the rate limiter's windows, as the integration API
// counts them (internal/api names the same three).
const (
	typeSending = "sending"
	typeStatus  = "status"
	typeMedia   = "media"
)

// LimitsView is an account's tier, limits and their use in the current
// minute.
type LimitsView struct {
	Tier   string
	Limits domain.Limits
	Usage  Usage
}

// Usage is how many requests each window counted this minute; nil for an
// unlimited window, which counts nothing.
type Usage struct {
	TierRPM, SendRPM, StatusRPM, MediaRPM *int
	ResetAt                               time.Time
}

// Limits shows an account's limits and their current use.
func (s *Service) Limits(ctx context.Context, a Actor, accountID string) (LimitsView, error) {
	acct, err := s.account(ctx, a, accountID, user.Viewer)
	if err != nil {
		return LimitsView{}, err
	}
	l := acct.Limits
	types := map[string]int{typeSending: l.SendRPM, typeStatus: l.StatusRPM, typeMedia: l.MediaRPM}
	var u ratelimit.Usage
	if s.limiter != nil {
		if u, err = s.limiter.Usage(ctx, acct.ID, l.TierRPM, types); err != nil {
			return LimitsView{}, err
		}
	} else {
		u = ratelimit.Unused(s.now(), l.TierRPM, types)
	}
	used := func(w ratelimit.Window) *int {
		if w.Limit <= 0 {
			return nil
		}
		n := w.Limit - w.Remaining
		return &n
	}
	return LimitsView{Tier: acct.Tier, Limits: l, Usage: Usage{TierRPM: used(u.Tier), SendRPM: used(u.Types[typeSending]),
		StatusRPM: used(u.Types[typeStatus]), MediaRPM: used(u.Types[typeMedia]), ResetAt: u.Tier.Reset}}, nil
}

// UseCases are the panel's suggestions for a request's type of use; the
// API takes any short text.
var UseCases = []string{"Transactional notifications", "One-time passwords", "Marketing campaigns", "Customer care conversations", "Other"}

// NewLimitRequest is a request for higher limits.
type NewLimitRequest struct {
	MonthlyVolume int64
	UseCase       string
	Justification string
}

// RequestLimits files a request for higher limits for operators to decide.
func (s *Service) RequestLimits(ctx context.Context, a Actor, accountID string, in NewLimitRequest) (domain.LimitRequest, error) {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return domain.LimitRequest{}, err
	}
	var p problems
	if in.MonthlyVolume < 1 || in.MonthlyVolume > 1e12 {
		p.add("monthlyVolume", "must be a whole number of messages from 1 to 1000000000000")
	}
	in.UseCase, in.Justification = strings.TrimSpace(in.UseCase), strings.TrimSpace(in.Justification)
	if msg := labelProblem(in.UseCase, 200); in.UseCase == "" || msg != "" {
		p.add("useCase", nonEmpty(msg, "is required: what the messages are for"))
	}
	if msg := textProblem(in.Justification, 4000); in.Justification == "" || msg != "" {
		p.add("justification", nonEmpty(msg, "is required: why the current limits are not enough"))
	}
	if err := p.err("The request is not valid."); err != nil {
		return domain.LimitRequest{}, err
	}
	now := s.now().UTC()
	r := domain.LimitRequest{ID: id.New(id.Limit, now), AccountID: acct.ID, RequestedBy: a.Email, Status: domain.LimitPending,
		MonthlyVolume: in.MonthlyVolume, UseCase: in.UseCase, Justification: in.Justification, CreatedAt: now}
	return r, s.st.CreateLimitRequest(ctx, r)
}

// LimitRequests lists an account's requests, newest first; an operator who
// names no account gets every account's pending requests, oldest first.
func (s *Service) LimitRequests(ctx context.Context, a Actor, accountID string) ([]domain.LimitRequest, error) {
	if a.Operator() && accountID == "" {
		list, err := s.st.PendingLimitRequests(ctx)
		return nonNil(list), err
	}
	acct, err := s.account(ctx, a, accountID, user.Viewer)
	if err != nil {
		return nil, err
	}
	list, err := s.st.LimitRequests(ctx, acct.ID)
	return nonNil(list), err
}

// Grant is what an operator grants: a tier (empty keeps the account's)
// and any of the four limits (nil: the tier's default when the tier
// changes, else the account's current value; 0 is unlimited).
type Grant struct {
	Tier                                  string
	TierRPM, SendRPM, StatusRPM, MediaRPM *int
}

// maxRPM bounds a granted limit; 0 (unlimited) is the way past it.
const maxRPM = 1_000_000

// ApproveLimitRequest grants a pending request; the account's new tier and
// limits apply from its next request.
func (s *Service) ApproveLimitRequest(ctx context.Context, a Actor, requestID string, g Grant) (domain.LimitRequest, error) {
	if err := operator(a); err != nil {
		return domain.LimitRequest{}, err
	}
	r, err := s.st.LimitRequest(ctx, requestID)
	if err != nil {
		return r, err
	}
	acct, err := s.st.Account(ctx, r.AccountID)
	if err != nil {
		return r, err
	}
	var p problems
	tier, l := acct.Tier, acct.Limits
	if g.Tier != "" && g.Tier != acct.Tier {
		var ok bool
		if l, ok = TierLimits(g.Tier); !ok {
			p.add("tier", "must be free, basic, pro or enterprise")
		}
		tier = g.Tier
	}
	for _, f := range []struct {
		name string
		v    *int
		dst  *int
	}{{"limits.tierRpm", g.TierRPM, &l.TierRPM}, {"limits.sendRpm", g.SendRPM, &l.SendRPM},
		{"limits.statusRpm", g.StatusRPM, &l.StatusRPM}, {"limits.mediaRpm", g.MediaRPM, &l.MediaRPM}} {
		if f.v == nil {
			continue
		}
		if *f.v < 0 || *f.v > maxRPM {
			p.add(f.name, "must be from 0 (unlimited) to 1000000 requests per minute")
		}
		*f.dst = *f.v
	}
	if err := p.err("The grant is not valid."); err != nil {
		return r, err
	}
	return s.decide(ctx, domain.LimitRequest{ID: r.ID, Status: domain.LimitApproved, Tier: tier, Limits: l, DecidedBy: a.Email})
}

// RejectLimitRequest turns a pending request down with a reason the
// account sees.
func (s *Service) RejectLimitRequest(ctx context.Context, a Actor, requestID, reason string) (domain.LimitRequest, error) {
	if err := operator(a); err != nil {
		return domain.LimitRequest{}, err
	}
	reason = strings.TrimSpace(reason)
	if msg := textProblem(reason, 2000); reason == "" || msg != "" {
		return domain.LimitRequest{}, invalid("reason", nonEmpty(msg, "is required: the account sees it"))
	}
	if _, err := s.st.LimitRequest(ctx, requestID); err != nil {
		return domain.LimitRequest{}, err
	}
	return s.decide(ctx, domain.LimitRequest{ID: requestID, Status: domain.LimitRejected, Reason: reason, DecidedBy: a.Email})
}

func (s *Service) decide(ctx context.Context, d domain.LimitRequest) (domain.LimitRequest, error) {
	d.DecidedAt = s.now().UTC()
	out, err := s.st.DecideLimitRequest(ctx, d)
	if errors.Is(err, domain.ErrDecided) {
		return out, invalid("id", "names a request that was already decided")
	}
	return out, err
}

// textProblem checks a longer free text: at most max characters, no
// control characters but newlines and tabs.
func textProblem(v string, max int) string {
	return labelProblem(strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(v), max)
}

func nonEmpty(msg, fallback string) string {
	if msg != "" {
		return msg
	}
	return fallback
}
