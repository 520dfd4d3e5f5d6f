package store

import (
	"context"
	"errors"
	"github.com/msgsvc/msgsvc/internal/domain"
)

var limitRequests = newTable("limit_requests", func(r *domain.LimitRequest, c cols) cols {
	return c.add(textCol("id", &r.ID), textCol("account_id", &r.AccountID), textCol("requested_by", &r.RequestedBy),
		textCol("status", &r.Status), int64Col("monthly_volume", &r.MonthlyVolume), textCol("use_case", &r.UseCase),
		textCol("justification", &r.Justification), textCol("tier", &r.Tier), intCol("tier_rpm", &r.Limits.TierRPM),
		intCol("send_rpm", &r.Limits.SendRPM), intCol("status_rpm", &r.Limits.StatusRPM),
		intCol("media_rpm", &r.Limits.MediaRPM), textCol("reason", &r.Reason), textCol("decided_by", &r.DecidedBy),
		timeCol("created_at", &r.CreatedAt), timeCol("decided_at", &r.DecidedAt))
})

// CreateLimitRequest stores a new request.
func (s *Store) CreateLimitRequest(ctx context.Context, r domain.LimitRequest) error {
	return s.run(ctx, "create limit request", limitRequests.insert(s), limitRequests.args(&r, nil)...)
}

// LimitRequest reads one request.
func (s *Store) LimitRequest(ctx context.Context, id string) (domain.LimitRequest, error) {
	return limitRequests.scan(s.rqueryRow(ctx, `SELECT `+limitRequests.list+` FROM limit_requests WHERE id = $1`, id))
}

// LimitRequests lists an account's requests, newest first.
func (s *Store) LimitRequests(ctx context.Context, accountID string) ([]domain.LimitRequest, error) {
	return limitRequests.scanAll(s.rquery(ctx, `SELECT `+limitRequests.list+` FROM limit_requests WHERE account_id = $1
		ORDER BY created_at DESC, id DESC`, accountID))
}

// PendingLimitRequests lists every account's undecided requests, oldest
// first: the operators' queue.
func (s *Store) PendingLimitRequests(ctx context.Context) ([]domain.LimitRequest, error) {
	return limitRequests.scanAll(s.rquery(ctx, `SELECT `+limitRequests.list+` FROM limit_requests
		WHERE status = 'PENDING' ORDER BY created_at, id`))
}

// DecideLimitRequest records an operator's decision on a pending request
// (d.Status APPROVED or REJECTED, with d.Tier, d.Limits or d.Reason, d.DecidedBy
// and d.DecidedAt) and, for an approval, gives the account the granted tier
// and limits in the same transaction: they apply from the account's next
// request. A request already decided is ErrDecided and changes nothing.
func (s *Store) DecideLimitRequest(ctx context.Context, d domain.LimitRequest) (domain.LimitRequest, error) {
	var out domain.LimitRequest
	err := s.Write(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `UPDATE limit_requests SET status = $2, tier = $3, tier_rpm = $4, send_rpm = $5,
			status_rpm = $6, media_rpm = $7, reason = $8, decided_by = $9, decided_at = $10
			WHERE id = $1 AND status = 'PENDING'`, d.ID, d.Status, d.Tier, d.Limits.TierRPM, d.Limits.SendRPM,
			d.Limits.StatusRPM, d.Limits.MediaRPM, d.Reason, d.DecidedBy, ms(d.DecidedAt))
		if err := affectedOne(res, err, "decide limit request"); err != nil {
			if !errors.Is(err, domain.ErrNotFound) {
				return err
			}
			if _, rerr := limitRequests.scan(tx.queryRow(ctx, `SELECT `+limitRequests.list+` FROM limit_requests WHERE id = $1`,
				d.ID)); rerr == nil {
				return domain.ErrDecided
			}
			return err
		}
		if out, err = limitRequests.scan(tx.queryRow(ctx, `SELECT `+limitRequests.list+` FROM limit_requests WHERE id = $1`,
			d.ID)); err != nil {
			return err
		}
		if d.Status != domain.LimitApproved {
			return nil
		}
		return tx.setTierLimits(ctx, out.AccountID, d.Tier, d.Limits)
	})
	return out, err
}

// setTierLimits gives an account a tier and its rate limits.
func (tx *Tx) setTierLimits(ctx context.Context, accountID, tier string, l domain.Limits) error {
	res, err := tx.exec(ctx, `UPDATE accounts SET tier = $2, tier_rpm = $3, send_rpm = $4, status_rpm = $5, media_rpm = $6
		WHERE id = $1`, accountID, tier, l.TierRPM, l.SendRPM, l.StatusRPM, l.MediaRPM)
	return affectedOne(res, err, "set tier and limits")
}
