package store

import (
	"context"
	"github.com/msgsvc/msgsvc/internal/domain"
	"sort"
)

var templates = newTable("templates", func(t *domain.MessageTemplate, c cols) cols {
	return c.add(textCol("account_id", &t.AccountID), textCol("name", &t.Name), textCol("language", &t.Language),
		textCol("category", &t.Category), textCol("status", &t.Status), textCol("body", &t.Body),
		jsonCol("parameters", &t.Parameters), timeCol("created_at", &t.CreatedAt))
})

// CreateTemplate stores a template; a taken (name, language) in the same
// account is ErrConflict.
func (s *Store) CreateTemplate(ctx context.Context, t domain.MessageTemplate) error {
	if t.Parameters == nil {
		t.Parameters = []string{}
	}
	_, err := s.wexec(ctx, templates.insert(s), templates.args(&t, nil)...)
	return inserted(err, "create template")
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
