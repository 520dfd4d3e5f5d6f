package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

var smppUsers = newTable("smpp_users", func(u *domain.SMPPUser, c cols) cols {
	return c.add(textCol("id", &u.ID), textCol("account_id", &u.AccountID), enumCol("env", &u.Env),
		textCol("system_id", &u.SystemID), textCol("password_hash", &u.PasswordHash), intCol("max_binds", &u.MaxBinds),
		timeCol("created_at", &u.CreatedAt))
})

var smppItems = newTable("smpp_items", func(it *domain.SMPPItem, c cols) cols {
	return c.add(textCol("id", &it.ID), textCol("user_id", &it.UserID), textCol("account_id", &it.AccountID),
		enumCol("env", &it.Env), textCol("message_id", &it.MessageID), textCol("source", &it.Source),
		textCol("dest", &it.Dest), intCol("esm_class", &it.ESMClass), textCol("text", &it.Text),
		intCol("state", &it.State), timeCol("created_at", &it.CreatedAt), timeCol("expires_at", &it.ExpiresAt),
		timeCol("next_attempt_at", &it.NextAttemptAt), textCol("lease_owner", &it.LeaseOwner))
})

// CreateSMPPUser stores a new SMPP user; a system_id another user has,
// compared case-insensitively (so that no two users look alike in a list
// or a log), is domain.ErrSystemIDTaken.
func (s *Store) CreateSMPPUser(ctx context.Context, u domain.SMPPUser) error {
	err := s.Write(ctx, func(tx *Tx) error {
		if s.dialect == Postgres {
			// Two creations of twins at once take turns here.
			if _, err := tx.exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('smpp_users:' || lower($1)))`, u.SystemID); err != nil {
				return fmt.Errorf("lock system_id: %w", err)
			}
		}
		var n int
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM smpp_users WHERE lower(system_id) = lower($1)`,
			u.SystemID).Scan(&n); err != nil {
			return fmt.Errorf("look for the system_id: %w", err)
		}
		if n > 0 {
			return domain.ErrSystemIDTaken
		}
		_, err := tx.exec(ctx, smppUsers.insert(s), smppUsers.args(&u, nil)...)
		return err
	})
	if errors.Is(err, domain.ErrSystemIDTaken) || isUniqueViolation(err) {
		return domain.ErrSystemIDTaken
	}
	if err != nil {
		return fmt.Errorf("create smpp user: %w", err)
	}
	return nil
}

// SMPPUsers lists an account's SMPP users, oldest first.
func (s *Store) SMPPUsers(ctx context.Context, accountID string) ([]domain.SMPPUser, error) {
	return smppUsers.scanAll(s.rquery(ctx, `SELECT `+smppUsers.list+` FROM smpp_users WHERE account_id = $1 ORDER BY id`,
		accountID))
}

// SMPPUserBySystemID finds the user a bind names, with its account.
func (s *Store) SMPPUserBySystemID(ctx context.Context, systemID string) (domain.SMPPUser, domain.Account, error) {
	row := s.rqueryRow(ctx, `SELECT `+prefixed("u.", smppUsers.list)+`, `+s.accountList("a")+
		` FROM smpp_users u JOIN accounts a ON a.id = u.account_id WHERE u.system_id = $1`, systemID)
	var u domain.SMPPUser
	var a domain.Account
	err := row.Scan(accounts.dests(&a, smppUsers.dests(&u, nil))...)
	if errors.Is(err, sql.ErrNoRows) {
		return u, a, domain.ErrNotFound
	}
	if err != nil {
		return u, a, fmt.Errorf("scan smpp user: %w", err)
	}
	return u, a, nil
}

// RemoveSMPPUser deletes an account's SMPP user and what waits for it;
// another account's user is ErrNotFound.
func (s *Store) RemoveSMPPUser(ctx context.Context, accountID, userID string) error {
	return s.Write(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `DELETE FROM smpp_users WHERE id = $1 AND account_id = $2`, userID, accountID)
		if err := affectedOne(res, err, "remove smpp user"); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, `DELETE FROM smpp_items WHERE user_id = $1`, userID); err != nil {
			return fmt.Errorf("remove smpp items: %w", err)
		}
		return nil
	})
}

// SMPPUsersPresent returns which of ids still exist.
func (s *Store) SMPPUsersPresent(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := inChunks(ids, func(chunk []any) error {
		var id string
		err := rowsOf(s.rquery(ctx, `SELECT id FROM smpp_users WHERE id IN (`+s.placeholders(1, len(chunk))+`)`, chunk...)).scan(
			[]any{&id}, func() { out[id] = true })
		if err != nil {
			return fmt.Errorf("smpp users present: %w", err)
		}
		return nil
	})
	return out, err
}

// InsertSMPPItems queues deliver_sm rows, in the caller's transaction.
func (tx *Tx) InsertSMPPItems(ctx context.Context, items []domain.SMPPItem) error {
	return insertRows(ctx, tx, smppItems, items, 256, "", true, "smpp items")
}

// ClaimSMPPItems leases due, unexpired rows, oldest first within each
// queue, at most limit in all: up to users[id] rows of each SMPP user, and
// up to accounts[key] rows of no user (replies any receiving bind of the
// account may take) of each account, keyed "accountID:env". Each queue is
// claimed on its own, so that one user's backlog never takes the claim of
// the others: a user's quota is what its binds' windows have room for.
func (s *Store) ClaimSMPPItems(ctx context.Context, users, accounts map[string]int, owner string, now time.Time,
	lease time.Duration, limit int) ([]domain.SMPPItem, error) {
	if len(users) == 0 {
		return nil, nil
	}
	lock := ""
	if s.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	// The quota differs from one claim to the next: bound at run time
	// (runLimit), lest each claim compile the statement again.
	const claim = `UPDATE smpp_items SET lease_owner = $1, next_attempt_at = $2
		WHERE id IN (SELECT id FROM smpp_items WHERE next_attempt_at <= $3 AND expires_at > $3 AND %s
		ORDER BY created_at, id LIMIT %s%s) RETURNING `
	byUser := fmt.Sprintf(claim, `user_id = $5`, runLimit(4), lock) + smppItems.list
	byAccount := fmt.Sprintf(claim, `user_id = '' AND account_id = $5 AND env = $6`, runLimit(4), lock) + smppItems.list
	var out []domain.SMPPItem
	err := s.Write(ctx, func(tx *Tx) error {
		out = out[:0]
		take := func(query string, quota int, args ...any) error {
			n := min(quota, limit-len(out))
			if n <= 0 {
				return nil
			}
			got, err := smppItems.scanAll(tx.query(ctx, query, append([]any{owner, ms(now.Add(lease)), ms(now), n}, args...)...))
			out = append(out, got...)
			return err
		}
		for u, quota := range users {
			if err := take(byUser, quota, u); err != nil {
				return err
			}
		}
		for key, quota := range accounts {
			acct, env, ok := strings.Cut(key, ":")
			if !ok {
				continue
			}
			if err := take(byAccount, quota, acct, env); err != nil {
				return err
			}
		}
		return nil
	})
	sortItems(out)
	return out, err
}

// ReleaseSMPPItems makes an owner's leased rows due again at now.
func (s *Store) ReleaseSMPPItems(ctx context.Context, owner string, ids []string, now time.Time) error {
	return s.releaseLeases(ctx, "smpp_items", "1 = 1", owner, ids, now)
}

// AckSMPPItems deletes rows binds acknowledged: they are never sent again.
// It joins the group commit, so that the acknowledgements of a busy bind
// share a transaction with each other and with the sends and statuses of
// the moment, rather than each taking the single writer for a commit.
func (s *Store) AckSMPPItems(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.Write(ctx, func(tx *Tx) error {
		for _, p := range pieces(len(ids), 256) {
			chunk := ids[p[0]:p[1]]
			query := s.shape("ack smpp items", len(chunk), func() string {
				return `DELETE FROM smpp_items WHERE id IN (` + s.placeholders(1, len(chunk)) + `)`
			})
			args := make([]any, len(chunk))
			for i, id := range chunk {
				args[i] = id
			}
			if _, err := tx.exec(ctx, query, args...); err != nil {
				return fmt.Errorf("ack smpp items: %w", err)
			}
		}
		return nil
	})
}

// PurgeSMPPItems deletes rows that expired unacknowledged before now.
func (s *Store) PurgeSMPPItems(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.wexec(ctx, `DELETE FROM smpp_items WHERE expires_at <= $1`, ms(now))
	if err != nil {
		return 0, fmt.Errorf("purge smpp items: %w", err)
	}
	return res.RowsAffected()
}

// PendingSMPPItems counts the rows waiting for a bind.
func (s *Store) PendingSMPPItems(ctx context.Context) (int, error) {
	var n int
	if err := s.rqueryRow(ctx, `SELECT COUNT(*) FROM smpp_items`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count smpp items: %w", err)
	}
	return n, nil
}

// sortItems puts claimed rows oldest first: RETURNING keeps no order.
func sortItems(items []domain.SMPPItem) {
	for i := 1; i < len(items); i++ {
		for j := i; j > 0 && itemBefore(items[j], items[j-1]); j-- {
			items[j], items[j-1] = items[j-1], items[j]
		}
	}
}

func itemBefore(a, b domain.SMPPItem) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.Before(b.CreatedAt)
	}
	return a.ID < b.ID
}

// ReleaseSMPPLeases makes every row leased to owner due again at now: at a
// node's start, what its previous run had claimed; at its stop, what it
// did not get acknowledged.
func (s *Store) ReleaseSMPPLeases(ctx context.Context, owner string, now time.Time) (int64, error) {
	res, err := s.wexec(ctx, `UPDATE smpp_items SET lease_owner = '', next_attempt_at = $2 WHERE lease_owner = $1`,
		owner, ms(now))
	if err != nil {
		return 0, fmt.Errorf("release smpp items: %w", err)
	}
	return res.RowsAffected()
}

// HasSMPPUsers reports whether an account has SMPP users in env: only
// then do its replies wait for SMPP binds.
func (s *Store) HasSMPPUsers(ctx context.Context, accountID string, env domain.Environment) (bool, error) {
	var n int
	err := s.rqueryRow(ctx, `SELECT COUNT(*) FROM smpp_users WHERE account_id = $1 AND env = $2`, accountID, env).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("smpp users of %s: %w", accountID, err)
	}
	return n > 0, nil
}

// ReserveSMPPBind records bind unless its user already holds max unexpired
// binds on all nodes together, and then that the user bound now; it
// reports whether the bind may open.
func (s *Store) ReserveSMPPBind(ctx context.Context, b domain.SMPPBind, max int, now, until time.Time) (bool, error) {
	userID := b.UserID
	ok := false
	err := s.Write(ctx, func(tx *Tx) error {
		if s.dialect == Postgres {
			// Two nodes reserving for one user at once take turns here.
			if _, err := tx.exec(ctx, `SELECT id FROM smpp_users WHERE id = $1 FOR UPDATE`, userID); err != nil {
				return fmt.Errorf("lock smpp user: %w", err)
			}
		}
		var n int
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM smpp_binds WHERE user_id = $1 AND expires_at > $2`,
			userID, ms(now)).Scan(&n); err != nil {
			return fmt.Errorf("count smpp binds: %w", err)
		}
		if n >= max {
			return nil
		}
		ok = true
		if _, err := tx.exec(ctx, `INSERT INTO smpp_binds (id, user_id, node, expires_at, addr, bind_type, bound_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, b.ID, userID, b.Node, ms(until), b.Addr, b.Type, ms(now)); err != nil {
			return fmt.Errorf("record smpp bind: %w", err)
		}
		if _, err := tx.exec(ctx, `UPDATE smpp_users SET last_bound_at = $2 WHERE id = $1`, userID, ms(now)); err != nil {
			return fmt.Errorf("record smpp bind time: %w", err)
		}
		return nil
	})
	return ok, err
}

// RenewSMPPBinds keeps a node's open binds counted until until.
func (s *Store) RenewSMPPBinds(ctx context.Context, node string, ids []string, until time.Time) error {
	return s.Write(ctx, func(tx *Tx) error {
		return inChunks(ids, func(chunk []any) error {
			_, err := tx.exec(ctx, `UPDATE smpp_binds SET expires_at = $2 WHERE node = $1 AND id IN (`+
				tx.s.placeholders(3, len(chunk))+`)`, append([]any{node, ms(until)}, chunk...)...)
			if err != nil {
				return fmt.Errorf("renew smpp binds: %w", err)
			}
			return nil
		})
	})
}

// DropSMPPBind forgets a closed bind.
func (s *Store) DropSMPPBind(ctx context.Context, id string) error {
	return s.run(ctx, "drop smpp bind", `DELETE FROM smpp_binds WHERE id = $1`, id)
}

// DropNodeSMPPBinds forgets every bind of a node: at its start, those of
// its previous run, which are closed.
func (s *Store) DropNodeSMPPBinds(ctx context.Context, node string, now time.Time) error {
	if _, err := s.wexec(ctx, `DELETE FROM smpp_binds WHERE node = $1 OR expires_at <= $2`, node, ms(now)); err != nil {
		return fmt.Errorf("drop smpp binds of %s: %w", node, err)
	}
	return nil
}

// RefusalsKept is how many refusals are kept per SMPP user: the newest.
const RefusalsKept = 20

var smppRefusals = newTable("smpp_refusals", func(r *domain.SMPPRefusal, c cols) cols {
	return c.add(textCol("id", &r.ID), textCol("user_id", &r.UserID), textCol("account_id", &r.AccountID),
		msCol("at", &r.At), textCol("addr", &r.Addr), textCol("command", &r.Command), textCol("status", &r.Status),
		textCol("reason", &r.Reason))
})

// RecordSMPPRefusal keeps a refused bind or submit_sm of an SMPP user, and
// only the newest RefusalsKept of the user, so the table stays small
// however often a peer is refused.
func (s *Store) RecordSMPPRefusal(ctx context.Context, r domain.SMPPRefusal) error {
	return s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.exec(ctx, smppRefusals.insert(s), smppRefusals.args(&r, nil)...); err != nil {
			return fmt.Errorf("record smpp refusal: %w", err)
		}
		if _, err := tx.exec(ctx, `DELETE FROM smpp_refusals WHERE user_id = $1 AND id NOT IN
			(SELECT id FROM smpp_refusals WHERE user_id = $1 ORDER BY at DESC, id DESC LIMIT $2)`, r.UserID, RefusalsKept); err != nil {
			return fmt.Errorf("trim smpp refusals: %w", err)
		}
		return nil
	})
}

// SMPPActivity reads what operators see of an account's SMPP users, by
// user id: open binds on every node (unexpired at now), when each last
// bound, and their recent refusals, newest first.
func (s *Store) SMPPActivity(ctx context.Context, accountID string, now time.Time) (map[string]domain.SMPPActivity, error) {
	out := map[string]domain.SMPPActivity{}
	rows, err := s.rquery(ctx, `SELECT id, last_bound_at FROM smpp_users WHERE account_id = $1`, accountID)
	if err != nil {
		return nil, fmt.Errorf("smpp users' last binds: %w", err)
	}
	for rows.Next() {
		var id string
		var last sql.NullInt64
		if err := rows.Scan(&id, &last); err != nil {
			rows.Close()
			return nil, fmt.Errorf("scan smpp user's last bind: %w", err)
		}
		out[id] = domain.SMPPActivity{LastBoundAt: fromMS(last)}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = s.rquery(ctx, `SELECT b.id, b.user_id, b.node, b.addr, b.bind_type, b.bound_at FROM smpp_binds b
		JOIN smpp_users u ON u.id = b.user_id WHERE u.account_id = $1 AND b.expires_at > $2 ORDER BY b.bound_at, b.id`,
		accountID, ms(now))
	if err != nil {
		return nil, fmt.Errorf("smpp binds: %w", err)
	}
	for rows.Next() {
		var b domain.SMPPBind
		var at sql.NullInt64
		if err := rows.Scan(&b.ID, &b.UserID, &b.Node, &b.Addr, &b.Type, &at); err != nil {
			rows.Close()
			return nil, fmt.Errorf("scan smpp bind: %w", err)
		}
		b.BoundAt = fromMS(at)
		a := out[b.UserID]
		a.Binds = append(a.Binds, b)
		out[b.UserID] = a
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	refusals, err := smppRefusals.scanAll(s.rquery(ctx, `SELECT `+smppRefusals.list+` FROM smpp_refusals
		WHERE account_id = $1 ORDER BY at DESC, id DESC`, accountID))
	if err != nil {
		return nil, fmt.Errorf("smpp refusals: %w", err)
	}
	for _, r := range refusals {
		if a, ok := out[r.UserID]; ok {
			a.Refusals = append(a.Refusals, r)
			out[r.UserID] = a
		}
	}
	return out, nil
}
