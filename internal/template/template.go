// Package template keeps an account's WhatsApp message templates and fills
// them in. A body names its parameters {{1}} … {{n}}; a send passes exactly
// n values, in order.
package template

import (
	"context"
	"errors"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Review statuses; only Approved templates can be sent.
const (
	Approved = "APPROVED"
	Pending  = "PENDING"
	Rejected = "REJECTED"
	Paused   = "PAUSED"
	Disabled = "DISABLED"
)

// Categories of WhatsApp templates.
const (
	Marketing      = "MARKETING"
	Utility        = "UTILITY"
	Authentication = "AUTHENTICATION"
)

// Limits of WhatsApp's template rules.
const (
	maxBody      = 1024
	maxName      = 512
	maxParamText = 1024
)

// Template is a WhatsApp template of one account.
type Template struct {
	Name       string
	Language   string
	Category   string
	Status     string
	Body       string
	Parameters []string // one label per placeholder, in order
	CreatedAt  time.Time
}

// ErrNotFound: no template of that name and language in the account. It is
// also domain.ErrNotFound.
var ErrNotFound error = notFound{}

type notFound struct{}

func (notFound) Error() string        { return "no such template in this account" }
func (notFound) Is(target error) bool { return target == domain.ErrNotFound }

// ErrExists: the account already has a template of that name and language.
var ErrExists = errors.New("a template with this name and language exists")

// Repo is the part of the database templates use (*store.Store).
type Repo interface {
	CreateTemplate(ctx context.Context, t domain.MessageTemplate) error
	Template(ctx context.Context, accountID, name, language string) (domain.MessageTemplate, error)
	Templates(ctx context.Context, accountID string) ([]domain.MessageTemplate, error)
}

// Service reads and writes templates.
type Service struct {
	repo Repo
	now  func() time.Time
}

// New makes a Service; now nil means time.Now.
func New(repo Repo, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{repo: repo, now: now}
}

// NewTemplate is what Create needs. Status defaults to APPROVED (an
// operator registers a template WhatsApp has already approved);
// Parameters defaults to labels derived from the body ("{{1}}", …).
type NewTemplate struct {
	Name, Language, Category, Status, Body string
	Parameters                             []string
}

var (
	nameRe     = regexp.MustCompile(`^[a-z0-9_]+$`)
	languageRe = regexp.MustCompile(`^[a-z]{2,3}(_[A-Z]{2})?$`)
)

// Create validates and stores a template. Errors name the field at fault;
// a taken name and language is ErrExists.
func (s *Service) Create(ctx context.Context, accountID string, in NewTemplate) (Template, error) {
	t := Template{Name: in.Name, Language: in.Language, Category: strings.ToUpper(in.Category),
		Status: strings.ToUpper(in.Status), Body: in.Body, Parameters: in.Parameters, CreatedAt: s.now().UTC()}
	if t.Status == "" {
		t.Status = Approved
	}
	if err := t.validate(); err != nil {
		return Template{}, err
	}
	err := s.repo.CreateTemplate(ctx, domain.MessageTemplate{AccountID: accountID, Name: t.Name, Language: t.Language,
		Category: t.Category, Status: t.Status, Body: t.Body, Parameters: t.Parameters, CreatedAt: t.CreatedAt})
	if errors.Is(err, domain.ErrConflict) {
		return Template{}, fmt.Errorf("%w: %s (%s)", ErrExists, t.Name, t.Language)
	}
	if err != nil {
		return Template{}, fmt.Errorf("create template: %w", err)
	}
	return t, nil
}

func (t *Template) validate() error {
	switch {
	case len(t.Name) == 0 || len(t.Name) > maxName || !nameRe.MatchString(t.Name):
		return fmt.Errorf("name %q: use lower-case letters, digits and _ (at most %d)", t.Name, maxName)
	case !languageRe.MatchString(t.Language):
		return fmt.Errorf("language %q: use a code like en, pt_BR or fil", t.Language)
	case t.Category != Marketing && t.Category != Utility && t.Category != Authentication:
		return fmt.Errorf("category %q: use MARKETING, UTILITY or AUTHENTICATION", t.Category)
	case t.Status != Approved && t.Status != Pending && t.Status != Rejected && t.Status != Paused && t.Status != Disabled:
		return fmt.Errorf("status %q: use APPROVED, PENDING, REJECTED, PAUSED or DISABLED", t.Status)
	case strings.TrimSpace(t.Body) == "" || len([]rune(t.Body)) > maxBody:
		return fmt.Errorf("body: required, at most %d characters", maxBody)
	}
	n, err := Placeholders(t.Body)
	if err != nil {
		return fmt.Errorf("body: %w", err)
	}
	if t.Parameters == nil {
		t.Parameters = make([]string, n)
		for i := range t.Parameters {
			t.Parameters[i] = "{{" + strconv.Itoa(i+1) + "}}"
		}
	}
	if len(t.Parameters) != n {
		return fmt.Errorf("parameters: the body has %d placeholders but %d labels were given", n, len(t.Parameters))
	}
	for i, p := range t.Parameters {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("parameters: label %d is empty", i+1)
		}
	}
	return nil
}

// placeholderRe finds anything in double braces, so that a malformed
// placeholder is reported rather than sent as text.
var placeholderRe = regexp.MustCompile(`\{\{([^{}]*)\}\}`)

// Placeholders returns n for a body using {{1}} … {{n}}. Each number from
// 1 to n must appear (more than once is fine); anything else in double
// braces is an error.
func Placeholders(body string) (int, error) {
	seen := map[int]bool{}
	n := 0
	for _, m := range placeholderRe.FindAllStringSubmatch(body, -1) {
		k, err := strconv.Atoi(m[1])
		if err != nil || k < 1 || m[1][0] == '0' || k > 100 {
			return 0, fmt.Errorf("%s is not a placeholder; use {{1}}, {{2}}, …", m[0])
		}
		seen[k] = true
		n = max(n, k)
	}
	for k := 1; k <= n; k++ {
		if !seen[k] {
			return 0, fmt.Errorf("placeholders must be numbered from {{1}} without gaps; {{%d}} is missing", k)
		}
	}
	return n, nil
}

// Find reads a template of the account by name and language, whatever its
// status; see Sendable.
func (s *Service) Find(ctx context.Context, accountID, name, language string) (Template, error) {
	t, err := s.repo.Template(ctx, accountID, name, language)
	if errors.Is(err, domain.ErrNotFound) {
		return Template{}, ErrNotFound
	}
	if err != nil {
		return Template{}, fmt.Errorf("template: %w", err)
	}
	return fromStore(t), nil
}

// List returns the account's templates by name, then language.
func (s *Service) List(ctx context.Context, accountID string) ([]Template, error) {
	rows, err := s.repo.Templates(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	out := make([]Template, len(rows))
	for i, r := range rows {
		out[i] = fromStore(r)
	}
	return out, nil
}

func fromStore(t domain.MessageTemplate) Template {
	p := t.Parameters
	if p == nil {
		p = []string{}
	}
	return Template{Name: t.Name, Language: t.Language, Category: t.Category, Status: t.Status, Body: t.Body,
		Parameters: p, CreatedAt: t.CreatedAt}
}

// Sendable reports why t cannot be sent, or nil when it is APPROVED.
func (t Template) Sendable() error {
	if t.Status != Approved {
		return fmt.Errorf("template %s (%s) is %s; only APPROVED templates can be sent", t.Name, t.Language, t.Status)
	}
	return nil
}

// Render fills t's placeholders with params, which must number exactly as
// many as the placeholders. WhatsApp refuses parameter values that are
// empty, contain a newline or tab, or more than four spaces in a row, so
// Render does too. Values are inserted as they are: a value containing
// "{{2}}" is not expanded again.
func Render(t Template, params []string) (string, error) {
	n, err := Placeholders(t.Body)
	if err != nil {
		return "", fmt.Errorf("template %s (%s): %w", t.Name, t.Language, err)
	}
	if len(params) != n {
		return "", fmt.Errorf("template %s (%s) expects %d parameters, %d given", t.Name, t.Language, n, len(params))
	}
	for i, p := range params {
		switch {
		case strings.TrimSpace(p) == "":
			return "", fmt.Errorf("parameter %d is empty", i+1)
		case strings.ContainsAny(p, "\n\r\t"):
			return "", fmt.Errorf("parameter %d contains a newline or tab", i+1)
		case strings.Contains(p, "     "):
			return "", fmt.Errorf("parameter %d contains more than four spaces in a row", i+1)
		case len([]rune(p)) > maxParamText:
			return "", fmt.Errorf("parameter %d is longer than %d characters", i+1, maxParamText)
		}
	}
	return placeholderRe.ReplaceAllStringFunc(t.Body, func(m string) string {
		k, _ := strconv.Atoi(m[2 : len(m)-2])
		return params[k-1]
	}), nil
}
