package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Template is a WhatsApp message template of an account, named by Name
// and Language together.
type Template struct {
	AccountID  string
	Name       string
	Language   string
	Category   string
	Status     string
	Body       string
	Parameters []string // one label per placeholder, in order
	CreatedAt  time.Time
}

const templateCols = `account_id, name, language, category, status, body, parameters, created_at`

func scanTemplate(row interface{ Scan(...any) error }) (Template, error) {
	var t Template
	var params string
	var created sql.NullInt64
	err := row.Scan(&t.AccountID, &t.Name, &t.Language, &t.Category, &t.Status, &t.Body, &params, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNotFound
	}
	if err != nil {
		return t, fmt.Errorf("scan template: %w", err)
	}
	if err := json.Unmarshal([]byte(params), &t.Parameters); err != nil {
		return t, fmt.Errorf("template %s/%s parameters: %w", t.Name, t.Language, err)
	}
	t.CreatedAt = fromMS(created)
	return t, nil
}

// CreateTemplate stores a template; a taken (name, language) in the same
// account is ErrConflict.
func (s *Store) CreateTemplate(ctx context.Context, t Template) error {
	params := t.Parameters
	if params == nil {
		params = []string{}
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("create template: %w", err)
	}
	_, err = s.wexec(ctx, `INSERT INTO templates (`+templateCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		t.AccountID, t.Name, t.Language, t.Category, t.Status, t.Body, string(raw), ms(t.CreatedAt))
	if err != nil {
		if isUniqueViolation(err) {
			return ErrConflict
		}
		return fmt.Errorf("create template: %w", err)
	}
	return nil
}

// Template reads one template of an account.
func (s *Store) Template(ctx context.Context, accountID, name, language string) (Template, error) {
	return scanTemplate(s.rqueryRow(ctx, `SELECT `+templateCols+` FROM templates
		WHERE account_id = $1 AND name = $2 AND language = $3`, accountID, name, language))
}

// Templates lists an account's templates by name, then language.
func (s *Store) Templates(ctx context.Context, accountID string) ([]Template, error) {
	rows, err := s.rquery(ctx, `SELECT `+templateCols+` FROM templates WHERE account_id = $1`, accountID)
	if err != nil {
		return nil, fmt.Errorf("list templates: %w", err)
	}
	defer rows.Close()
	var out []Template
	for rows.Next() {
		t, err := scanTemplate(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	// Sorted here rather than in SQL: PostgreSQL's collation would order
	// "_" differently from SQLite's byte order.
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Language < out[j].Language
	})
	return out, rows.Err()
}
