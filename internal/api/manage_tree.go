package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// TreeAdmin is the account tree: resellers' children, their settings and
// the credits moved between a parent and its child (section 12).
type TreeAdmin interface {
	ChildrenOf(ctx context.Context, a manage.Actor, accountID string) ([]domain.Account, error)
	AccountInTree(ctx context.Context, a manage.Actor, accountID string) (domain.Account, error)
	CreateAccount(ctx context.Context, a manage.Actor, in manage.NewChild) (domain.Account, error)
	UpdateAccount(ctx context.Context, a manage.Actor, accountID string, ch manage.AccountChange) (domain.Account, error)
	Transfer(ctx context.Context, a manage.Actor, childID string, credits float64, note string) (manage.TransferResult, error)
}

func (s *Server) manageTreeRoutes(base string) {
	s.managed("GET "+base+"/accounts", s.listAccounts)
	s.managed("POST "+base+"/accounts", s.createAccount)
	s.managed("GET "+base+"/accounts/{id}", s.getAccount)
	s.managed("PUT "+base+"/accounts/{id}", s.updateAccount)
	s.managed("POST "+base+"/accounts/{id}/transfers", s.transfer)
}

type accountView struct {
	ID          string          `json:"id"`
	ParentID    *string         `json:"parentId"`
	Name        string          `json:"name"`
	Tier        string          `json:"tier"`
	Currency    string          `json:"currency"`
	Country     string          `json:"country"`
	Balance     float64         `json:"balance"`
	Reseller    bool            `json:"reseller"`
	Billing     domain.Billing  `json:"billing"`
	Suspended   bool            `json:"suspended"`
	SuspendedAt view.Time       `json:"suspendedAt"`
	Limits      limitsView      `json:"limits"`
	Prices      json.RawMessage `json:"prices,omitempty"`
	PricePlan   *string         `json:"pricePlan"`
	CreatedAt   view.Time       `json:"createdAt"`
}

func toAccountView(ac domain.Account) accountView {
	v := accountView{ID: ac.ID, ParentID: view.StrOrNil(ac.ParentID), Name: ac.Name, Tier: ac.Tier, Currency: ac.Currency,
		Country: ac.CountryCode, Balance: ledger.Credits(ac.Balance), Reseller: ac.Reseller, Billing: domain.BillSubmit,
		Suspended: ac.Suspended(), SuspendedAt: view.Time(ac.SuspendedAt), Limits: toLimitsView(ac.Limits),
		CreatedAt: view.Time(ac.CreatedAt)}
	if ac.BillsOnDelivery() {
		v.Billing = domain.BillDelivery
	}
	v.PricePlan = view.StrOrNil(ac.PricePlanID)
	if t, err := ac.PriceList(); err == nil && (ac.Prices != "" || ac.PricePlanID != "") {
		if raw, err := json.Marshal(ledger.PriceTableJSON(t)); err == nil {
			v.Prices = raw
		}
	}
	return v
}

// listAccounts lists every account for operators and a reseller's
// children for its users; ?account=ID lists the children of an account
// below (or, for operators, any).
func (s *Server) listAccounts(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var list []domain.Account
	var err error
	if acct(r) != "" {
		list, err = s.cfg.Manage.ChildrenOf(r.Context(), a, acct(r))
	} else {
		list, err = s.cfg.Manage.Accounts(r.Context(), a)
	}
	return writeList(w, "accounts", list, err, toAccountView)
}

func (s *Server) getAccount(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	ac, err := s.cfg.Manage.AccountInTree(r.Context(), a, r.PathValue("id"))
	return answer(w, http.StatusOK, ac, err, toAccountView)
}

// createAccount makes a reseller's child (its owner or admin), or for an
// operator a top-level account, or a child of ?account=ID.
func (s *Server) createAccount(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Name      string          `json:"name"`
		Country   string          `json:"country"`
		Currency  string          `json:"currency"`
		Tier      string          `json:"tier"`
		Prices    json.RawMessage `json:"prices"`
		AllowLoss bool            `json:"allowLoss"`
		Reseller  bool            `json:"reseller"`
		Billing   string          `json:"billing"`
		PricePlan string          `json:"pricePlan"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	if string(req.Prices) == "null" {
		req.Prices = nil
	}
	ac, err := s.cfg.Manage.CreateAccount(r.Context(), a, manage.NewChild{ParentID: acct(r), Name: req.Name, Country: req.Country,
		Currency: req.Currency, Tier: req.Tier, Prices: req.Prices, AllowLoss: req.AllowLoss, Reseller: req.Reseller, Billing: req.Billing,
		PricePlan: req.PricePlan})
	return answer(w, http.StatusCreated, ac, treeError(err), toAccountView)
}

func (s *Server) updateAccount(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Reseller  *bool           `json:"reseller"`
		Billing   *string         `json:"billing"`
		Prices    json.RawMessage `json:"prices"`
		AllowLoss bool            `json:"allowLoss"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	if string(req.Prices) == "null" {
		req.Prices = nil
	}
	ac, err := s.cfg.Manage.UpdateAccount(r.Context(), a, r.PathValue("id"), manage.AccountChange{Reseller: req.Reseller, Billing: req.Billing,
		Prices: req.Prices, AllowLoss: req.AllowLoss})
	return answer(w, http.StatusOK, ac, treeError(err), toAccountView)
}

func (s *Server) transfer(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Amount *float64 `json:"amount"`
		Note   string   `json:"note"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	if req.Amount == nil {
		return fieldError("amount", "is required: credits to move to the child (negative takes them back)")
	}
	t, err := s.cfg.Manage.Transfer(r.Context(), a, r.PathValue("id"), *req.Amount, req.Note)
	if err != nil {
		return treeError(err)
	}
	writeJSON(w, http.StatusCreated, map[string]any{"parentId": t.ParentID, "childId": t.ChildID, "amount": ledger.Credits(t.Amount),
		"parentBalance": ledger.Credits(t.ParentBalance), "childBalance": ledger.Credits(t.ChildBalance), "currency": t.Currency})
	return nil
}

// treeError gives the tree's refusals their codes.
func treeError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, domain.ErrTreeTooDeep):
		return problem("ACCOUNT_TREE_TOO_DEEP", "Accounts stand at most 3 levels below the operator; an account at the third level cannot have children.")
	case errors.Is(err, domain.ErrHasChildren):
		return problem("ACCOUNT_HAS_CHILDREN", "The account has children, so it stays a reseller.")
	case errors.Is(err, domain.ErrChildShort):
		return problem("CHILD_INSUFFICIENT_CREDITS", "The child's balance does not cover what would be taken back; nothing was moved.")
	case errors.Is(err, ledger.ErrInsufficientCredits):
		return problem("INSUFFICIENT_CREDITS", "The parent's balance does not cover the transfer; nothing was moved.")
	}
	return err
}
