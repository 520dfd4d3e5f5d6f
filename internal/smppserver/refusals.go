package smppserver

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	smpp "github.com/msgsvc/msgsvc/internal/pdu"
)

// submitReasons says in words why a submit_sm got its command_status,
// for the log and the operator's view of the refusal.
var submitReasons = map[smpp.Status]string{
	smpp.StatusInvMsgLen:   "message length not allowed",
	smpp.StatusInvBndSts:   "the bind may not submit",
	smpp.StatusInvSrcAdr:   "source_addr is not an approved sender of the account",
	smpp.StatusInvDstAdr:   "destination_addr is not a valid number",
	smpp.StatusInvESMClass: "esm_class not supported",
	smpp.StatusThrottled:   "over the account's send rate limit",
	smpp.StatusInvSched:    "schedule_delivery_time not valid",
	smpp.StatusInvExpiry:   "validity_period not valid",
	smpp.StatusSubmitFail:  "the send was refused (credits, opt-out, route, or the user or its address no longer allowed)",
}

// refusalWrite bounds the write of one refusal: it must not hold a
// session's answer for long when the store is slow.
const refusalWrite = 2 * time.Second

// repeatWindow is how long a refusal repeated exactly (the same system_id,
// address, command, status and reason) is counted instead of written
// again: a peer that keeps submitting past its rate limit would otherwise
// turn each refusal into a log line and a database write.
const repeatWindow = time.Second

// repeats counts the refusals held back within repeatWindow of the last
// one written, by what they repeat.
type repeats struct {
	mu   sync.Mutex
	last map[string]repeat
}

type repeat struct {
	at   time.Time
	held int
}

// pass reports whether a refusal is written now, and how many of its
// repeats were held back since the last one written.
func (r *repeats) pass(key string, now time.Time) (bool, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = map[string]repeat{}
	}
	p, ok := r.last[key]
	if ok && now.Sub(p.at) < repeatWindow {
		p.held++
		r.last[key] = p
		return false, 0
	}
	if len(r.last) >= 4096 {
		for k, v := range r.last {
			if now.Sub(v.at) >= repeatWindow {
				delete(r.last, k)
			}
		}
	}
	r.last[key] = repeat{at: now}
	return true, p.held
}

// refused logs a refused bind or submit_sm with the SMPP user, the remote
// address and the reason, and keeps it for operators when the user exists
// (a system_id no user has belongs to no account: it is only logged). An
// exact repeat within a second is counted, and the count is written with
// the next one.
func (s *Server) refused(ctx context.Context, ss *session, u domain.SMPPUser, systemID string, cmd smpp.CommandID,
	st smpp.Status, reason string) {
	if reason == "" {
		reason = submitReasons[st]
	}
	if reason == "" {
		reason = st.String()
	}
	from := ss.addr.String()
	if reason == reasonAddrThrottled || reason == reasonUserThrottled {
		// Throttled attempts may come from any number of addresses: they
		// are repeats of one another whatever the address.
		from = ""
	}
	ok, held := s.repeats.pass(strings.Join([]string{systemID, from, cmd.String(), st.String(), reason}, "\x00"), s.cfg.Now())
	if !ok {
		return
	}
	level := slog.LevelWarn
	if st == smpp.StatusThrottled {
		level = slog.LevelInfo // the account's own rate limit at work, not a fault
	}
	s.cfg.Log.Log(ctx, level, "smpp: refused", "command", cmd.String(), "systemId", systemID, "userId", u.ID, "accountId", u.AccountID,
		"remoteAddr", ss.addr.String(), "status", st.String(), "reason", reason, "repeatsHeldBack", held)
	if s.cfg.Refusals == nil || u.ID == "" {
		return
	}
	now := s.cfg.Now().UTC()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refusalWrite)
	defer cancel()
	if err := s.cfg.Refusals.RecordSMPPRefusal(ctx, domain.SMPPRefusal{ID: id.New(id.SMPPRefusal, now), UserID: u.ID,
		AccountID: u.AccountID, At: now, Addr: ss.addr.String(), Command: cmd.String(), Status: st.String(),
		Reason: reason}); err != nil {
		s.cfg.Log.Warn("smpp: keep a refusal for operators", "err", err)
	}
}
