// Package sending is the panel's sending (docs/panel.md): the send form and
// campaigns from a file go through the same core as the integration API
// (intake), as the panel user's own principal; progress and cancel are the
// integration API's campaign read and cancel (message), scoped to the
// account. Sending needs the developer role, as sending with a key does;
// reading a campaign any role of the account. Roles are checked by manage,
// as for every panel action.
package sending

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/campaign"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/user"
)

// Service runs the panel's sends.
type Service struct {
	manage    *manage.Service
	sends     SendDesk
	campaigns CampaignDesk
}

// New makes a Service.
func New(m *manage.Service, sends SendDesk, campaigns CampaignDesk) *Service {
	return &Service{manage: m, sends: sends, campaigns: campaigns}
}

// SendDesk is the send core the panel's sends go through.
type SendDesk interface {
	Send(ctx context.Context, p domain.Principal, req domain.SendRequest, opt intake.SendOptions) (intake.Outcome, error)
	SendFile(ctx context.Context, p domain.Principal, f intake.FileSend, opt intake.FileOptions) (intake.FileOutcome, error)
}

// CampaignDesk reads and cancels campaigns.
type CampaignDesk interface {
	Campaign(ctx context.Context, sc message.Scope, campaignID, cursor string, limit int) (message.CampaignPage, error)
	CancelCampaign(ctx context.Context, sc message.Scope, campaignID string) ([]domain.Message, error)
}

// NewMessage is the panel's send form.
type NewMessage struct {
	To          string // one number, or a few separated by commas, spaces or new lines
	Type        string // SMS (default), WHATSAPP or RCS
	From        string
	Text        string
	Environment string // live (default) or test
	ScheduledAt string // RFC 3339, or the panel's datetime-local in UTC; "" for now
	// IdempotencyKey, when set, makes a form sent twice send once.
	IdempotencyKey string
}

// principal is a panel user acting in an account's environment.
func principal(a manage.Actor, acct domain.Account, env domain.Environment) domain.Principal {
	return domain.Principal{Account: acct, Kind: domain.CredentialPanel, CredentialID: panelCredential(a), Env: env}
}

// panelCredential names the panel user as a credential: their user id, or
// "console" for the command line.
func panelCredential(a manage.Actor) string {
	if a.UserID == "" {
		return "console"
	}
	return a.UserID
}

// sendEnv reads an environment field: live unless it says test.
func sendEnv(v string) (domain.Environment, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "live":
		return domain.Live, nil
	case "test":
		return domain.Test, nil
	}
	return "", invalid("environment", "must be live or test")
}

// sendTime reads a schedule: RFC 3339, or a datetime-local field's value
// (taken as UTC, which the form says).
func sendTime(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, invalid("scheduledAt", "must be a time such as 2026-12-01T09:00:00Z")
}

// sendChannel reads a channel; "" is SMS.
func sendChannel(v string) domain.Channel {
	v = strings.ToUpper(strings.TrimSpace(v))
	if v == "" {
		return domain.SMS
	}
	return domain.Channel(v)
}

// panelNames are the form's names for the core's paths.
var panelNames = map[string]string{"channel": "type", "sender": "from", "schedule": "scheduledAt", "callback": "callbackUrl",
	"recipients": "to"}

// formFields names a send's refused fields as the forms do.
func formFields(err error) error {
	v, ok := domain.IsValidation(err)
	if !ok {
		return err
	}
	out := &domain.ValidationError{Detail: v.Detail, Fields: make([]domain.FieldError, len(v.Fields))}
	for i, f := range v.Fields {
		out.Fields[i] = f
		if f.Field != "" {
			continue
		}
		name := f.Path
		if n, ok := panelNames[name]; ok {
			name = n
		} else if strings.HasPrefix(name, "recipients[") {
			name = "to"
		} else if strings.HasPrefix(name, "content.") {
			name = strings.TrimPrefix(name, "content.")
		}
		out.Fields[i].Field = name
	}
	return out
}

// splitNumbers reads the form's recipients: separated by commas,
// semicolons, spaces or new lines.
func splitNumbers(v string) []string {
	out := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
	if out == nil {
		out = []string{}
	}
	return out
}

// SendMessage sends the panel's form: one message, or one to each of a
// few numbers (one campaign).
func (s *Service) SendMessage(ctx context.Context, a manage.Actor, accountID string, in NewMessage) (intake.Outcome, error) {
	acct, err := s.manage.Acting(ctx, a, accountID, user.Developer)
	if err != nil {
		return intake.Outcome{}, err
	}
	var p fieldProblems
	env, at := p.envAndTime(in.Environment, in.ScheduledAt)
	if err := p.err("the message was not sent"); err != nil {
		return intake.Outcome{}, err
	}
	numbers := splitNumbers(in.To)
	req := domain.SendRequest{Channel: sendChannel(in.Type), Recipients: numbers, Single: len(numbers) == 1, Text: in.Text,
		Sender: strings.TrimSpace(in.From), Schedule: at, Origin: domain.Origin{Front: domain.FrontPanel}}
	opt := intake.SendOptions{}
	if in.IdempotencyKey != "" {
		opt.Idempotency = &intake.IdempotencyKey{Key: in.IdempotencyKey, RequestHash: formHash(in, acct.ID),
			Response: func(rc intake.Receipt) (int, []byte, error) { return http202, []byte(rc.Campaign.ID), nil }}
	}
	out, err := s.sends.Send(ctx, principal(a, acct, env), req, opt)
	if err != nil {
		return out, formFields(err)
	}
	return out, nil
}

func formHash(in NewMessage, account string) string {
	return hashOf(account, in.To, in.Type, in.From, in.Text, in.Environment, in.ScheduledAt)
}

// NewFileCampaign is a campaign from a file: the spooled file and the
// fields that come with it.
type NewFileCampaign struct {
	File        *campaign.Spool
	Text        string
	Type        string
	From        string
	Environment string
	ScheduledAt string
	DryRun      bool
	// IdempotencyKey, when set, makes the upload answerable again: the
	// same key with the same file and fields sends nothing twice.
	IdempotencyKey string
}

// fileRows fills the template into a spool's rows for the core.
type fileRows struct {
	spool *campaign.Spool
	text  campaign.Template
}

func (f fileRows) Each(ctx context.Context, n int, fn func([]intake.FileRow) error) error {
	out := make([]intake.FileRow, 0, n)
	return f.spool.Each(ctx, n, func(c campaign.Chunk) error {
		out = out[:0]
		for _, r := range c {
			out = append(out, intake.FileRow{Line: r.Line, To: r.To, Text: f.text.Fill(r.Row), Problem: r.Problem})
		}
		return fn(out)
	})
}

// SendFileCampaign sends (or, dry, prices) a campaign from a file.
func (s *Service) SendFileCampaign(ctx context.Context, a manage.Actor, accountID string, in NewFileCampaign) (intake.FileOutcome, error) {
	acct, err := s.manage.Acting(ctx, a, accountID, user.Developer)
	if err != nil {
		return intake.FileOutcome{}, err
	}
	var p fieldProblems
	env, at := p.envAndTime(in.Environment, in.ScheduledAt)
	if in.File == nil {
		p.add("file", "is required: a CSV file whose header names a \"to\" column")
	} else if in.File.Rows() == 0 {
		p.add("file", "has no recipients: add a row per recipient under the header")
	}
	if strings.TrimSpace(in.Text) == "" {
		p.add("text", "is required, e.g. Hi {{name}}")
	}
	if err := p.err("the campaign was not sent"); err != nil {
		return intake.FileOutcome{}, err
	}
	tmpl, err := campaign.ParseTemplate(in.Text, in.File.Variables())
	if err != nil {
		return intake.FileOutcome{}, err
	}
	f := intake.FileSend{Base: domain.SendRequest{Channel: sendChannel(in.Type), Sender: strings.TrimSpace(in.From), Schedule: at,
		Origin: domain.Origin{Front: domain.FrontPanel}}, Rows: fileRows{spool: in.File, text: tmpl}}
	opt := intake.FileOptions{DryRun: in.DryRun}
	if in.IdempotencyKey != "" && !in.DryRun {
		opt.Idempotency = &intake.FileIdempotency{Key: in.IdempotencyKey,
			RequestHash: hashOf(acct.ID, string(in.File.Sum()), in.Text, in.Type, in.From, in.Environment, in.ScheduledAt),
			Response:    func(rc intake.FileReceipt) (int, []byte, error) { return CampaignReceiptJSON(rc) }}
	}
	out, err := s.sends.SendFile(ctx, principal(a, acct, env), f, opt)
	if err != nil {
		return out, formFields(err)
	}
	return out, nil
}

// CampaignView is a campaign of the account with its counts and a page of
// its messages (message.CampaignPage), and the environment it was sent in.
type CampaignView = message.CampaignPage

// Campaign reads one of the account's campaigns, in either environment.
func (s *Service) Campaign(ctx context.Context, a manage.Actor, accountID, campaignID, cursor string, limit int) (CampaignView, error) {
	acct, err := s.manage.Acting(ctx, a, accountID, user.Viewer)
	if err != nil {
		return CampaignView{}, err
	}
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	var page CampaignView
	for _, env := range []domain.Environment{domain.Live, domain.Test} {
		page, err = s.campaigns.Campaign(ctx, message.Scope{AccountID: acct.ID, Env: env}, campaignID, cursor, limit)
		if !errors.Is(err, domain.ErrNotFound) {
			break
		}
	}
	return page, err
}

// CancelCampaign cancels every message of the campaign that has not been
// handed to a provider yet; they are refunded.
func (s *Service) CancelCampaign(ctx context.Context, a manage.Actor, accountID, campaignID string) ([]domain.Message, error) {
	acct, err := s.manage.Acting(ctx, a, accountID, user.Developer)
	if err != nil {
		return nil, err
	}
	var out []domain.Message
	for _, env := range []domain.Environment{domain.Live, domain.Test} {
		out, err = s.campaigns.CancelCampaign(ctx, message.Scope{AccountID: acct.ID, Env: env}, campaignID)
		if !errors.Is(err, domain.ErrNotFound) {
			break
		}
	}
	return out, err
}

// hashOf names a request's fields for idempotency.
func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CampaignReceipt is the answer to a campaign from a file, the same from
// the API and when an upload is answered again under its key.
type CampaignReceipt struct {
	CampaignID    *string           `json:"campaignId"`
	DryRun        bool              `json:"dryRun"`
	Recipients    int               `json:"recipients"`
	Credits       float64           `json:"credits"`
	Balance       *float64          `json:"balance,omitempty"`
	Rejected      []RejectedRowView `json:"rejected"`
	RejectedCount int               `json:"rejectedCount"`
}

// RejectedRowView is a row left out, by its line in the file.
type RejectedRowView struct {
	Line   int    `json:"line"`
	Code   string `json:"code"`
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// ReceiptOf is a receipt as the API shows it.
func ReceiptOf(rc intake.FileReceipt) CampaignReceipt {
	out := CampaignReceipt{DryRun: rc.DryRun, Recipients: rc.Recipients, Credits: ledger.Credits(rc.Credits),
		Rejected: make([]RejectedRowView, 0, len(rc.Rejected)), RejectedCount: rc.RejectedCount}
	if rc.Campaign.ID != "" {
		id := rc.Campaign.ID
		out.CampaignID = &id
	}
	if rc.DryRun {
		b := ledger.Credits(rc.Balance)
		out.Balance = &b
	}
	for _, r := range rc.Rejected {
		out.Rejected = append(out.Rejected, RejectedRowView{Line: r.Line, Code: r.Code, Field: r.Field, Detail: r.Detail})
	}
	return out
}

// CampaignReceiptJSON renders a sent campaign's answer (202).
func CampaignReceiptJSON(rc intake.FileReceipt) (int, []byte, error) {
	b, err := json.Marshal(ReceiptOf(rc))
	return http202, b, err
}

// http202 is Accepted; the package never sees HTTP but remembers the
// status its answer is replayed with.
const http202 = 202

// fieldProblems collects field errors; err is nil when there are none.
type fieldProblems struct{ fields []domain.FieldError }

// envAndTime reads the environment and schedule every panel send takes,
// noting what is wrong with either.
func (p *fieldProblems) envAndTime(environment, scheduledAt string) (domain.Environment, time.Time) {
	env, err := sendEnv(environment)
	if err != nil {
		p.add("environment", "must be live or test")
	}
	at, err := sendTime(scheduledAt)
	if err != nil {
		p.add("scheduledAt", "must be a time such as 2026-12-01T09:00:00Z")
	}
	return env, at
}

func (p *fieldProblems) add(field, msg string) {
	p.fields = append(p.fields, domain.FieldError{Field: field, Message: msg})
}

func (p *fieldProblems) err(detail string) error {
	if len(p.fields) == 0 {
		return nil
	}
	return &domain.ValidationError{Detail: detail, Fields: p.fields}
}

func invalid(field, msg string) *domain.ValidationError {
	return &domain.ValidationError{Detail: field + " " + msg, Fields: []domain.FieldError{{Field: field, Message: msg}}}
}
