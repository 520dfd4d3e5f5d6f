package tracking

import (
	"context"
	"log/slog"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// SweepStore is what the Sweeper needs from storage.
type SweepStore interface {
	ExpiredMessageIDs(ctx context.Context, now time.Time, limit int) ([]string, error)
	DeleteIdempotencyBefore(ctx context.Context, t time.Time) (int64, error)
	DeletePendingReportsBefore(ctx context.Context, t time.Time) (int64, error)
	DeleteEventsBefore(ctx context.Context, t time.Time, limit int) (int, error)
	FoldUsage(ctx context.Context, beforeDay int64) (int64, error)
	UnmarkedLowBalances(ctx context.Context, limit int) ([]domain.Account, error)
	// HeldBefore lists messages the fraud guard held since before t;
	// SweepFraudCounts deletes its counts of hours before hour.
	HeldBefore(ctx context.Context, t time.Time, limit int) ([]string, error)
	SweepFraudCounts(ctx context.Context, hour int64) (int64, error)
}

// alertCheck is how often the sweeper looks for low balances no debit
// announced.
const alertCheck = 30 * time.Second

// EventRetention is how long events are kept for the events feed and the
// panel (the contract asks for at least 30 days).
const EventRetention = 30 * 24 * time.Hour

// PendingReportRetention is how long a report for a provider id that no
// message carries is kept, waiting for the answer to its submission.
const PendingReportRetention = 72 * time.Hour

// IdempotencyRetention is how long idempotency keys are remembered (the
// contract asks for at least 72 hours).
const IdempotencyRetention = 96 * time.Hour

// Sweeper ends messages whose validity ran out, applies reports left
// parked for ids that are now known, and forgets old idempotency keys and
// events. Running it on every node is safe: expiry goes through
// the Tracker, which never moves a message twice.
type Sweeper struct {
	Store    SweepStore
	Tracker  *Tracker
	Now      func() time.Time
	Interval time.Duration
	Log      *slog.Logger
}

// Run sweeps until ctx ends.
func (s *Sweeper) Run(ctx context.Context) {
	interval := s.Interval
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	lastCleanup, lastAlerts := time.Time{}, time.Time{}
	for {
		if err := s.Expire(ctx); err != nil && ctx.Err() == nil {
			s.Log.Error("expire messages", "err", err)
		}
		if err := s.RejectHolds(ctx); err != nil && ctx.Err() == nil {
			s.Log.Error("reject expired fraud holds", "err", err)
		}
		if n, err := s.Tracker.Unpark(ctx); err != nil && ctx.Err() == nil {
			s.Log.Error("apply parked reports", "err", err)
		} else if n > 0 {
			s.Log.Info("applied reports parked while their submission's answer was being recorded", "reports", n)
		}
		if now := s.Now(); now.Sub(lastAlerts) >= alertCheck {
			lastAlerts = now
			if err := s.announceLowBalances(ctx); err != nil && ctx.Err() == nil {
				s.Log.Error("announce low balances", "err", err)
			}
		}
		if now := s.Now(); now.Sub(lastCleanup) > time.Hour {
			lastCleanup = now
			if _, err := s.Store.DeleteIdempotencyBefore(ctx, now.Add(-IdempotencyRetention)); err != nil && ctx.Err() == nil {
				s.Log.Error("clean idempotency keys", "err", err)
			}
			if _, err := s.Store.DeletePendingReportsBefore(ctx, now.Add(-PendingReportRetention)); err != nil && ctx.Err() == nil {
				s.Log.Error("clean pending reports", "err", err)
			}
			if err := s.DeleteOldEvents(ctx); err != nil && ctx.Err() == nil {
				s.Log.Error("clean old events", "err", err)
			}
			// Days before yesterday change only by late reports and
			// refunds: their writers' usage rows become one per key.
			if _, err := s.Store.FoldUsage(ctx, domain.DayNumber(now)-1); err != nil && ctx.Err() == nil {
				s.Log.Error("fold usage rows", "err", err)
			}
			// The fraud guard's baselines look back a day; older hours are
			// no use.
			if _, err := s.Store.SweepFraudCounts(ctx, now.Unix()/3600-fraudCountHours); err != nil && ctx.Err() == nil {
				s.Log.Error("clean fraud counts", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Expire fails every message whose validity has ended.
func (s *Sweeper) Expire(ctx context.Context) error {
	for {
		now := s.Now().UTC()
		ids, err := s.Store.ExpiredMessageIDs(ctx, now, 500)
		if err != nil || len(ids) == 0 {
			return err
		}
		reports := make([]Report, len(ids))
		for i, mid := range ids {
			reports[i] = Report{Kind: Expire, MessageID: mid, At: now}
		}
		if err := s.Tracker.Apply(ctx, reports); err != nil {
			return err
		}
		if len(ids) < 500 {
			return nil
		}
	}
}

// fraudCountHours is how many hours of the fraud guard's counts are kept:
// its baseline's day and the current hour, with room.
const fraudCountHours = 26

// RejectHolds rejects every message the fraud guard held for longer than
// domain.HoldFor (FAILED with FRAUD_SUSPECTED, refunded).
func (s *Sweeper) RejectHolds(ctx context.Context) error {
	for {
		now := s.Now().UTC()
		ids, err := s.Store.HeldBefore(ctx, now.Add(-domain.HoldFor), 500)
		if err != nil || len(ids) == 0 {
			return err
		}
		if err := s.Tracker.RejectExpiredHolds(ctx, ids, now); err != nil {
			return err
		}
		if len(ids) < 500 {
			return nil
		}
	}
}

// DeleteOldEvents deletes the events older than EventRetention that need
// no more delivery, in small transactions so that sends never wait long
// behind it.
func (s *Sweeper) DeleteOldEvents(ctx context.Context) error {
	before := s.Now().UTC().Add(-EventRetention)
	for ctx.Err() == nil {
		n, err := s.Store.DeleteEventsBefore(ctx, before, 500)
		if err != nil || n < 500 {
			return err
		}
	}
	return ctx.Err()
}

// announceLowBalances posts the balance.low no debit posted: for an
// account already below a threshold just set, or (PostgreSQL) after two
// writers' debits that crossed it together each saw the other's share as
// it was before.
func (s *Sweeper) announceLowBalances(ctx context.Context) error {
	accts, err := s.Store.UnmarkedLowBalances(ctx, 100)
	if err != nil || len(accts) == 0 {
		return err
	}
	n, err := s.Tracker.AnnounceLowBalances(ctx, accts)
	if n > 0 {
		s.Log.Info("announced low balances no debit had announced", "accounts", n)
	}
	return err
}
