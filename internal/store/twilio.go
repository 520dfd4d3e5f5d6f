package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

var twilioCredentials = newTable("twilio_credentials",
	textCol("sid", func(c *domain.TwilioCredential) *string { return &c.Sid }),
	enumCol("kind", func(c *domain.TwilioCredential) *domain.TwilioCredentialKind { return &c.Kind }),
	textCol("account_id", func(c *domain.TwilioCredential) *string { return &c.AccountID }),
	enumCol("env", func(c *domain.TwilioCredential) *domain.Environment { return &c.Env }),
	textCol("secret", func(c *domain.TwilioCredential) *string { return &c.Secret }),
	textCol("parent", func(c *domain.TwilioCredential) *string { return &c.Parent }),
	textCol("name", func(c *domain.TwilioCredential) *string { return &c.Name }),
	msCol("created_at", func(c *domain.TwilioCredential) *time.Time { return &c.CreatedAt }),
)

var twilioNumbers = newTable("twilio_numbers",
	textCol("account_id", func(n *domain.TwilioNumber) *string { return &n.AccountID }),
	textCol("phone", func(n *domain.TwilioNumber) *string { return &n.Phone }),
	textCol("sms_url", func(n *domain.TwilioNumber) *string { return &n.SmsURL }),
	textCol("sms_method", func(n *domain.TwilioNumber) *string { return &n.SmsMethod }),
	msCol("updated_at", func(n *domain.TwilioNumber) *time.Time { return &n.UpdatedAt }),
)

// CreateTwilioCredential stores a new account SID or API key. A SID that
// exists already is domain.ErrConflict (SIDs are random: a caller that
// meets one made its own twice).
func (s *Store) CreateTwilioCredential(ctx context.Context, c domain.TwilioCredential) error {
	_, err := s.wexec(ctx, twilioCredentials.insert(s), twilioCredentials.args(&c, nil)...)
	if isUniqueViolation(err) {
		return fmt.Errorf("create twilio credential %s: %w", c.Sid, domain.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("create twilio credential: %w", err)
	}
	return nil
}

// TwilioCredentialBySid finds the credential a request names, with its
// account, in one read: authentication happens on every request.
func (s *Store) TwilioCredentialBySid(ctx context.Context, sid string) (domain.TwilioCredential, domain.Account, error) {
	row := s.rqueryRow(ctx, `SELECT `+prefixed("c.", twilioCredentials.list)+`, `+s.accountList("a")+
		` FROM twilio_credentials c JOIN accounts a ON a.id = c.account_id WHERE c.sid = $1`, sid)
	var c domain.TwilioCredential
	var a domain.Account
	err := row.Scan(accounts.dests(&a, twilioCredentials.dests(&c, nil))...)
	if errors.Is(err, sql.ErrNoRows) {
		return c, a, domain.ErrNotFound
	}
	if err != nil {
		return c, a, fmt.Errorf("scan twilio credential: %w", err)
	}
	return c, a, nil
}

// TwilioCredentials lists an account's account SIDs and API keys, oldest
// first, with their secrets: the fronts decide what to show.
func (s *Store) TwilioCredentials(ctx context.Context, accountID string) ([]domain.TwilioCredential, error) {
	return twilioCredentials.scanAll(s.rquery(ctx, `SELECT `+twilioCredentials.list+
		` FROM twilio_credentials WHERE account_id = $1 ORDER BY created_at, sid`, accountID))
}

// DeleteTwilioCredential removes an account's credential; an account SID
// takes its API keys with it, since they act for it and nothing else.
// Another account's SID is domain.ErrNotFound. A trigger moves the auth
// counter (migration 00149), so cached logins stop at once on every node.
func (s *Store) DeleteTwilioCredential(ctx context.Context, accountID, sid string) error {
	return s.Write(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `DELETE FROM twilio_credentials WHERE sid = $1 AND account_id = $2`, sid, accountID)
		if err := affectedOne(res, err, "delete twilio credential"); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, `DELETE FROM twilio_credentials WHERE parent = $1 AND account_id = $2`, sid, accountID); err != nil {
			return fmt.Errorf("delete the api keys of %s: %w", sid, err)
		}
		return nil
	})
}

// SetTwilioNumber records where replies to one of an account's numbers
// are posted, replacing what was set before.
func (s *Store) SetTwilioNumber(ctx context.Context, n domain.TwilioNumber) error {
	_, err := s.wexec(ctx, twilioNumbers.insert(s)+` ON CONFLICT (account_id, phone) DO UPDATE SET
		sms_url = excluded.sms_url, sms_method = excluded.sms_method, updated_at = excluded.updated_at`,
		twilioNumbers.args(&n, nil)...)
	if err != nil {
		return fmt.Errorf("set twilio number %s: %w", n.Phone, err)
	}
	return nil
}

// TwilioNumbers lists what is set for an account's numbers, by phone.
func (s *Store) TwilioNumbers(ctx context.Context, accountID string) ([]domain.TwilioNumber, error) {
	return twilioNumbers.scanAll(s.rquery(ctx, `SELECT `+twilioNumbers.list+
		` FROM twilio_numbers WHERE account_id = $1 ORDER BY phone`, accountID))
}

// TwilioNumber reads what is set for one of an account's numbers, inside
// the transaction that records a reply to it; ok is false when nothing is.
func (tx *Tx) TwilioNumber(ctx context.Context, accountID, phone string) (domain.TwilioNumber, bool, error) {
	n, err := twilioNumbers.scan(tx.queryRow(ctx, `SELECT `+twilioNumbers.list+
		` FROM twilio_numbers WHERE account_id = $1 AND phone = $2`, accountID, phone))
	if errors.Is(err, domain.ErrNotFound) {
		return n, false, nil
	}
	if err != nil {
		return n, false, fmt.Errorf("twilio number %s: %w", phone, err)
	}
	return n, true, nil
}

// TwilioAccountSid reads the account SID a reply's callback is signed
// with: the oldest of the account's AC… of that environment; ok is false
// when it has none.
func (tx *Tx) TwilioAccountSid(ctx context.Context, accountID string, env domain.Environment) (domain.TwilioCredential, bool, error) {
	c, err := twilioCredentials.scan(tx.queryRow(ctx, `SELECT `+twilioCredentials.list+
		` FROM twilio_credentials WHERE account_id = $1 AND env = $2 AND kind = $3 ORDER BY created_at, sid LIMIT 1`,
		accountID, string(env), string(domain.TwilioAccountSid)))
	if errors.Is(err, domain.ErrNotFound) {
		return c, false, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("twilio account sid of %s: %w", accountID, err)
	}
	return c, true, nil
}
