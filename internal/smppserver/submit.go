package smppserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/channel/sms"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	smpp "github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
)

// sendingType is the API's request type whose window limits sends.
const sendingType = "sending"

// submit turns a submit_sm into a send of the bind's user and returns the
// message id and the command_status to answer with, and for a refusal the
// reason in words (the ESME hears only a status; the caller logs and keeps
// the reason for operators). It returns once the message is stored (or
// refused).
func (s *Server) submit(ctx context.Context, ss *session, p smpp.PDU) (string, smpp.Status, string) {
	id, st, err := s.accept(ctx, ss, p)
	if st != smpp.StatusOK && err != nil {
		return id, st, err.Error()
	}
	return id, st, ""
}

// accept is submit with the reason as an error: the id, or the status and why.
//
// A change to the user or its account (removed, suspended, an allow-list
// or a limit changed, on any node) must bite at the next submit_sm. The
// send carries the settings counter the bind's account was read at, and
// its transaction checks that the counter has not moved since (as the
// API's cached keys do): a submit then waits for no read of its own
// before the send. When the counter moved, the binds are checked against
// a fresh read (current), this bind's account is read again, and the send
// is made again, as every submit_sm was before.
func (s *Server) accept(ctx context.Context, ss *session, p smpp.PDU) (string, smpp.Status, error) {
	sm, ok := p.Body.(*smpp.SM)
	if !ok {
		return "", smpp.StatusSubmitFail, errors.New("not a submit_sm body")
	}
	u, acct, at := ss.callerAt()
	switch {
	case ss.isClosed():
		return "", smpp.StatusSubmitFail, errGone
	case at == 0:
		if !s.current(ctx, ss) {
			return "", smpp.StatusSubmitFail, errGone
		}
		u, acct, _ = ss.callerAt()
	}
	now := s.cfg.Now()
	req, st, err := request(sm, now)
	if st != smpp.StatusOK {
		return "", st, err
	}
	req.Origin = domain.Origin{Front: domain.FrontSMPP, SMPP: &domain.SMPPOrigin{User: u.ID, Receipt: sm.RegisteredDelivery&0x01 != 0}}
	if s.cfg.Limiter != nil {
		dec, err := s.cfg.Limiter.Allow(ctx, ratelimit.Request{Key: acct.ID, TierLimit: acct.Limits.TierRPM, Type: sendingType,
			TypeLimit: acct.Limits.SendRPM})
		if err != nil {
			return "", smpp.StatusSubmitFail, fmt.Errorf("rate limiter: %w", err)
		}
		if !dec.Allowed {
			return "", smpp.StatusThrottled, errors.New("over the account's send rate limit")
		}
	}
	who := domain.Principal{Account: acct, Kind: domain.CredentialSMPPUser, CredentialID: u.ID, Env: u.Env, AuthVersion: at}
	out, err := s.cfg.Sender.Send(ctx, who, req, intake.SendOptions{})
	if at != 0 && errors.Is(err, intake.ErrStaleAuth) {
		// Nothing was written: the send is made again on the bind as it
		// stands after a fresh read, which the transaction need not check.
		if !s.current(ctx, ss) || !s.refresh(ctx, ss) {
			return "", smpp.StatusSubmitFail, errGone
		}
		u, acct, _ = ss.callerAt()
		who = domain.Principal{Account: acct, Kind: domain.CredentialSMPPUser, CredentialID: u.ID, Env: u.Env}
		out, err = s.cfg.Sender.Send(ctx, who, req, intake.SendOptions{})
	}
	if err != nil {
		return "", refusal(err), inSMPPTerms(err)
	}
	if len(out.Receipt.Messages) != 1 {
		return "", smpp.StatusSubmitFail, fmt.Errorf("the send planned %d messages, not one", len(out.Receipt.Messages))
	}
	return out.Receipt.Messages[0].Message.ID, smpp.StatusOK, nil
}

// errGone refuses a submit_sm of a bind that a change closed.
var errGone = errors.New("the user was removed or its address is no longer allowed")

// refusal is the command_status of a refused send: a bad destination, an
// unapproved sender, or a part with a user data header that does not fit
// one segment by name (the first such field the core refused, by its
// domain path); a destination outside the account's allowed countries is
// a destination it may not use, ESME_RINVDSTADR too (SMPP 3.4 has no
// status for a barred destination, and this one tells the ESME not to
// retry); anything else ESME_RSUBMITFAIL.
func refusal(err error) smpp.Status {
	if errors.Is(err, domain.ErrDestinationNotAllowed) {
		return smpp.StatusInvDstAdr
	}
	var verr *domain.ValidationError
	if errors.As(err, &verr) {
		for _, f := range verr.Fields {
			if st, ok := fieldStatus(f.Path); ok {
				return st
			}
		}
	}
	return smpp.StatusSubmitFail
}

// fieldStatus is the command_status that names what is wrong with a field
// of a submit_sm, when SMPP has one for it.
func fieldStatus(path string) (smpp.Status, bool) {
	switch {
	case path == "recipients" || strings.HasPrefix(path, "recipients["):
		return smpp.StatusInvDstAdr, true
	case path == "sender":
		return smpp.StatusInvSrcAdr, true
	case path == "udh":
		return smpp.StatusInvMsgLen, true
	}
	return 0, false
}

// inSMPPTerms is a refusal as an operator reads it for an SMPP user: the
// core names a field by its domain path, which the SMPP front names by the
// submit_sm's field that carried it.
func inSMPPTerms(err error) error {
	verr, ok := domain.IsValidation(err)
	if !ok || verr.Detail != "" {
		return err
	}
	named := &domain.ValidationError{Fields: make([]domain.FieldError, len(verr.Fields))}
	for i, f := range verr.Fields {
		if f.Field == "" {
			f.Field = smppField(f.Path)
		}
		named.Fields[i] = f
	}
	return named
}

// smppField is the submit_sm field that carries a domain path.
func smppField(path string) string {
	switch {
	case path == "recipients" || strings.HasPrefix(path, "recipients["):
		return "destination_addr"
	case path == "sender":
		return "source_addr"
	case path == "text":
		return "short_message"
	case path == "udh":
		return "short_message user data header"
	case path == "schedule":
		return "schedule_delivery_time"
	case path == "validity":
		return "validity_period"
	}
	return path
}

// request reads a submit_sm as a send request, or says which status
// refuses it and why.
func request(sm *smpp.SM, now time.Time) (domain.SendRequest, smpp.Status, error) {
	d := domain.SendRequest{Channel: domain.SMS, Sender: sm.SourceAddr}
	to := strings.TrimPrefix(sm.DestAddr, "+")
	if to == "" {
		return d, smpp.StatusInvDstAdr, errors.New("no destination_addr")
	}
	d.Recipients = []string{to}
	data := sm.ShortMessage
	if payload, ok := sm.TLVs.Get(smpp.TagMessagePayload); ok {
		if len(data) > 0 {
			return d, smpp.StatusSubmitFail, errors.New("both short_message and message_payload") // ambiguous (§5.3.2.32)
		}
		data = payload
	}
	switch sm.DataCoding {
	case smpp.CodingDefault, smpp.CodingASCII, smpp.CodingLatin1, smpp.CodingUCS2:
	default:
		// Binary (2, 4) among them: msgsvc carries text from end to end,
		// and binary octets read as text would reach the handset corrupted.
		return d, smpp.StatusInvDCS, fmt.Errorf("data_coding 0x%02x is not one msgsvc carries: 0 (GSM 03.38), 1 (IA5/ASCII), 3 (Latin-1) or 8 (UCS-2)",
			sm.DataCoding)
	}
	if sm.ESMClass&smpp.ESMClassUDHI != 0 {
		n, err := smpp.UDHLen(data)
		if err != nil {
			return d, smpp.StatusSubmitFail, fmt.Errorf("user data header: %w", err)
		}
		d.UDH, data = data[:n:n], data[n:]
	}
	text, st, err := decode(sm.DataCoding, data)
	if st != smpp.StatusOK {
		return d, st, err
	}
	d.Text = text
	if sm.ValidityPeriod != "" {
		until, err := parseTime(sm.ValidityPeriod, now)
		if err != nil {
			return d, smpp.StatusInvExpiry, fmt.Errorf("validity_period: %w", err)
		}
		// Held to what the core takes, whole seconds, rather than refused:
		// an ESME asks for a time, not for msgsvc's limits.
		v := min(max(until.Sub(now).Truncate(time.Second), intake.MinValidity), intake.MaxValidity)
		d.Validity = &v
	}
	if sm.ScheduleDeliveryTime != "" {
		at, err := parseTime(sm.ScheduleDeliveryTime, now)
		if err != nil {
			return d, smpp.StatusInvSched, fmt.Errorf("schedule_delivery_time: %w", err)
		}
		d.Schedule = at.UTC()
	}
	return d, smpp.StatusOK, nil
}

// decode reads user data as the text data_coding says it is, held to what
// that coding can hold, as the API holds its JSON strings to valid text:
// septets only (octets below 0x80) under the 7-bit codings 0 and 1, and
// whole UTF-16 under 8.
//
// data_coding 1 is IA5/ASCII, yet node-smpp, among other ESMEs, puts GSM
// 03.38 septets under it ('@' as 0x00, '$' as 0x02, '_' as 0x11, '[' as ESC
// 0x3C, 'à' as 0x7F). Octets that are control characters in ASCII other
// than LF and CR are what only such septets contain, so a text with any of them is read
// as GSM 03.38, the rest as ASCII.
func decode(dc byte, data []byte) (string, smpp.Status, error) {
	switch dc {
	case smpp.CodingDefault, smpp.CodingASCII:
		for i, c := range data {
			if c >= 0x80 {
				return "", smpp.StatusSubmitFail, fmt.Errorf("octet 0x%02X at %d under data_coding %d, a 7-bit alphabet", c, i, dc)
			}
		}
		if dc == smpp.CodingASCII && !septetsUnderIA5(data) {
			return smpp.DecodeText(smpp.CodingASCII, data), smpp.StatusOK, nil
		}
		return smpp.DecodeText(smpp.CodingDefault, data), smpp.StatusOK, nil
	case smpp.CodingUCS2:
		if len(data)%2 == 1 {
			return "", smpp.StatusInvMsgLen, fmt.Errorf("UCS-2 text of %d octets, an odd number", len(data))
		}
		if err := sms.CheckUCS2(data); err != nil {
			return "", smpp.StatusSubmitFail, err
		}
	}
	return smpp.DecodeText(dc, data), smpp.StatusOK, nil
}

// septetsUnderIA5 reports whether 7-bit data holds an ASCII control
// character other than LF and CR (DEL included): GSM 03.38 septets, not
// IA5 text.
func septetsUnderIA5(data []byte) bool {
	for _, c := range data {
		if (c < 0x20 && c != '\n' && c != '\r') || c == 0x7F {
			return true
		}
	}
	return false
}

// parseTime reads an SMPP time (§7.1): absolute YYMMDDhhmmsstnn± (nn
// quarter hours from UTC) or relative YYMMDDhhmmss000R from now. Every
// field of an absolute time must name a real instant (no month 13, no
// 30 February, no 24:00): normalising one would schedule a message at a
// time its sender never wrote.
func parseTime(v string, now time.Time) (time.Time, error) {
	if len(v) != 16 {
		return time.Time{}, fmt.Errorf("time %q is not 16 characters", v)
	}
	for i := 0; i < 15; i++ {
		if v[i] < '0' || v[i] > '9' {
			return time.Time{}, fmt.Errorf("time %q has %q where a digit belongs", v, v[i])
		}
	}
	n := make([]int, 6)
	for i := range n {
		n[i] = int(v[2*i]-'0')*10 + int(v[2*i+1]-'0')
	}
	switch v[15] {
	case 'R':
		return now.AddDate(n[0], n[1], n[2]).Add(time.Duration(n[3])*time.Hour + time.Duration(n[4])*time.Minute +
			time.Duration(n[5])*time.Second), nil
	case '+', '-':
		tenths := int(v[12] - '0')
		quarters := int(v[13]-'0')*10 + int(v[14]-'0')
		if quarters > 48 {
			return time.Time{}, fmt.Errorf("time %q: an offset of %d quarter hours", v, quarters)
		}
		t := time.Date(2000+n[0], time.Month(n[1]), n[2], n[3], n[4], n[5], tenths*int(100*time.Millisecond), time.UTC)
		if t.Year() != 2000+n[0] || int(t.Month()) != n[1] || t.Day() != n[2] || t.Hour() != n[3] || t.Minute() != n[4] || t.Second() != n[5] {
			return time.Time{}, fmt.Errorf("time %q is no date and time of day", v)
		}
		off := time.Duration(quarters) * 15 * time.Minute
		if v[15] == '-' {
			off = -off
		}
		return t.Add(-off), nil
	}
	return time.Time{}, fmt.Errorf("time %q ends in %q, not R, + or -", v, v[15])
}
