package api

import (
	"context"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// SMPPAdmin manages an account's SMPP users and shows their binds.
type SMPPAdmin interface {
	SMPPUsers(ctx context.Context, a manage.Actor, accountID string) ([]domain.SMPPUser, error)
	SMPPActivity(ctx context.Context, a manage.Actor, accountID string) (map[string]domain.SMPPActivity, error)
	CreateSMPPUser(ctx context.Context, a manage.Actor, accountID string, in manage.NewSMPPUser) (domain.SMPPUser, string, error)
	RemoveSMPPUser(ctx context.Context, a manage.Actor, accountID, userID string) error
}

type smppUserView struct {
	ID          string    `json:"id"`
	SystemID    string    `json:"systemId"`
	Environment string    `json:"environment"`
	MaxBinds    int       `json:"maxBinds"`
	CreatedAt   view.Time `json:"createdAt"`
}

// smppUserListed is an SMPP user as the list shows it: with its open binds
// on every node, when it last bound (null: never) and its recent refusals,
// newest first.
type smppUserListed struct {
	smppUserView
	Binds          []smppBindView    `json:"binds"`
	LastBoundAt    view.Time         `json:"lastBoundAt"`
	RecentRefusals []smppRefusalView `json:"recentRefusals"`
}

type smppBindView struct {
	Type    string    `json:"type"`
	Address string    `json:"address"`
	Node    string    `json:"node"`
	Since   view.Time `json:"since"`
}

type smppRefusalView struct {
	At      view.Time `json:"at"`
	Address string    `json:"address"`
	Command string    `json:"command"`
	Status  string    `json:"status"`
	Reason  string    `json:"reason"`
}

type newSMPPUserView struct {
	smppUserView
	Password string `json:"password"`
}

func (s *Server) listSMPPUsers(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	users, err := s.cfg.Manage.SMPPUsers(r.Context(), a, acct(r))
	if err != nil {
		return err
	}
	activity, err := s.cfg.Manage.SMPPActivity(r.Context(), a, acct(r))
	if err != nil {
		return err
	}
	out := []smppUserListed{}
	for _, u := range users {
		act := activity[u.ID]
		v := smppUserListed{smppUserView: smppUserView{ID: u.ID, SystemID: u.SystemID, Environment: string(u.Env),
			MaxBinds: u.MaxBinds, CreatedAt: view.Time(u.CreatedAt)}, LastBoundAt: view.Time(act.LastBoundAt),
			Binds: []smppBindView{}, RecentRefusals: []smppRefusalView{}}
		for _, b := range act.Binds {
			v.Binds = append(v.Binds, smppBindView{Type: b.Type, Address: b.Addr, Node: b.Node, Since: view.Time(b.BoundAt)})
		}
		for _, r := range act.Refusals {
			v.RecentRefusals = append(v.RecentRefusals, smppRefusalView{At: view.Time(r.At), Address: r.Addr,
				Command: r.Command, Status: r.Status, Reason: r.Reason})
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"smppUsers": out})
	return nil
}

func (s *Server) createSMPPUser(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Environment string `json:"environment"`
		SystemID    string `json:"systemId"`
		MaxBinds    *int   `json:"maxBinds"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	in := manage.NewSMPPUser{Environment: req.Environment, SystemID: req.SystemID}
	if req.MaxBinds != nil {
		in.MaxBinds = *req.MaxBinds
		if in.MaxBinds == 0 {
			in.MaxBinds = -1 // an explicit 0 is out of range, not the default
		}
	}
	u, pw, err := s.cfg.Manage.CreateSMPPUser(r.Context(), a, acct(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, newSMPPUserView{smppUserView: smppUserView{ID: u.ID, SystemID: u.SystemID,
		Environment: string(u.Env), MaxBinds: u.MaxBinds, CreatedAt: view.Time(u.CreatedAt)}, Password: pw})
	return nil
}

func (s *Server) removeSMPPUser(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	return noContent(w, s.cfg.Manage.RemoveSMPPUser(r.Context(), a, acct(r), r.PathValue("id")))
}
