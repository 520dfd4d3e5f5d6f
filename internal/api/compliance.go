package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/message"
)

// OptOutLister pages through an environment's opt-outs in the order they
// were recorded.
type OptOutLister interface {
	List(ctx context.Context, accountID string, env domain.Environment, cursor string, limit int) (compliance.Page, error)
}

// listOptOuts answers GET /api/v1/integration/opt-outs: the key's
// environment's opt-outs in the order they were recorded.
func (s *Server) listOptOuts(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	if s.cfg.OptOuts == nil {
		return errNotFound
	}
	limit, err := limitParam(r.URL.Query())
	if err != nil {
		return fieldError("limit", "must be a whole number from 1 to 1000")
	}
	p, err := s.cfg.OptOuts.List(r.Context(), c.Account.ID, c.Key.Env, r.URL.Query().Get("cursor"), limit)
	if errors.Is(err, compliance.ErrCursor) {
		return fieldError("cursor", compliance.ErrCursor.Error())
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view.OfOptOuts(p))
	return nil
}

// redactMessage answers POST /api/v1/integration/messages/{messageId}/redact.
func (s *Server) redactMessage(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	m, err := s.cfg.Messages.Redact(r.Context(), c.Scope(), r.PathValue("messageId"))
	if errors.Is(err, message.ErrHandingOver) {
		return problem("MESSAGE_NOT_CANCELABLE", "The message is being handed to a provider at this moment; redact it again in a few seconds.")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view.OfMessage(m))
	return nil
}
