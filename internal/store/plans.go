package store

import (
	"context"
	"fmt"

	"github.com/msgsvc/msgsvc/internal/domain"
)

var pricePlans = newTable("price_plans", func(p *domain.PricePlan, c cols) cols {
	return c.add(textCol("id", &p.ID), textCol("name", &p.Name), textCol("prices", &p.Prices),
		boolCol("is_default", &p.Default), timeCol("created_at", &p.CreatedAt), timeCol("updated_at", &p.UpdatedAt))
})

// plansQuery lists plans with how many accounts are on each.
const plansQuery = `SELECT p.id, p.name, p.prices, p.is_default, p.created_at, p.updated_at,
	(SELECT COUNT(*) FROM accounts a WHERE a.price_plan_id = p.id) FROM price_plans p`

// planDests are where a row of plansQuery goes.
func planDests(p *domain.PricePlan) []any {
	return append(pricePlans.dests(p, make([]any, 0, 7)), &p.Accounts)
}

// PricePlans lists the plans, by name.
func (s *Store) PricePlans(ctx context.Context) ([]domain.PricePlan, error) {
	rows, err := s.rquery(ctx, plansQuery+` ORDER BY p.name, p.id`)
	if err != nil {
		return nil, fmt.Errorf("price plans: %w", err)
	}
	defer rows.Close()
	var out []domain.PricePlan
	for rows.Next() {
		var p domain.PricePlan
		if err := rows.Scan(planDests(&p)...); err != nil {
			return nil, fmt.Errorf("scan price plan: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// PricePlan reads one plan.
func (s *Store) PricePlan(ctx context.Context, id string) (domain.PricePlan, error) {
	var p domain.PricePlan
	err := s.rqueryRow(ctx, plansQuery+` WHERE p.id = $1`, id).Scan(planDests(&p)...)
	if isNoRows(err) {
		return p, domain.ErrNotFound
	}
	if err != nil {
		return p, fmt.Errorf("price plan %s: %w", id, err)
	}
	return p, nil
}

// DefaultPricePlan reads the default plan; domain.ErrNotFound when none
// is.
func (s *Store) DefaultPricePlan(ctx context.Context) (domain.PricePlan, error) {
	var p domain.PricePlan
	err := s.rqueryRow(ctx, plansQuery+` WHERE p.is_default = 1`).Scan(planDests(&p)...)
	if isNoRows(err) {
		return p, domain.ErrNotFound
	}
	if err != nil {
		return p, fmt.Errorf("default price plan: %w", err)
	}
	return p, nil
}

// CreatePricePlan inserts a plan; a name taken is domain.ErrConflict. A
// default plan takes the place of the previous default.
func (s *Store) CreatePricePlan(ctx context.Context, p domain.PricePlan) error {
	return s.Write(ctx, func(tx *Tx) error {
		if p.Default {
			if _, err := tx.exec(ctx, `UPDATE price_plans SET is_default = 0 WHERE is_default = 1`); err != nil {
				return fmt.Errorf("clear default plan: %w", err)
			}
		}
		_, err := tx.exec(ctx, pricePlans.insert(s), pricePlans.args(&p, nil)...)
		return inserted(err, "create price plan")
	})
}

// UpdatePricePlan replaces a plan's name, table and default flag and, in
// the same transaction, the copy of its table on every account on it: each
// of them pays the new prices from its next send, on every node (the
// update moves the auth counter). Unknown is domain.ErrNotFound; a name
// taken, domain.ErrConflict.
func (s *Store) UpdatePricePlan(ctx context.Context, p domain.PricePlan) error {
	return s.Write(ctx, func(tx *Tx) error {
		if p.Default {
			if _, err := tx.exec(ctx, `UPDATE price_plans SET is_default = 0 WHERE is_default = 1 AND id <> $1`, p.ID); err != nil {
				return fmt.Errorf("clear default plan: %w", err)
			}
		}
		res, err := tx.exec(ctx, `UPDATE price_plans SET name = $2, prices = $3, is_default = $4, updated_at = $5 WHERE id = $1`,
			p.ID, p.Name, p.Prices, boolInt(p.Default), ms(p.UpdatedAt))
		if err != nil {
			return inserted(err, "update price plan")
		}
		if err := affectedOne(res, nil, "update price plan"); err != nil {
			return err
		}
		// Only rows whose copy differs are written, so that saving a plan
		// unchanged leaves its accounts (and the counter) alone.
		if _, err := tx.exec(ctx, `UPDATE accounts SET plan_prices = $2 WHERE price_plan_id = $1 AND plan_prices <> $2`,
			p.ID, p.Prices); err != nil {
			return fmt.Errorf("reprice the plan's accounts: %w", err)
		}
		return nil
	})
}

// SetAccountPlan puts an account on a plan ("" takes it off any: it pays
// the defaults under its own overrides). Unknown account or plan is
// domain.ErrNotFound.
func (s *Store) SetAccountPlan(ctx context.Context, accountID, planID string) error {
	return s.Write(ctx, func(tx *Tx) error {
		plan := domain.PricePlan{}
		if planID != "" {
			var err error
			if plan, err = tx.lockPlan(ctx, planID); err != nil {
				return err
			}
		}
		res, err := tx.exec(ctx, `UPDATE accounts SET price_plan_id = $2, plan_prices = $3 WHERE id = $1`, accountID, plan.ID, plan.Prices)
		return affectedOne(res, err, "set price plan")
	})
}

// lockPlan reads the plan an account is being put on (id, or the default
// plan when id is ""; none is the zero plan), holding it on PostgreSQL
// until the transaction ends: a concurrent change of the plan then either
// commits first, and is the table read here, or waits, and finds this
// account on the plan when it copies its new table to the plan's accounts.
func (tx *Tx) lockPlan(ctx context.Context, id string) (domain.PricePlan, error) {
	where := `id = $1`
	args := []any{id}
	if id == "" {
		where, args = `is_default = 1`, nil
	}
	lock := ""
	if tx.pg != nil {
		lock = ` FOR SHARE`
	}
	var p domain.PricePlan
	err := tx.queryRow(ctx, `SELECT id, prices FROM price_plans WHERE `+where+lock, args...).Scan(&p.ID, &p.Prices)
	switch {
	case isNoRows(err) && id == "":
		return domain.PricePlan{}, nil
	case isNoRows(err):
		return p, fmt.Errorf("price plan %s: %w", id, domain.ErrNotFound)
	case err != nil:
		return p, fmt.Errorf("read price plan: %w", err)
	}
	return p, nil
}
