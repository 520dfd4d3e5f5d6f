package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/media"
	"github.com/msgsvc/msgsvc/internal/template"
)

// sendMedia lets the send path check media references against the
// account's uploads and the channel's limits; refusals become field errors
// so the integrator sees which field and which rule.
type sendMedia struct {
	files *media.Store
	urls  *media.URLChecker
}

func (m sendMedia) Check(ctx context.Context, accountID string, channel domain.Channel, ref domain.Media) error {
	var rule *media.RuleError
	switch {
	case ref.MediaID != "":
		it, err := m.files.Lookup(ctx, accountID, ref.MediaID)
		if errors.Is(err, media.ErrNotFound) {
			return &domain.FieldError{Field: "mediaId", Message: "is not a file uploaded by this account"}
		}
		if err != nil {
			return err
		}
		if err := media.CheckFor(string(channel), it); errors.As(err, &rule) {
			return &domain.FieldError{Field: "mediaId", Message: rule.Error()}
		} else if err != nil {
			return err
		}
	case ref.URL != "":
		if _, err := m.urls.Check(ctx, ref.URL, string(channel)); errors.As(err, &rule) {
			return &domain.FieldError{Field: "url", Message: rule.Error()}
		} else if err != nil {
			return err
		}
	}
	return nil
}

// sendTemplates renders an account's approved WhatsApp templates for the
// send path.
type sendTemplates struct{ svc *template.Service }

func (t sendTemplates) Render(ctx context.Context, accountID, name, language string, params []string) (string, error) {
	tpl, err := t.svc.Find(ctx, accountID, name, language)
	if errors.Is(err, template.ErrNotFound) {
		return "", &domain.FieldError{Field: "name", Message: fmt.Sprintf("no template %q in language %q in this account", name, language)}
	}
	if err != nil {
		return "", err
	}
	if err := tpl.Sendable(); err != nil {
		return "", &domain.FieldError{Field: "name", Message: err.Error()}
	}
	text, err := template.Render(tpl, params)
	if err != nil {
		return "", &domain.FieldError{Field: "parameters", Message: err.Error()}
	}
	return text, nil
}
