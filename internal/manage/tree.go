package manage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/user"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// The account tree (resellers). A reseller's users read the accounts
// below theirs (balances, ledgers, usage, messages without their texts,
// margins) and its owners and admins create children, fund them and set
// their billing. Any other account's id, a sibling's, a parent's or
// another tree's, is not found: a user learns nothing of accounts outside
// its subtree, not even that they exist.

// TreeStore is what the tree's actions need from storage.
type TreeStore interface {
	CreateAccount(ctx context.Context, a domain.Account) error
	CreateChild(ctx context.Context, a domain.Account) error
	Children(ctx context.Context, parentID string) ([]domain.Account, error)
	InSubtree(ctx context.Context, rootID, accountID string) (bool, error)
	SetReseller(ctx context.Context, accountID string, reseller bool) error
	SetBilling(ctx context.Context, accountID string, b domain.Billing) error
	SetPrices(ctx context.Context, accountID, prices string) error
	Transfer(ctx context.Context, parentID, childID string, amount int64, note string, at time.Time) (int64, int64, error)
	ResellerMargins(ctx context.Context, resellerID string, from, to time.Time) ([]domain.MarginRow, error)
}

// reach resolves an account the actor may read: its own (or, for an
// operator, any), or one below its own. below tells the latter, whose
// messages are shown without their texts. An id outside the actor's
// subtree is ErrNotFound.
func (s *Service) reach(ctx context.Context, a Actor, accountID, need string) (domain.Account, bool, error) {
	if !a.Can(need) {
		return domain.Account{}, false, ErrForbidden
	}
	if a.Operator() || accountID == "" || accountID == a.AccountID {
		acct, err := s.account(ctx, a, accountID, need)
		return acct, false, err
	}
	ok, err := s.st.InSubtree(ctx, a.AccountID, accountID)
	if err != nil {
		return domain.Account{}, false, err
	}
	if !ok {
		return domain.Account{}, false, ErrNotFound
	}
	acct, err := s.st.Account(ctx, accountID)
	if err != nil {
		return acct, false, fmt.Errorf("account %s: %w", accountID, err)
	}
	return acct, true, nil
}

// child resolves an account the actor manages as its parent: for an
// operator any account below the top, for a reseller's owner or admin one
// of its own children. Anything else is ErrNotFound, as reach's.
func (s *Service) child(ctx context.Context, a Actor, childID string) (domain.Account, error) {
	if !a.Can(user.Admin) {
		return domain.Account{}, ErrForbidden
	}
	if childID == "" {
		return domain.Account{}, ErrNotFound
	}
	c, err := s.st.Account(ctx, childID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Account{}, ErrNotFound
	}
	if err != nil {
		return domain.Account{}, fmt.Errorf("account %s: %w", childID, err)
	}
	if a.Operator() || (c.ParentID != "" && c.ParentID == a.AccountID) {
		return c, nil
	}
	return domain.Account{}, ErrNotFound
}

// Accounts lists accounts: every one for operators, a reseller's children
// for its users; an account that is not a reseller has none to list.
func (s *Service) Accounts(ctx context.Context, a Actor) ([]domain.Account, error) {
	if a.Operator() {
		list, err := s.st.Accounts(ctx)
		return nonNil(list), err
	}
	own, err := s.account(ctx, a, "", user.Viewer)
	if err != nil {
		return nil, err
	}
	if !own.Reseller {
		return nil, ErrForbidden
	}
	list, err := s.st.Children(ctx, own.ID)
	return nonNil(list), err
}

// ChildrenOf lists the children of an account in the actor's reach: a
// reseller's user looks one level further down its tree.
func (s *Service) ChildrenOf(ctx context.Context, a Actor, accountID string) ([]domain.Account, error) {
	acct, _, err := s.reach(ctx, a, accountID, user.Viewer)
	if err != nil {
		return nil, err
	}
	list, err := s.st.Children(ctx, acct.ID)
	return nonNil(list), err
}

// AccountInTree reads one account in the actor's reach.
func (s *Service) AccountInTree(ctx context.Context, a Actor, accountID string) (domain.Account, error) {
	acct, _, err := s.reach(ctx, a, accountID, user.Viewer)
	return acct, err
}

// NewChild is an account to create: under the actor's own account (a
// reseller's owner or admin), or, by an operator, at the top or under
// ParentID.
type NewChild struct {
	ParentID string // operators only; a reseller's users create under their own account
	Name     string
	Country  string // home calling code, for pricing
	Currency string // operators' top-level accounts only; a child keeps its parent's
	Tier     string // operators only; a child starts at its parent's tier
	Prices   []byte // the price table as JSON (msgsvc account prices), nil for the defaults
	// AllowLoss lets a child's prices fall below its parent's own (the
	// margin guard); without it such a table is refused.
	AllowLoss bool
	Reseller  bool
	Billing   string // submit (default) or delivery
	// PricePlan is the plan a top-level account starts on (operators
	// only); "" is the default plan, if one is set.
	PricePlan string
}

// CreateAccount makes an account. A reseller's owner or admin makes its
// children; operators make top-level accounts, or children under any
// reseller. A child's balance starts at zero; its parent funds it with a
// transfer.
func (s *Service) CreateAccount(ctx context.Context, a Actor, in NewChild) (domain.Account, error) {
	if !a.Can(user.Admin) {
		return domain.Account{}, ErrForbidden
	}
	var parent domain.Account
	switch {
	case !a.Operator():
		if in.ParentID != "" && in.ParentID != a.AccountID {
			return domain.Account{}, ErrNotFound
		}
		own, err := s.account(ctx, a, "", user.Admin)
		if err != nil {
			return domain.Account{}, err
		}
		if !own.Reseller {
			return domain.Account{}, ErrForbidden
		}
		parent = own
	case in.ParentID != "":
		p, err := s.st.Account(ctx, in.ParentID)
		if err != nil {
			return domain.Account{}, fmt.Errorf("account %s: %w", in.ParentID, err)
		}
		parent = p
	}
	var p problems
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		p.add("name", "is required")
	} else if msg := labelProblem(in.Name, 100); msg != "" {
		p.add("name", msg)
	}
	if in.Country == "" || len(in.Country) > 3 || strings.Trim(in.Country, "0123456789") != "" {
		p.add("country", "must be a calling code such as 1 or 55")
	}
	billing, ok := parseBilling(in.Billing)
	if !ok {
		p.add("billing", "must be submit or delivery")
	}
	tier, currency := strings.ToLower(cmpOr(in.Tier, "free")), strings.ToUpper(cmpOr(in.Currency, "USD"))
	if parent.ID != "" {
		if !a.Operator() && (in.Tier != "" || in.Currency != "") {
			p.add("tier", "and currency are the parent's for a child account")
		}
		tier, currency = parent.Tier, parent.Currency
	}
	limits, ok := TierLimits(tier)
	if !ok {
		p.add("tier", "must be free, basic, pro or enterprise")
	}
	if len(currency) != 3 {
		p.add("currency", "must be a 3-letter code")
	}
	var prices string
	if len(in.Prices) > 0 && in.Country != "" {
		stored, _, err := ledger.ParsePriceTable(in.Prices, in.Country)
		if err != nil {
			p.add("prices", err.Error())
		}
		prices = stored
	}
	in.PricePlan = strings.TrimSpace(in.PricePlan)
	if in.PricePlan != "" && (!a.Operator() || parent.ID != "") {
		p.add("pricePlan", "is for the operator's top-level accounts: a reseller prices its children itself")
	}
	if err := p.err("The account is not valid."); err != nil {
		return domain.Account{}, err
	}
	if parent.ID != "" {
		if err := guardPrices(parent, prices, in.Country, in.AllowLoss); err != nil {
			return domain.Account{}, err
		}
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return domain.Account{}, err
	}
	now := s.now().UTC()
	acct := domain.Account{ID: id.New(id.Account, now), Name: in.Name, Tier: tier, Currency: currency, CountryCode: in.Country,
		WebhookSecret: secret, Limits: limits, WAQualityTier: 1, Prices: prices, ParentID: parent.ID, Billing: billing, CreatedAt: now,
		PricePlanID: in.PricePlan}
	if parent.ID == "" {
		err = s.st.CreateAccount(ctx, acct)
	} else {
		// A child is made a reseller in the insert, which checks the
		// depth first, so that a refused one is not left behind.
		acct.Reseller = in.Reseller
		err = s.st.CreateChild(ctx, acct)
	}
	if errors.Is(err, domain.ErrNotFound) && in.PricePlan != "" {
		return domain.Account{}, invalid("pricePlan", "names no price plan")
	}
	if err != nil {
		return domain.Account{}, s.treeRefusal(err)
	}
	if in.Reseller && !acct.Reseller {
		if err := s.st.SetReseller(ctx, acct.ID, true); err != nil {
			return acct, s.treeRefusal(err)
		}
		acct.Reseller = true
	}
	return s.st.Account(ctx, acct.ID)
}

// treeRefusal turns the store's refusals into the answers the actor sees:
// a parent that is not a reseller may not have children (403); the
// others (too deep, has children) keep their own codes.
func (s *Service) treeRefusal(err error) error {
	if errors.Is(err, domain.ErrNotReseller) {
		return ErrForbidden
	}
	return err
}

func parseBilling(v string) (domain.Billing, bool) {
	switch strings.ToLower(v) {
	case "", string(domain.BillSubmit):
		return "", true
	case string(domain.BillDelivery):
		return domain.BillDelivery, true
	}
	return "", false
}

// AccountChange is what PUT /accounts/{id} changes; nil fields stay.
type AccountChange struct {
	Reseller *bool
	Billing  *string
	// Prices replaces the price table (JSON as msgsvc account prices
	// takes it; {} restores the defaults), under the margin guard unless
	// AllowLoss.
	Prices    []byte
	AllowLoss bool
}

// UpdateAccount changes an account's place in the tree: only an operator
// makes an account a reseller or not, except that a reseller may make its
// own child one (section 12); its billing is set by its parent or an
// operator.
func (s *Service) UpdateAccount(ctx context.Context, a Actor, accountID string, ch AccountChange) (domain.Account, error) {
	var acct domain.Account
	var err error
	if a.Operator() {
		if acct, err = s.account(ctx, a, accountID, user.Operator); err != nil {
			return domain.Account{}, err
		}
	} else if acct, err = s.child(ctx, a, accountID); err != nil {
		return domain.Account{}, err
	}
	var p problems
	var billing domain.Billing
	if ch.Billing != nil {
		var ok bool
		if billing, ok = parseBilling(*ch.Billing); !ok {
			p.add("billing", "must be submit or delivery")
		}
	}
	var prices string
	if ch.Prices != nil {
		stored, _, err := ledger.ParsePriceTable(ch.Prices, acct.CountryCode)
		if err != nil {
			p.add("prices", err.Error())
		}
		prices = stored
	}
	if ch.Reseller == nil && ch.Billing == nil && ch.Prices == nil {
		p.add("reseller", "billing or prices is required")
	}
	if err := p.err("The change is not valid."); err != nil {
		return domain.Account{}, err
	}
	if ch.Prices != nil && acct.ParentID != "" {
		parent, err := s.st.Account(ctx, acct.ParentID)
		if err != nil {
			return domain.Account{}, fmt.Errorf("parent %s: %w", acct.ParentID, err)
		}
		if err := guardPrices(parent, prices, acct.CountryCode, ch.AllowLoss); err != nil {
			return domain.Account{}, err
		}
	}
	if ch.Reseller != nil {
		if err := s.st.SetReseller(ctx, acct.ID, *ch.Reseller); err != nil {
			return domain.Account{}, s.treeRefusal(err)
		}
	}
	if ch.Billing != nil {
		if err := s.st.SetBilling(ctx, acct.ID, billing); err != nil {
			return domain.Account{}, err
		}
	}
	if ch.Prices != nil {
		if err := s.st.SetPrices(ctx, acct.ID, prices); err != nil {
			return domain.Account{}, err
		}
	}
	return s.st.Account(ctx, acct.ID)
}

// TransferResult is a transfer's outcome: both balances after it.
type TransferResult struct {
	ParentID, ChildID           string
	Amount                      int64 // micro-credits; negative when taken back
	ParentBalance, ChildBalance int64
	Currency                    string
}

// Transfer moves credits from a child's parent to the child (negative:
// takes them back), by the parent's owner or admin or an operator. The
// ledger lines of both name the other account and carry the note and who
// made it.
func (s *Service) Transfer(ctx context.Context, a Actor, childID string, credits float64, note string) (TransferResult, error) {
	c, err := s.child(ctx, a, childID)
	if err != nil {
		return TransferResult{}, err
	}
	if c.ParentID == "" { // an operator naming a top-level account: there is no parent to move from
		return TransferResult{}, ErrNotFound
	}
	var p problems
	amount, err := ledger.FromCredits(credits)
	if err != nil || amount == 0 {
		p.add("amount", "must be a non-zero number of credits with at most 6 decimals")
	}
	note = strings.TrimSpace(note)
	if msg := labelProblem(note, 200); msg != "" {
		p.add("note", msg)
	}
	if err := p.err("The transfer is not valid."); err != nil {
		return TransferResult{}, err
	}
	line := "by " + a.Email
	if note != "" {
		line += ": " + note
	}
	pb, cb, err := s.st.Transfer(ctx, c.ParentID, c.ID, amount, line, s.now().UTC())
	if err != nil {
		return TransferResult{}, err
	}
	return TransferResult{ParentID: c.ParentID, ChildID: c.ID, Amount: amount, ParentBalance: pb, ChildBalance: cb, Currency: c.Currency}, nil
}

// guardPrices is the margin guard of a parent pricing its child: the
// child's table (stored form, "" for the defaults) may not undercut the
// parent's own at any destination unless allowLoss. A table that does is
// refused on the prices field, naming the first rate below.
func guardPrices(parent domain.Account, childPrices, childHome string, allowLoss bool) error {
	// A child is on no plan: its table is over the defaults.
	child, err := domain.ResolvePrices("", childPrices, childHome)
	if err != nil {
		return invalid("prices", err.Error())
	}
	own, err := parent.PriceList()
	if err != nil {
		return fmt.Errorf("parent %s: %w", parent.ID, err)
	}
	if err := domain.CheckChildPrices(child, childHome, own, parent.CountryCode, allowLoss); err != nil {
		return invalid("prices", "undercut the parent's own prices ("+err.Error()+")")
	}
	return nil
}

// hideText blanks what a message says, for a reseller reading a child's:
// it sees where and when its customers send, never what.
func hideText(m *domain.Message) {
	m.Body = ""
	m.Content = domain.Content{}
}
