package api

import (
	"context"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/template"
)

// TemplateLister lists an account's WhatsApp templates.
type TemplateLister interface {
	List(ctx context.Context, accountID string) ([]template.Template, error)
}

type templateJSON struct {
	Name       string   `json:"name"`
	Language   string   `json:"language"`
	Category   string   `json:"category"`
	Status     string   `json:"status"`
	Body       string   `json:"body"`
	Parameters []string `json:"parameters"`
}

func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	if s.cfg.Templates == nil {
		return errNotFound
	}
	list, err := s.cfg.Templates.List(r.Context(), c.Account.ID)
	if err != nil {
		return err
	}
	out := make([]templateJSON, len(list))
	for i, t := range list {
		p := t.Parameters
		if p == nil {
			p = []string{}
		}
		out[i] = templateJSON{Name: t.Name, Language: t.Language, Category: t.Category, Status: t.Status, Body: t.Body, Parameters: p}
	}
	writeJSON(w, http.StatusOK, map[string]any{"templates": out})
	return nil
}
