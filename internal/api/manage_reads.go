package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// LimitAdmin shows an account's limits and decides requests to raise them.
type LimitAdmin interface {
	Limits(ctx context.Context, a manage.Actor, accountID string) (manage.LimitsView, error)
	LimitRequests(ctx context.Context, a manage.Actor, accountID string) ([]domain.LimitRequest, error)
	RequestLimits(ctx context.Context, a manage.Actor, accountID string, in manage.NewLimitRequest) (domain.LimitRequest, error)
	ApproveLimitRequest(ctx context.Context, a manage.Actor, requestID string, g manage.Grant) (domain.LimitRequest, error)
	RejectLimitRequest(ctx context.Context, a manage.Actor, requestID, reason string) (domain.LimitRequest, error)
}

// MessageAdmin searches an account's messages, shows their webhook
// attempts and delivers an event again.
type MessageAdmin interface {
	SearchMessages(ctx context.Context, a manage.Actor, accountID string, q manage.MessageQuery) (manage.MessagePage, error)
	Message(ctx context.Context, a manage.Actor, accountID, messageID string) (manage.MessageDetail, error)
	Attempts(ctx context.Context, a manage.Actor, accountID, messageID string) ([]domain.Attempt, error)
	Redeliver(ctx context.Context, a manage.Actor, accountID, eventID string) error
	Replies(ctx context.Context, a manage.Actor, accountID string, q manage.ReplyQuery) (manage.ReplyPage, error)
}

type limitsView struct {
	TierRPM   int `json:"tierRpm"`
	SendRPM   int `json:"sendRpm"`
	StatusRPM int `json:"statusRpm"`
	MediaRPM  int `json:"mediaRpm"`
}

func toLimitsView(l domain.Limits) limitsView {
	return limitsView{TierRPM: l.TierRPM, SendRPM: l.SendRPM, StatusRPM: l.StatusRPM, MediaRPM: l.MediaRPM}
}

type usageView struct {
	TierRPM   *int      `json:"tierRpm"`
	SendRPM   *int      `json:"sendRpm"`
	StatusRPM *int      `json:"statusRpm"`
	MediaRPM  *int      `json:"mediaRpm"`
	ResetAt   view.Time `json:"resetAt"`
}

func (s *Server) manageLimits(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	v, err := s.cfg.Manage.Limits(r.Context(), a, acct(r))
	if err != nil {
		return err
	}
	u := v.Usage
	writeJSON(w, http.StatusOK, map[string]any{"tier": v.Tier, "limits": toLimitsView(v.Limits),
		"usage": usageView{TierRPM: u.TierRPM, SendRPM: u.SendRPM, StatusRPM: u.StatusRPM, MediaRPM: u.MediaRPM, ResetAt: view.Time(u.ResetAt)}})
	return nil
}

type limitRequestView struct {
	ID            string      `json:"id"`
	AccountID     string      `json:"accountId"`
	Status        string      `json:"status"`
	MonthlyVolume int64       `json:"monthlyVolume"`
	UseCase       string      `json:"useCase"`
	Justification string      `json:"justification"`
	RequestedBy   string      `json:"requestedBy"`
	CreatedAt     view.Time   `json:"createdAt"`
	DecidedAt     view.Time   `json:"decidedAt"`
	DecidedBy     *string     `json:"decidedBy"`
	Tier          *string     `json:"tier"`
	Limits        *limitsView `json:"limits"`
	Reason        *string     `json:"reason"`
}

func toLimitRequestView(lr domain.LimitRequest) limitRequestView {
	v := limitRequestView{ID: lr.ID, AccountID: lr.AccountID, Status: lr.Status, MonthlyVolume: lr.MonthlyVolume, UseCase: lr.UseCase,
		Justification: lr.Justification, RequestedBy: lr.RequestedBy, CreatedAt: view.Time(lr.CreatedAt),
		DecidedAt: view.Time(lr.DecidedAt), DecidedBy: view.StrOrNil(lr.DecidedBy), Reason: view.StrOrNil(lr.Reason)}
	if lr.Status == domain.LimitApproved {
		l := toLimitsView(lr.Limits)
		v.Tier, v.Limits = &lr.Tier, &l
	}
	return v
}

func (s *Server) listLimitRequests(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	list, err := s.cfg.Manage.LimitRequests(r.Context(), a, acct(r))
	return writeList(w, "limitRequests", list, err, toLimitRequestView)
}

func (s *Server) createLimitRequest(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		MonthlyVolume int64  `json:"monthlyVolume"`
		UseCase       string `json:"useCase"`
		Justification string `json:"justification"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	lr, err := s.cfg.Manage.RequestLimits(r.Context(), a, acct(r), manage.NewLimitRequest{MonthlyVolume: req.MonthlyVolume,
		UseCase: req.UseCase, Justification: req.Justification})
	return answer(w, http.StatusCreated, lr, err, toLimitRequestView)
}

func (s *Server) approveLimitRequest(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Tier   string `json:"tier"`
		Limits *struct {
			TierRPM   *int `json:"tierRpm"`
			SendRPM   *int `json:"sendRpm"`
			StatusRPM *int `json:"statusRpm"`
			MediaRPM  *int `json:"mediaRpm"`
		} `json:"limits"`
	}
	if r.ContentLength != 0 {
		if err := readJSON(w, r, &req); err != nil {
			return err
		}
	}
	g := manage.Grant{Tier: req.Tier}
	if l := req.Limits; l != nil {
		g.TierRPM, g.SendRPM, g.StatusRPM, g.MediaRPM = l.TierRPM, l.SendRPM, l.StatusRPM, l.MediaRPM
	}
	lr, err := s.cfg.Manage.ApproveLimitRequest(r.Context(), a, r.PathValue("id"), g)
	return answer(w, http.StatusOK, lr, err, toLimitRequestView)
}

func (s *Server) rejectLimitRequest(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	var req struct {
		Reason string `json:"reason"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	lr, err := s.cfg.Manage.RejectLimitRequest(r.Context(), a, r.PathValue("id"), req.Reason)
	return answer(w, http.StatusOK, lr, err, toLimitRequestView)
}

// manageMessageItem is a message of a search: the status query's fields
// plus the environment, and for operators its route and cost.
type manageMessageItem struct {
	view.Message
	Environment domain.Environment `json:"environment"`
	// AccountID names the message's account in a search across accounts.
	AccountID string `json:"accountId,omitempty"`
	*costOf
	*fraudOf
}

func (s *Server) searchMessages(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	all, err := allAccounts(r)
	if err != nil {
		return err
	}
	var page manage.MessagePage
	if all {
		page, err = s.cfg.Manage.SearchAllMessages(r.Context(), a, messageQuery(r.URL.Query()))
	} else {
		page, err = s.cfg.Manage.SearchMessages(r.Context(), a, acct(r), messageQuery(r.URL.Query()))
	}
	if err != nil {
		return err
	}
	out := []manageMessageItem{}
	for _, m := range page.Messages {
		item := manageMessageItem{Message: view.OfMessage(m), Environment: m.Env, costOf: operatorCost(a, m), fraudOf: operatorFraud(a, m)}
		if all {
			item.AccountID = m.AccountID
		}
		out = append(out, item)
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": out, "nextCursor": view.StrOrNil(page.Next)})
	return nil
}

type attemptView struct {
	EventID    string    `json:"eventId"`
	At         view.Time `json:"at"`
	StatusCode *int      `json:"statusCode"`
	DurationMS int64     `json:"durationMs"`
	Error      *string   `json:"error"`
}

func toAttemptView(at domain.Attempt) attemptView {
	v := attemptView{EventID: at.EventID, At: view.Time(at.AttemptedAt), DurationMS: at.Duration.Milliseconds(), Error: view.StrOrNil(at.Error)}
	if at.StatusCode != 0 {
		code := at.StatusCode
		v.StatusCode = &code
	}
	return v
}

type eventView struct {
	EventID     string        `json:"eventId"`
	Type        string        `json:"type"`
	State       string        `json:"state"`
	CreatedAt   view.Time     `json:"createdAt"`
	DeliveredAt view.Time     `json:"deliveredAt"`
	Attempts    []attemptView `json:"attempts"`
}

type messageDetailView struct {
	view.Message
	Environment domain.Environment `json:"environment"`
	*costOf
	*fraudOf
	Webhooks []eventView `json:"webhooks"`
}

func (s *Server) manageMessage(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	d, err := s.cfg.Manage.Message(r.Context(), a, acct(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	out := messageDetailView{Message: view.OfMessage(d.Message), Environment: d.Message.Env, Webhooks: []eventView{},
		costOf: operatorCost(a, d.Message), fraudOf: operatorFraud(a, d.Message)}
	for _, ev := range d.Events {
		e := eventView{EventID: ev.Event.ID, Type: ev.Event.Event, State: ev.Event.State, CreatedAt: view.Time(ev.Event.CreatedAt),
			DeliveredAt: view.Time(ev.Event.DeliveredAt), Attempts: []attemptView{}}
		for _, at := range ev.Attempts {
			e.Attempts = append(e.Attempts, toAttemptView(at))
		}
		out.Webhooks = append(out.Webhooks, e)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) messageAttempts(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	list, err := s.cfg.Manage.Attempts(r.Context(), a, acct(r), r.PathValue("id"))
	return writeList(w, "attempts", list, err, toAttemptView)
}

type ledgerView struct {
	ID           string      `json:"id"`
	Amount       float64     `json:"amount"`
	BalanceAfter float64     `json:"balanceAfter"`
	Kind         ledger.Kind `json:"kind"`
	MessageID    *string     `json:"messageId"`
	CampaignID   *string     `json:"campaignId"`
	Note         *string     `json:"note"`
	// Counterparty is the other account of a transfer.
	Counterparty *string   `json:"counterparty"`
	CreatedAt    view.Time `json:"createdAt"`
}

type usageDayView struct {
	Day      string         `json:"day"`
	Channel  domain.Channel `json:"channel"`
	Messages int            `json:"messages"`
	Credits  float64        `json:"credits"`
}

func (s *Server) manageBalance(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	env := domain.Live
	if v := r.URL.Query().Get("environment"); v != "" {
		var err error
		if env, err = domain.ParseEnvironment(v); err != nil {
			return fieldError("environment", "must be test or live")
		}
	}
	b, err := s.cfg.Manage.Balance(r.Context(), a, acct(r), r.URL.Query().Get("before"), env)
	if err != nil {
		return err
	}
	lines := []ledgerView{}
	for _, e := range b.Ledger {
		lines = append(lines, ledgerView{ID: e.ID, Amount: ledger.Credits(e.Amount), BalanceAfter: ledger.Credits(e.BalanceAfter), Kind: e.Kind,
			MessageID: view.StrOrNil(e.MessageID), CampaignID: view.StrOrNil(e.CampaignID), Note: view.StrOrNil(e.Note), Counterparty: view.StrOrNil(e.Counterparty), CreatedAt: view.Time(e.CreatedAt)})
	}
	usage := []usageDayView{}
	for _, u := range b.Usage {
		usage = append(usage, usageDayView{Day: u.Day.Format(time.DateOnly), Channel: u.Channel, Messages: u.Messages, Credits: ledger.Credits(u.Charged)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"accountId": b.Account.ID, "balance": ledger.Credits(b.Account.Balance),
		"currency": b.Account.Currency, "ledger": lines, "nextBefore": view.StrOrNil(b.NextBefore), "environment": env, "usage": usage})
	return nil
}

// replyView is a reply as the management API lists it.
type replyView struct {
	ID          string             `json:"id"`
	Environment domain.Environment `json:"environment"`
	Phone       string             `json:"phone"`
	Channel     domain.Channel     `json:"channel"`
	Message     string             `json:"message"`
	CampaignID  *string            `json:"campaignId"`
	MessageID   *string            `json:"messageId"`
	ReceivedAt  view.Time          `json:"receivedAt"`
}

func (s *Server) listReplies(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	q := r.URL.Query()
	rq := manage.ReplyQuery{Environment: q.Get("environment"), Phone: q.Get("phone"), Cursor: q.Get("cursor")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n == 0 {
			n = -1 // out of range: the action names the field
		}
		rq.Limit = n
	}
	page, err := s.cfg.Manage.Replies(r.Context(), a, acct(r), rq)
	if err != nil {
		return err
	}
	out := []replyView{}
	for _, in := range page.Replies {
		out = append(out, replyView{ID: in.ID, Environment: in.Env, Phone: in.Phone, Channel: in.Channel, Message: in.Body,
			CampaignID: view.StrOrNil(in.CampaignID), MessageID: view.StrOrNil(in.MessageID), ReceivedAt: view.Time(in.ReceivedAt)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"replies": out, "nextCursor": view.StrOrNil(page.Next)})
	return nil
}
