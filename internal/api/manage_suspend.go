package api

import (
	"context"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// SuspensionAdmin suspends and resumes a child account with its subtree
// (docs/resellers.md#suspension).
type SuspensionAdmin interface {
	SuspendAccount(ctx context.Context, a manage.Actor, accountID string) (domain.Account, error)
	ResumeAccount(ctx context.Context, a manage.Actor, accountID string) (domain.Account, error)
}

func (s *Server) manageSuspensionRoutes(base string) {
	s.managed("POST "+base+"/accounts/{id}/suspend", s.suspendAccount)
	s.managed("POST "+base+"/accounts/{id}/resume", s.resumeAccount)
}

// suspensionView is an account's suspension after the action. SuspendedBy
// names the account whose suspension it is: the account itself, or one
// above it whose suspension still covers it after a resume.
type suspensionView struct {
	ID          string    `json:"id"`
	ParentID    string    `json:"parentId"`
	Suspended   bool      `json:"suspended"`
	SuspendedAt view.Time `json:"suspendedAt"`
	SuspendedBy string    `json:"suspendedBy"`
}

func suspensionOf(a domain.Account) suspensionView {
	return suspensionView{ID: a.ID, ParentID: a.ParentID, Suspended: a.Suspended(), SuspendedAt: view.Time(a.SuspendedAt),
		SuspendedBy: a.SuspendedBy}
}

func (s *Server) suspendAccount(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	acct, err := s.cfg.Manage.SuspendAccount(r.Context(), a, r.PathValue("id"))
	s.logSuspension("suspend", a, acct, err)
	return answer(w, http.StatusOK, acct, err, suspensionOf)
}

func (s *Server) resumeAccount(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	acct, err := s.cfg.Manage.ResumeAccount(r.Context(), a, r.PathValue("id"))
	s.logSuspension("resume", a, acct, err)
	return answer(w, http.StatusOK, acct, err, suspensionOf)
}

// logSuspension records who suspended or resumed which account: it stops
// or starts a customer's traffic, so operators must be able to find it.
func (s *Server) logSuspension(action string, a manage.Actor, acct domain.Account, err error) {
	if err != nil {
		return
	}
	s.cfg.Log.Info("account "+action, "account", acct.ID, "parent", acct.ParentID, "by", a.Email,
		"byAccount", a.AccountID, "suspended", acct.Suspended(), "suspendedBy", acct.SuspendedBy)
}
