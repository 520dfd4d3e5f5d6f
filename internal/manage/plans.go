package manage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/user"
)

// Price plans: the operator's named price tables, shared by top-level
// accounts. A plan is what the operator charges a top-level account; an
// account's own table names only the rates it overrides over its plan. A
// reseller's children are priced by their parent, not by plans: a
// child's send is charged to the child at its parent's table and to the
// parent at the parent's plan and overrides, as before plans.

// PlanStore keeps the plans and which account is on which.
type PlanStore interface {
	PricePlans(ctx context.Context) ([]domain.PricePlan, error)
	PricePlan(ctx context.Context, id string) (domain.PricePlan, error)
	DefaultPricePlan(ctx context.Context) (domain.PricePlan, error)
	CreatePricePlan(ctx context.Context, p domain.PricePlan) error
	UpdatePricePlan(ctx context.Context, p domain.PricePlan) error
	SetAccountPlan(ctx context.Context, accountID, planID string) error
}

// planPrefix begins a plan's id.
const planPrefix = "pln"

// PricePlans lists the plans (operators).
func (s *Service) PricePlans(ctx context.Context, a Actor) ([]domain.PricePlan, error) {
	if err := operator(a); err != nil {
		return nil, err
	}
	list, err := s.st.PricePlans(ctx)
	return nonNil(list), err
}

// PricePlan reads one plan (operators).
func (s *Service) PricePlan(ctx context.Context, a Actor, planID string) (domain.PricePlan, error) {
	if err := operator(a); err != nil {
		return domain.PricePlan{}, err
	}
	return s.st.PricePlan(ctx, planID)
}

// PlanInput is a plan to create, or the change of one (nil fields stay).
type PlanInput struct {
	Name    *string
	Prices  []byte // the price table in credits, as msgsvc account prices takes it
	Default *bool
}

// CreatePricePlan makes a plan (operators). A default plan replaces the
// previous default.
func (s *Service) CreatePricePlan(ctx context.Context, a Actor, in PlanInput) (domain.PricePlan, error) {
	if err := operator(a); err != nil {
		return domain.PricePlan{}, err
	}
	now := s.now().UTC()
	p := domain.PricePlan{ID: id.New(planPrefix, now), CreatedAt: now, UpdatedAt: now}
	if in.Name == nil {
		in.Name = new(string)
	}
	if in.Prices == nil {
		return domain.PricePlan{}, invalid("prices", "is required: the plan's price table, e.g. {\"home\":{\"smsSegment\":0.05}}")
	}
	if err := planFields(&p, in); err != nil {
		return domain.PricePlan{}, err
	}
	if err := s.st.CreatePricePlan(ctx, p); err != nil {
		return domain.PricePlan{}, planConflict(err)
	}
	return s.st.PricePlan(ctx, p.ID)
}

// UpdatePricePlan changes a plan (operators): every account on it pays
// the new prices from its next send, on every node.
func (s *Service) UpdatePricePlan(ctx context.Context, a Actor, planID string, in PlanInput) (domain.PricePlan, error) {
	if err := operator(a); err != nil {
		return domain.PricePlan{}, err
	}
	p, err := s.st.PricePlan(ctx, planID)
	if err != nil {
		return domain.PricePlan{}, err
	}
	if in.Name == nil && in.Prices == nil && in.Default == nil {
		return domain.PricePlan{}, invalid("name", "prices or default is required")
	}
	if in.Name == nil {
		in.Name = &p.Name
	}
	if err := planFields(&p, in); err != nil {
		return domain.PricePlan{}, err
	}
	p.UpdatedAt = s.now().UTC()
	if err := s.st.UpdatePricePlan(ctx, p); err != nil {
		return domain.PricePlan{}, planConflict(err)
	}
	return s.st.PricePlan(ctx, p.ID)
}

func planFields(p *domain.PricePlan, in PlanInput) error {
	var pr problems
	name := strings.TrimSpace(*in.Name)
	if name == "" {
		pr.add("name", "is required")
	} else if msg := labelProblem(name, 100); msg != "" {
		pr.add("name", msg)
	}
	p.Name = name
	if in.Prices != nil {
		sheet, err := ledger.ParseSheet(in.Prices)
		if err != nil {
			pr.add("prices", err.Error())
		} else if p.Prices, err = sheet.Encode(); err != nil {
			pr.add("prices", err.Error())
		}
	}
	if in.Default != nil {
		p.Default = *in.Default
	}
	return pr.err("The price plan is not valid.")
}

func planConflict(err error) error {
	if errors.Is(err, domain.ErrConflict) {
		return invalid("name", "is taken by another plan")
	}
	return err
}

// SetAccountPlan puts a top-level account on a plan, or takes it off
// with "" (operators): its next send pays the plan's prices under its own
// overrides. A reseller's child is priced by its parent, never by a plan.
func (s *Service) SetAccountPlan(ctx context.Context, a Actor, accountID, planID string) (domain.Account, error) {
	acct, err := s.account(ctx, a, accountID, user.Operator)
	if err != nil {
		return domain.Account{}, err
	}
	if acct.ParentID != "" {
		return domain.Account{}, invalid("planId", "cannot be set for a reseller's child: its parent prices it")
	}
	if err := s.st.SetAccountPlan(ctx, acct.ID, strings.TrimSpace(planID)); err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return domain.Account{}, invalid("planId", "names no price plan")
		}
		return domain.Account{}, err
	}
	return s.st.Account(ctx, acct.ID)
}

// PriceView is what an account pays: its plan (nil for none), the
// resolved table and its own overrides.
type PriceView struct {
	Account   domain.Account
	Plan      *domain.PricePlan
	Prices    domain.Prices
	Overrides domain.PriceSheet
}

// Prices shows what an account pays to any of its users, to its parent's
// users and to operators.
func (s *Service) Prices(ctx context.Context, a Actor, accountID string) (PriceView, error) {
	acct, _, err := s.reach(ctx, a, accountID, user.Viewer)
	if err != nil {
		return PriceView{}, err
	}
	v := PriceView{Account: acct}
	if v.Prices, err = acct.PriceList(); err != nil {
		return PriceView{}, fmt.Errorf("account %s: %w", acct.ID, err)
	}
	if v.Overrides, err = domain.ParseSheet(acct.Prices); err != nil {
		return PriceView{}, fmt.Errorf("account %s: %w", acct.ID, err)
	}
	if acct.PricePlanID != "" {
		plan, err := s.st.PricePlan(ctx, acct.PricePlanID)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return PriceView{}, err
		}
		if err == nil {
			v.Plan = &plan
		}
	}
	return v, nil
}

// DefaultPlanMissing reports whether no plan is the default: new accounts
// then sell at the built-in defaults (serve warns at start).
func DefaultPlanMissing(ctx context.Context, st interface {
	DefaultPricePlan(ctx context.Context) (domain.PricePlan, error)
}) (bool, error) {
	_, err := st.DefaultPricePlan(ctx)
	if errors.Is(err, domain.ErrNotFound) {
		return true, nil
	}
	return false, err
}

// RateCardDesk lists the providers' rate cards (provider.Switch).
type RateCardDesk interface {
	RateCards() []provider.RateCard
	Currency() string
}

// RateCards lists the providers' rate cards (operators).
func (s *Service) RateCards(a Actor) ([]provider.RateCard, string, error) {
	if err := operator(a); err != nil {
		return nil, "", err
	}
	d, ok := s.routes.(RateCardDesk)
	if !ok {
		return []provider.RateCard{}, "", nil
	}
	return d.RateCards(), d.Currency(), nil
}

// BelowCost is a rate of a plan under a provider's cost for the same
// destination and channel: each such message loses money (unless the
// margin guard, which skips the provider, finds another).
type BelowCost struct {
	Provider    string
	Channel     domain.Channel
	Prefix      string
	CallingCode string
	Cost        int64 // micro-units of the providers' currency
	Price       int64 // micro-credits
}

// maxBelowCost bounds the rates a warning lists; Count says how many.
const maxBelowCost = 50

// BelowCostReport is a plan's rates under the rate cards' costs.
type BelowCostReport struct {
	Rows     []BelowCost
	Count    int
	Currency string
}

// PlanBelowCost compares a plan's prices with every rate card's costs
// (operators). A destination is priced as abroad, or as the plan names
// its country: the home rates depend on each account's home country and
// are compared with the costs to that country only when the plan names
// it.
func (s *Service) PlanBelowCost(a Actor, p domain.PricePlan) (BelowCostReport, error) {
	cards, currency, err := s.RateCards(a)
	if err != nil {
		return BelowCostReport{}, err
	}
	prices, err := domain.ResolvePrices(p.Prices, "", "")
	if err != nil {
		return BelowCostReport{}, fmt.Errorf("plan %s: %w", p.ID, err)
	}
	out := BelowCostReport{Currency: currency}
	for _, rc := range cards {
		for _, ch := range rc.Channels {
			rc.Costs.Walk(func(prefix string, cost int64) bool {
				cc := phone.CallingCodeOf(prefix)
				if cc == "" {
					return true
				}
				var price int64
				switch ch {
				case domain.SMS:
					price = prices.SMS(cc, "", 1)
				case domain.WhatsApp:
					price = prices.WhatsApp(cc, "", true)
				default:
					price = prices.RCS(cc, "")
				}
				if price < cost {
					out.Count++
					if len(out.Rows) < maxBelowCost {
						out.Rows = append(out.Rows, BelowCost{Provider: rc.Provider, Channel: ch, Prefix: prefix, CallingCode: cc,
							Cost: cost, Price: price})
					}
				}
				return true
			})
		}
	}
	return out, nil
}
