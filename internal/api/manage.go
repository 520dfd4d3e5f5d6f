package api

import (
	"bytes"
	"context"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/apikey"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/user"
)

// The management API: each handler decodes, calls the one implementation
// of its action in internal/manage and renders the answer. The account is
// the user's own; operators name it with ?account=ID.

// Manager is the management API's actions: the union of the areas each
// handler file declares, which manage.Service implements in one value.
type Manager interface {
	Sessions
	KeyAdmin
	SenderAdmin
	AccountAdmin
	LimitAdmin
	MessageAdmin
	AlertAdmin
	ComplianceAdmin
	RouteAdmin
	SMPPAdmin
	TwilioAdmin
	TreeAdmin
	SuspensionAdmin
	FraudAdmin
	PlanAdmin
	ConsoleAdmin
}

// KeyAdmin manages an account's API keys, IP allow-list and webhook secret.
type KeyAdmin interface {
	Keys(ctx context.Context, a manage.Actor, accountID string) ([]domain.APIKey, error)
	CreateKey(ctx context.Context, a manage.Actor, accountID, env, name string) (apikey.Key, domain.APIKey, error)
	RevokeKey(ctx context.Context, a manage.Actor, accountID, keyID string) error
	Allowlist(ctx context.Context, a manage.Actor, accountID string) ([]string, error)
	SetAllowlist(ctx context.Context, a manage.Actor, accountID string, entries []string) ([]string, error)
	RotateSecret(ctx context.Context, a manage.Actor, accountID string) (manage.Secret, error)
}

// SenderAdmin manages sender ids and their approval.
type SenderAdmin interface {
	Senders(ctx context.Context, a manage.Actor, accountID string) ([]domain.Sender, error)
	AddSender(ctx context.Context, a manage.Actor, accountID string, in manage.NewSender) (domain.Sender, error)
	ApproveSender(ctx context.Context, a manage.Actor, senderID string) (domain.Sender, error)
	RejectSender(ctx context.Context, a manage.Actor, senderID, reason string) (domain.Sender, error)
	RemoveSender(ctx context.Context, a manage.Actor, accountID, senderID string) error
}

// AccountAdmin lists accounts, tops them up and manages their users.
type AccountAdmin interface {
	Accounts(ctx context.Context, a manage.Actor) ([]domain.Account, error)
	TopUp(ctx context.Context, a manage.Actor, accountID string, credits float64, note string) (int64, error)
	Balance(ctx context.Context, a manage.Actor, accountID, before string, env domain.Environment) (manage.BalanceView, error)
	Users(ctx context.Context, a manage.Actor, accountID string) ([]domain.User, error)
	CreateUser(ctx context.Context, a manage.Actor, in manage.NewUser) (domain.User, string, error)
	RemoveUser(ctx context.Context, a manage.Actor, accountID, userID string) error
}

func (s *Server) manageRoutes() {
	const base = "/api/v1/manage"
	s.handle("POST /api/v1/auth/logout", http.HandlerFunc(s.logout))
	s.managed("POST /api/v1/auth/password", s.changePassword)

	s.managed("GET "+base+"/keys", s.listKeys)
	s.managed("POST "+base+"/keys", s.createKey)
	s.managed("DELETE "+base+"/keys/{id}", s.revokeKey)
	s.managed("GET "+base+"/smpp-users", s.listSMPPUsers)
	s.managed("POST "+base+"/smpp-users", s.createSMPPUser)
	s.managed("DELETE "+base+"/smpp-users/{id}", s.removeSMPPUser)
	s.managed("GET "+base+"/security/ip-allowlist", s.getAllowlist)
	s.managed("PUT "+base+"/security/ip-allowlist", s.putAllowlist)
	s.managed("POST "+base+"/webhook-secret/rotate", s.rotateSecret)
	s.managed("GET "+base+"/senders", s.listSenders)
	s.managed("POST "+base+"/senders", s.addSender)
	s.managed("DELETE "+base+"/senders/{id}", s.removeSender)
	s.managed("POST "+base+"/senders/{id}/approve", s.approveSender)
	s.managed("POST "+base+"/senders/{id}/reject", s.rejectSender)
	s.managed("GET "+base+"/limits", s.manageLimits)
	s.managed("GET "+base+"/limit-requests", s.listLimitRequests)
	s.managed("POST "+base+"/limit-requests", s.createLimitRequest)
	s.managed("POST "+base+"/limit-requests/{id}/approve", s.approveLimitRequest)
	s.managed("POST "+base+"/limit-requests/{id}/reject", s.rejectLimitRequest)
	s.managed("GET "+base+"/messages", s.searchMessages)
	s.managed("GET "+base+"/messages/{id}", s.manageMessage)
	s.managed("GET "+base+"/messages/{id}/attempts", s.messageAttempts)
	s.managed("POST "+base+"/events/{id}/redeliver", s.redeliver)
	s.managed("GET "+base+"/replies", s.listReplies)
	s.managed("GET "+base+"/balance", s.manageBalance)
	s.managed("GET "+base+"/users", s.listUsers)
	s.managed("POST "+base+"/users", s.createUser)
	s.managed("DELETE "+base+"/users/{id}", s.removeUser)
	s.managed("POST "+base+"/topups", s.topUp)
	s.manageComplianceRoutes(base)
	s.manageRouteRoutes(base)
	s.manageAlertRoutes(base)
	s.manageTwilioRoutes(base)
	s.manageTreeRoutes(base)
	s.manageSuspensionRoutes(base)
	s.manageFraudRoutes(base)
	s.managePlanRoutes(base)
	s.manageConsoleRoutes(base)
	s.manageCampaignRoutes(base)
}

// acct is the account a request names (?account=ID; operators only).
func acct(r *http.Request) string { return r.URL.Query().Get("account") }

type keyView struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Prefix      string    `json:"prefix"`
	Environment string    `json:"environment"`
	CreatedAt   view.Time `json:"createdAt"`
	LastUsedAt  view.Time `json:"lastUsedAt"`
	RevokedAt   view.Time `json:"revokedAt"`
}

type newKeyView struct {
	keyView
	Key string `json:"key"`
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	keys, err := s.cfg.Manage.Keys(r.Context(), a, acct(r))
	return writeList(w, "keys", keys, err, toKeyView)
}

func toKeyView(k domain.APIKey) keyView {
	return keyView{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Environment: string(k.Env), CreatedAt: view.Time(k.CreatedAt),
		LastUsedAt: view.Time(k.LastUsedAt), RevokedAt: view.Time(k.RevokedAt)}
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Environment string `json:"environment"`
		Name        string `json:"name"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	k, rec, err := s.cfg.Manage.CreateKey(r.Context(), a, acct(r), req.Environment, req.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, newKeyView{keyView: toKeyView(rec), Key: k.Secret})
	return nil
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	return noContent(w, s.cfg.Manage.RevokeKey(r.Context(), a, acct(r), r.PathValue("id")))
}

type allowlistBody struct {
	Entries []string `json:"entries"`
}

func (s *Server) getAllowlist(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	list, err := s.cfg.Manage.Allowlist(r.Context(), a, acct(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, allowlistBody{Entries: list})
	return nil
}

func (s *Server) putAllowlist(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Entries *[]string `json:"entries"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	if req.Entries == nil {
		return fieldError("entries", "is required: a list of addresses and CIDR ranges ([] lifts the restriction)")
	}
	list, err := s.cfg.Manage.SetAllowlist(r.Context(), a, acct(r), *req.Entries)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, allowlistBody{Entries: list})
	return nil
}

func (s *Server) rotateSecret(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	sec, err := s.cfg.Manage.RotateSecret(r.Context(), a, acct(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"secret": sec.Current, "previousValidUntil": view.Time(sec.PreviousValidUntil)})
	return nil
}

type senderView struct {
	ID        string         `json:"id"`
	AccountID string         `json:"accountId"`
	Channel   domain.Channel `json:"channel"`
	Value     string         `json:"value"`
	Default   bool           `json:"default"`
	Status    string         `json:"status"`
	Reason    *string        `json:"reason"` // null unless rejected
	CreatedAt view.Time      `json:"createdAt"`
	DecidedAt view.Time      `json:"decidedAt"`
}

func newSenderView(sd domain.Sender) senderView {
	v := senderView{ID: sd.ID, AccountID: sd.AccountID, Channel: sd.Channel, Value: sd.Value, Default: sd.Default,
		Status: sd.Status, CreatedAt: view.Time(sd.CreatedAt), DecidedAt: view.Time(sd.DecidedAt)}
	if sd.Status == domain.SenderRejected {
		v.Reason = &sd.Reason
	}
	return v
}

func (s *Server) listSenders(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	list, err := s.cfg.Manage.Senders(r.Context(), a, acct(r))
	return writeList(w, "senders", list, err, newSenderView)
}

func (s *Server) addSender(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Channel string `json:"channel"`
		Value   string `json:"value"`
		Default bool   `json:"default"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	sd, err := s.cfg.Manage.AddSender(r.Context(), a, acct(r), manage.NewSender{Channel: req.Channel, Value: req.Value, Default: req.Default})
	return answer(w, http.StatusCreated, sd, err, newSenderView)
}

// approveSender takes no body (an empty JSON object is accepted too).
func (s *Server) approveSender(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := decodeJSON(body, &struct{}{}); err != nil {
			return err
		}
	}
	sd, err := s.cfg.Manage.ApproveSender(r.Context(), a, r.PathValue("id"))
	return answer(w, http.StatusOK, sd, err, newSenderView)
}

func (s *Server) rejectSender(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Reason string `json:"reason"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	sd, err := s.cfg.Manage.RejectSender(r.Context(), a, r.PathValue("id"), req.Reason)
	return answer(w, http.StatusOK, sd, err, newSenderView)
}

func (s *Server) removeSender(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	return noContent(w, s.cfg.Manage.RemoveSender(r.Context(), a, acct(r), r.PathValue("id")))
}

func (s *Server) redeliver(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	if err := s.cfg.Manage.Redeliver(r.Context(), a, acct(r), r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"eventId": r.PathValue("id"), "queued": true})
	return nil
}

func (s *Server) topUp(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Amount float64 `json:"amount"`
		Note   string  `json:"note"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	bal, err := s.cfg.Manage.TopUp(r.Context(), a, acct(r), req.Amount, req.Note)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"accountId": acct(r), "amount": req.Amount, "balance": ledger.Credits(bal)})
	return nil
}

type userView struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	CreatedAt view.Time `json:"createdAt"`
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	list, err := s.cfg.Manage.Users(r.Context(), a, acct(r))
	return writeList(w, "users", list, err, func(u domain.User) userView {
		return userView{ID: u.ID, Email: u.Email, Role: u.Role, CreatedAt: view.Time(u.CreatedAt)}
	})
}

func (s *Server) createUser(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Email    string `json:"email"`
		Role     string `json:"role"`
		Password string `json:"password"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	if req.Role == user.Operator {
		return fieldError("role", "must be owner, admin, developer or viewer (operators are made with msgsvc user create --operator)")
	}
	u, pw, err := s.cfg.Manage.CreateUser(r.Context(), a, manage.NewUser{AccountID: acct(r), Email: req.Email, Role: req.Role,
		Password: req.Password})
	if err != nil {
		return err
	}
	out := struct {
		userView
		Password *string `json:"password,omitempty"`
	}{userView: userView{ID: u.ID, Email: u.Email, Role: u.Role, CreatedAt: view.Time(u.CreatedAt)}}
	if req.Password == "" {
		out.Password = &pw
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) removeUser(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	return noContent(w, s.cfg.Manage.RemoveUser(r.Context(), a, acct(r), r.PathValue("id")))
}
