package store

import (
	"context"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
	"sort"
	"time"
)

var templates = newTable("templates",
	textCol("account_id", func(t *domain.MessageTemplate) *string { return &t.AccountID }),
	textCol("name", func(t *domain.MessageTemplate) *string { return &t.Name }),
	textCol("language", func(t *domain.MessageTemplate) *string { return &t.Language }),
	textCol("category", func(t *domain.MessageTemplate) *string { return &t.Category }),
	textCol("status", func(t *domain.MessageTemplate) *string { return &t.Status }),
	textCol("body", func(t *domain.MessageTemplate) *string { return &t.Body }),
	jsonCol("parameters", func(t *domain.MessageTemplate) *[]string { return &t.Parameters }),
	timeCol("created_at", func(t *domain.MessageTemplate) *time.Time { return &t.CreatedAt }),
)

// CreateTemplate stores a template; a taken (name, language) in the same
// account is ErrConflict.
func (s *Store) CreateTemplate(ctx context.Context, t domain.MessageTemplate) error {
	if t.Parameters == nil {
		t.Parameters = []string{}
	}
	_, err := s.wexec(ctx, templates.insert(s), templates.args(&t, nil)...)
	if err != nil {
		if isUniqueViolation(err) {
			return domain.ErrConflict
		}
		return fmt.Errorf("create template: %w", err)
	}
	return nil
}

// Template reads one template of an account.
func (s *Store) Template(ctx context.Context, accountID, name, language string) (domain.MessageTemplate, error) {
	return templates.scan(s.rqueryRow(ctx, `SELECT `+templates.list+` FROM templates
		WHERE account_id = $1 AND name = $2 AND language = $3`, accountID, name, language))
}

// Templates lists an account's templates by name, then language.
func (s *Store) Templates(ctx context.Context, accountID string) ([]domain.MessageTemplate, error) {
	out, err := templates.scanAll(s.rquery(ctx, `SELECT `+templates.list+` FROM templates WHERE account_id = $1`, accountID))
	if err != nil {
		return nil, err
	}
	// Sorted here rather than in SQL: PostgreSQL's collation would order
	// "_" differently from SQLite's byte order.
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Language < out[j].Language
	})
	return out, nil
}
