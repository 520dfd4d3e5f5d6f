package store

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
	"strings"
	"time"
)

var events = newTable("webhook_events", func(e *domain.Event, c cols) cols {
	return c.add(textCol("id", &e.ID), textCol("account_id", &e.AccountID), enumCol("env", &e.Env),
		textCol("campaign_id", &e.CampaignID), textCol("message_id", &e.MessageID), textCol("event", &e.Event),
		textCol("url", &e.URL), textCol("body", &e.Body), textCol("form", &e.Form), textCol("state", &e.State), intCol("attempts", &e.Attempts),
		timeCol("next_attempt_at", &e.NextAttemptAt), textCol("lease_owner", &e.LeaseOwner),
		intCol("last_status", &e.LastStatus), textCol("last_error", &e.LastError), timeCol("created_at", &e.CreatedAt),
		timeCol("delivered_at", &e.DeliveredAt))
}).withDefaults("campaign_id", "message_id", "form", "attempts", "next_attempt_at", "lease_owner", "last_status",
	"last_error", "delivered_at")

var eventCols = events.list

// InsertEvents queues webhook events, in the caller's transaction. An
// event written with a LeaseOwner and a NextAttemptAt in the future is
// already claimed by that owner (handed over in memory); if the owner dies
// the event becomes due when the lease runs out. An event without a URL
// is written for the events feed alone (EventNone), never due.
//
// An event whose message has an earlier event in the table that goes
// before it (see ClaimEvents) is not handed over: it is written due at
// once without a lease, and its LeaseOwner in evs is cleared, so that the
// caller hands over only what may be posted now. The claim takes it when
// its turn comes. An event behind another of its message in evs keeps its
// lease when that one keeps the same: the caller hands it over behind that
// one (domain.Event.Then), to be posted once that one is delivered. Should
// the node die first, both leases run out and the claim still takes them
// in order.
func (tx *Tx) InsertEvents(ctx context.Context, evs []domain.Event) error {
	if err := tx.holdBehind(ctx, evs); err != nil {
		return err
	}
	rows := make([]domain.Event, len(evs))
	for i, e := range evs {
		e.State = domain.EventPending
		if e.URL == "" {
			e.State, e.NextAttemptAt, e.LeaseOwner = domain.EventNone, time.Time{}, ""
		}
		rows[i] = e
	}
	return insertRows(ctx, tx, events, rows, 256, "", true, "events")
}

// holdBehind takes the hand-over's lease off every leased event of evs
// that must wait in the table: a message's first event in evs when the
// table holds an earlier one that goes before it, and the events behind
// it in evs with it. The table is read only for messages whose first
// event in evs is not marked NoEarlier: a message's first status change
// (most of them) has nothing there to wait for.
func (tx *Tx) holdBehind(ctx context.Context, evs []domain.Event) error {
	var ids []string
	var latest time.Time
	var lead map[string]int // each message's first webhook in evs
	var behind []int        // the webhooks after their message's first
	for i := range evs {
		e := &evs[i]
		if e.MessageID == "" || e.URL == "" {
			continue
		}
		if lead == nil {
			lead = make(map[string]int, len(evs))
		}
		if _, ok := lead[e.MessageID]; ok {
			behind = append(behind, i)
			continue
		}
		lead[e.MessageID] = i
		if e.LeaseOwner != "" && !e.NoEarlier {
			ids = append(ids, e.MessageID)
			latest = later(latest, e.CreatedAt)
		}
	}
	if len(ids) > 0 {
		waiting := map[string]bool{}
		err := inChunks(ids, func(chunk []any) error {
			var mid string
			return rowsOf(tx.query(ctx, `SELECT DISTINCT message_id FROM webhook_events WHERE message_id IN (`+
				tx.s.placeholders(2, len(chunk))+`) AND state = 'pending' AND (lease_owner <> '' OR next_attempt_at <= $1)`,
				append([]any{ms(latest)}, chunk...)...)).scan(
				[]any{&mid}, func() { waiting[mid] = true })
		})
		if err != nil {
			return fmt.Errorf("events waiting before new ones: %w", err)
		}
		for _, mid := range ids {
			if waiting[mid] {
				hold(&evs[lead[mid]])
			}
		}
	}
	// An event behind another of its message goes with it: handed over
	// behind it when both are leased to one node, else to the table.
	for _, i := range behind {
		if e := &evs[i]; e.LeaseOwner != "" && evs[lead[e.MessageID]].LeaseOwner != e.LeaseOwner {
			hold(e)
		}
	}
	return nil
}

// hold writes an event without a lease, due at once: the claim takes it
// when the events before it are done.
func hold(e *domain.Event) {
	e.LeaseOwner, e.NextAttemptAt = "", e.CreatedAt
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// ClaimEvents leases up to limit due events, like ClaimDue for messages,
// in each message's order: an event is not claimed while an earlier event
// of its message is pending and either in a node's hands (leased: being
// posted, or handed over and about to be) or due no later than it. So a
// message's events are posted one at a time, in the order they were
// written, and only a retry that waits for a later time lets the events
// behind it go first. The earliest pending event of a message is never
// held, so nothing waits for ever: a node that dies with an event leased
// lets it come due when the lease ends, and the events behind it follow.
func (s *Store) ClaimEvents(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]domain.Event, error) {
	seq := s.seq()
	return claimDue(ctx, s, events, "", ` AND NOT EXISTS (SELECT 1 FROM webhook_events p
		WHERE p.message_id = webhook_events.message_id AND webhook_events.message_id <> ''
		AND p.`+seq+` < webhook_events.`+seq+` AND p.state = 'pending'
		AND (p.lease_owner <> '' OR p.next_attempt_at <= webhook_events.next_attempt_at))`, owner, now, lease, limit)
}

// HurryEvents makes due at now every event of an account's receiver at url
// that waits for a retry, and returns how many: the receiver answered
// again, so its backlog need not wait out each event's own retry time.
// Each message's events still go in order (ClaimEvents).
func (s *Store) HurryEvents(ctx context.Context, accountID, url string, now time.Time) (int64, error) {
	res, err := s.wexec(ctx, `UPDATE webhook_events SET next_attempt_at = $3
		WHERE account_id = $1 AND url = $2 AND state = 'pending' AND lease_owner = '' AND next_attempt_at > $3`,
		accountID, url, ms(now))
	if err != nil {
		return 0, fmt.Errorf("hurry events: %w", err)
	}
	return res.RowsAffected()
}

// ReleaseEvents gives up an owner's lease on events it cannot deliver now,
// making them due at once for any node.
func (s *Store) ReleaseEvents(ctx context.Context, owner string, ids []string, now time.Time) error {
	return s.releaseLeases(ctx, "webhook_events", "state = 'pending'", owner, ids, now)
}

var attempts = newTable("webhook_attempts", func(a *domain.Attempt, c cols) cols {
	return c.add(textCol("id", &a.ID), textCol("event_id", &a.EventID), timeCol("attempted_at", &a.AttemptedAt),
		intCol("status_code", &a.StatusCode), durationCol("duration_ms", &a.Duration), textCol("error", &a.Error),
		textCol("response", &a.Response))
})

var inbounds = newTable("inbound_messages", func(in *domain.Inbound, c cols) cols {
	return c.add(textCol("id", &in.ID), textCol("account_id", &in.AccountID), enumCol("env", &in.Env),
		textCol("phone", &in.Phone), enumCol("channel", &in.Channel), textCol("body", &in.Body),
		textCol("campaign_id", &in.CampaignID), textCol("provider", &in.Provider),
		timeCol("received_at", &in.ReceivedAt), textCol("provider_ref", &in.ProviderRef), textCol("message_id", &in.MessageID))
})

// RecordAttempts writes a batch of attempts and their events' new states in
// one transaction. Only the lease owner's outcome counts: an event whose
// lease was taken over meanwhile is left to its new owner.
//
// A failed attempt is a row of webhook_attempts. The attempt that delivers
// an event is written into the event's row, which its outcome updates
// anyway; only when that update did not land (the lease had passed to
// another node) does it get a row of its own, so the log still shows that
// the receiver was posted to.
func (s *Store) RecordAttempts(ctx context.Context, owner string, outs []domain.AttemptOutcome) error {
	if len(outs) == 0 {
		return nil
	}
	// The outcomes ride with the next transaction of the node's other
	// writes (sends, reports), which come every millisecond or so under
	// load: a transaction of their own, one per batch of posts, was a
	// quarter of a node's transactions at low concurrency.
	return s.writeSoon(ctx, attemptsWait, func(tx *Tx) error {
		var failed, delivered []domain.Attempt
		for i := range outs {
			if outs[i].State == domain.EventDelivered {
				delivered = append(delivered, outs[i].Attempt)
			} else {
				failed = append(failed, outs[i].Attempt)
			}
		}
		if err := insertRows(ctx, tx, attempts, failed, 256, "", true, "attempts"); err != nil {
			return err
		}
		landed := true
		for _, pc := range pieces(len(outs), 256) {
			all, err := updateAttempted(ctx, tx, owner, outs[pc[0]:pc[1]])
			if err != nil {
				return err
			}
			landed = landed && all
		}
		if landed {
			return nil // every event's row took its outcome, deliveries included
		}
		for _, pc := range pieces(len(delivered), 256) {
			if err := insertUnlanded(ctx, tx, delivered[pc[0]:pc[1]]); err != nil {
				return err
			}
		}
		return nil
	})
}

// attemptsWait bounds how long recorded outcomes wait for other writes
// to share a transaction with. An event that waits behind one of them
// (the next of its message) is posted that much later at most.
const attemptsWait = 2 * time.Millisecond

// updateAttempted applies a chunk of outcomes to their events. It reports
// whether every outcome is known to have landed (SQLite tells how many rows
// changed; PostgreSQL's statement is pipelined, so there it never knows).
//
// On PostgreSQL the chunk is one UPDATE … FROM VALUES, since every
// statement is a round trip. On SQLite, where a statement is a call, each
// event is an UPDATE of its own (one prepared statement, bound again): an
// UPDATE … FROM fills two temporary tables (the VALUES, then the join)
// before it changes a row, which cost more than a statement per row at
// the two to eight outcomes a transaction carries, 4.4 % of the writer's
// instructions a message in groups of two.
func updateAttempted(ctx context.Context, tx *Tx, owner string, chunk []domain.AttemptOutcome) (bool, error) {
	if tx.pg == nil {
		const query = `UPDATE webhook_events SET state = $2, attempts = attempts + 1, next_attempt_at = $3, lease_owner = '',
		last_status = $4, last_error = $5, delivered_at = COALESCE($6, delivered_at),
		delivered_attempt_id = COALESCE($7, delivered_attempt_id), delivered_duration_ms = COALESCE($8, delivered_duration_ms),
		delivered_response = COALESCE($9, delivered_response) WHERE id = $1 AND lease_owner = $10`
		all := true
		args := make([]any, 0, 10)
		for _, o := range chunk {
			args = append(attemptedArgs(args[:0], o), owner)
			res, err := tx.exec(ctx, query, args...)
			if err != nil {
				return false, fmt.Errorf("update events: %w", err)
			}
			n, err := res.RowsAffected()
			all = all && err == nil && n == 1
		}
		return all, nil
	}
	const per = 9
	query := tx.s.shape("update events", len(chunk), func() string {
		var b strings.Builder
		b.WriteString(`UPDATE webhook_events SET state = v.column2, attempts = attempts + 1,
		next_attempt_at = v.column3, lease_owner = '', last_status = v.column4, last_error = v.column5,
		delivered_at = COALESCE(v.column6, delivered_at),
		delivered_attempt_id = COALESCE(v.column7, delivered_attempt_id),
		delivered_duration_ms = COALESCE(v.column8, delivered_duration_ms),
		delivered_response = COALESCE(v.column9, delivered_response) FROM (VALUES `)
		for i := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			n := 2 + i*per
			fmt.Fprintf(&b, "(CAST($%d AS TEXT), CAST($%d AS TEXT), CAST($%d AS BIGINT), CAST($%d AS INTEGER), CAST($%d AS TEXT), "+
				"CAST($%d AS BIGINT), CAST($%d AS TEXT), CAST($%d AS BIGINT), CAST($%d AS TEXT), CAST($1 AS TEXT))",
				n, n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8)
		}
		b.WriteString(`) AS v WHERE webhook_events.id = v.column1 AND webhook_events.lease_owner = v.column10`)
		return b.String()
	})
	args := make([]any, 0, len(chunk)*per+1)
	args = append(args, owner)
	for _, o := range chunk {
		args = attemptedArgs(args, o)
	}
	if err := tx.execLater(ctx, query, args...); err != nil {
		return false, fmt.Errorf("update events: %w", err)
	}
	return false, nil
}

// attemptedArgs appends what an outcome sets on its event's row: its id,
// state, next attempt, status and error, then what a delivery adds (NULL
// for any other outcome, which keeps the row's).
//
// The NULLs are untyped nils and the values plain, not sql.Null* (which
// would be boxed, then unwrapped again on their way to the driver): two
// outcomes a message pass through here.
func attemptedArgs(args []any, o domain.AttemptOutcome) []any {
	var delivered, attemptID, duration, response any
	if o.State == domain.EventDelivered {
		delivered = msOrNil(o.Attempt.AttemptedAt)
		attemptID = o.Attempt.ID
		duration = o.Attempt.Duration.Milliseconds()
		response = o.Attempt.Response
	}
	return append(args, o.Attempt.EventID, o.State, msOrNil(o.NextAttemptAt), o.Attempt.StatusCode, o.Attempt.Error,
		delivered, attemptID, duration, response)
}

// insertUnlanded gives a row of its own to each delivering attempt that
// its event's row does not hold.
func insertUnlanded(ctx context.Context, tx *Tx, chunk []domain.Attempt) error {
	query := tx.s.shape("insert unlanded", len(chunk), func() string {
		var b strings.Builder
		b.WriteString(`INSERT INTO webhook_attempts (` + attempts.list + `) SELECT v.column1, v.column2, v.column3, v.column4,
		v.column5, v.column6, v.column7 FROM (VALUES `)
		for i := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			n := 1 + i*len(attempts.names)
			fmt.Fprintf(&b, "(CAST($%d AS TEXT), CAST($%d AS TEXT), CAST($%d AS BIGINT), CAST($%d AS INTEGER), CAST($%d AS BIGINT), "+
				"CAST($%d AS TEXT), CAST($%d AS TEXT))", n, n+1, n+2, n+3, n+4, n+5, n+6)
		}
		b.WriteString(`) AS v WHERE NOT EXISTS (SELECT 1 FROM webhook_events e
		WHERE e.id = v.column2 AND e.delivered_attempt_id = v.column1)`)
		return b.String()
	})
	args := make([]any, 0, len(chunk)*len(attempts.names))
	for i := range chunk {
		args = attempts.args(&chunk[i], args)
	}
	if err := tx.execLater(ctx, query, args...); err != nil {
		return fmt.Errorf("record unlanded deliveries: %w", err)
	}
	return nil
}

// EventsForMessage lists the webhook events of a message, oldest first.
func (s *Store) EventsForMessage(ctx context.Context, accountID, messageID string) ([]domain.Event, error) {
	return events.scanAll(s.rquery(ctx, `SELECT `+eventCols+` FROM webhook_events WHERE account_id = $1 AND message_id = $2
		ORDER BY `+s.seq(), accountID, messageID))
}

// EventsForCampaign lists a campaign's events (replies included), oldest first.
func (s *Store) EventsForCampaign(ctx context.Context, accountID, campaignID string, limit int) ([]domain.Event, error) {
	return events.scanAll(s.rquery(ctx, `SELECT `+eventCols+` FROM webhook_events WHERE account_id = $1 AND campaign_id = $2
		ORDER BY `+s.seq()+` LIMIT $3`, accountID, campaignID, limit))
}

// PendingEvents counts events not yet delivered nor given up (tests, metrics).
func (s *Store) PendingEvents(ctx context.Context) (int, error) {
	var n int
	err := s.rqueryRow(ctx, `SELECT COUNT(*) FROM webhook_events WHERE state = 'pending'`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count pending events: %w", err)
	}
	return n, nil
}

// Attempts lists an event's delivery attempts, oldest first.
func (s *Store) Attempts(ctx context.Context, eventID string) ([]domain.Attempt, error) {
	return attempts.scanAll(s.rquery(ctx, attemptLog(s, `e.id = $1`), eventID))
}

// attemptLog selects the attempts of the events that where selects: the
// rows of webhook_attempts and the delivering attempt held in an event's
// row, grouped by event in the order the events were raised, each
// event's attempts in the order they were written (a delivery, when there
// is one, is an event's last: a redelivery first moves it to a row).
func attemptLog(s *Store, where string) string {
	return `SELECT ` + attempts.list + ` FROM (
		SELECT ` + prefixed("a.", attempts.list) + `, e.` + s.seq() + ` AS event_pos, 0 AS delivery, a.` + s.seq() + ` AS pos
			FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id WHERE ` + where + `
		UNION ALL
		SELECT e.delivered_attempt_id, e.id, e.delivered_at, e.last_status, e.delivered_duration_ms, '', e.delivered_response,
			e.` + s.seq() + `, 1, 0
			FROM webhook_events e WHERE ` + where + ` AND e.delivered_attempt_id <> ''
	) AS log ORDER BY event_pos, delivery, pos`
}

// AccountEvent reads one webhook event of an account.
func (s *Store) AccountEvent(ctx context.Context, accountID, eventID string) (domain.Event, error) {
	return events.scan(s.rqueryRow(ctx, `SELECT `+eventCols+` FROM webhook_events WHERE id = $1 AND account_id = $2`,
		eventID, accountID))
}

// MessageAttempts lists the delivery attempts of every webhook event of a
// message of an account: by event, in the order the events were raised,
// and each event's oldest first.
func (s *Store) MessageAttempts(ctx context.Context, accountID, messageID string) ([]domain.Attempt, error) {
	return attempts.scanAll(s.rquery(ctx, attemptLog(s, `e.account_id = $1 AND e.message_id = $2`), accountID, messageID))
}

// Redeliver queues an event of an account again, whatever its state. An
// event whose send had no callbackUrl has nowhere to go: ErrNotFound. A
// delivery held in the event's row moves to a row of the attempt log
// first, so the next delivery does not overwrite it.
func (s *Store) Redeliver(ctx context.Context, accountID, eventID string, now time.Time) error {
	return s.Write(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `UPDATE webhook_events SET state = 'pending', next_attempt_at = $3, lease_owner = ''
			WHERE id = $1 AND account_id = $2 AND url <> ''`, eventID, accountID, ms(now))
		if err := affectedOne(res, err, "redeliver"); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, `INSERT INTO webhook_attempts (`+attempts.list+`)
			SELECT delivered_attempt_id, id, delivered_at, last_status, delivered_duration_ms, '', delivered_response
			FROM webhook_events WHERE id = $1 AND delivered_attempt_id <> ''`, eventID); err != nil {
			return fmt.Errorf("redeliver: keep the last delivery: %w", err)
		}
		_, err = tx.exec(ctx, `UPDATE webhook_events SET delivered_attempt_id = '', delivered_duration_ms = 0,
			delivered_response = '' WHERE id = $1`, eventID)
		return wrap("redeliver", err)
	})
}

// InsertInbound records a reply, in the caller's transaction. A reply whose
// ProviderRef the provider already delivered is ErrConflict, and nothing
// is written.
func (tx *Tx) InsertInbound(ctx context.Context, in domain.Inbound) error {
	res, err := tx.exec(ctx, inbounds.insert(tx.s)+` ON CONFLICT DO NOTHING`, inbounds.args(&in, nil)...)
	if err != nil {
		return fmt.Errorf("insert inbound: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return domain.ErrConflict
	}
	return nil
}

// LastInbound is when a phone last wrote to the account on a channel (zero
// if never): WhatsApp's conversation window opens on it.
func (s *Store) LastInbound(ctx context.Context, accountID string, env domain.Environment, phone string, channel domain.Channel) (time.Time, error) {
	var at sql.NullInt64
	err := s.rqueryRow(ctx, `SELECT MAX(received_at) FROM inbound_messages WHERE account_id = $1 AND env = $2
		AND phone = $3 AND channel = $4`, accountID, env, phone, channel).Scan(&at)
	if err != nil {
		return time.Time{}, fmt.Errorf("last inbound: %w", err)
	}
	return fromMS(at), nil
}

// StopEventsForURL gives up every pending event of an account for one
// callback URL (its receiver answered 410 Gone) and returns how many. Events
// written later for the same URL are delivered: the receiver may come back.
func (s *Store) StopEventsForURL(ctx context.Context, accountID, url string) (int64, error) {
	res, err := s.wexec(ctx, `UPDATE webhook_events SET state = $3, next_attempt_at = NULL, lease_owner = ''
		WHERE account_id = $1 AND url = $2 AND state = $4`, accountID, url, domain.EventGone, domain.EventPending)
	if err != nil {
		return 0, fmt.Errorf("stop events: %w", err)
	}
	return res.RowsAffected()
}
