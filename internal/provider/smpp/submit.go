package smpp

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// maxRelativeValidity caps a relative validity_period: its fields are
// calendar-like (YYMMDD...) and SMSCs disagree on days past a month. The
// contract's longest validity is 72 hours.
const maxRelativeValidity = 30 * 24 * time.Hour

// Submit sends every message, all its parts, and returns one result per
// message in order. Messages go out together, pipelined through the binds'
// windows: the first submit_sm of each is written with the batch's others
// (submitTogether); the parts of one message go one after another, so
// that a refused part stops the rest instead of leaving more stray parts
// on the handset.
//
// Transient failures (see statusError, plus timeouts and lost connections)
// are retried with backoff while ctx lasts (Config.SubmitTimeout when it has
// no deadline); what is still failing then comes back Temporary. A
// request whose connection dropped before its response is sent again on
// another bind or after the reconnect; one that got a response never is. A
// request that timed out is sent again too, which can duplicate a message if
// the SMSC was only slow; that is the usual SMPP trade-off.
func (c *Client) Submit(ctx context.Context, msgs []provider.Outbound) []provider.Result {
	out := make([]provider.Result, len(msgs))
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.SubmitTimeout)
		defer cancel()
	}
	var wg sync.WaitGroup
	// alone runs what the batch's pipelined first attempts cannot finish
	// (a message of several parts, a part to try again) on a goroutine of
	// its own, as every message once did.
	alone := func(i int, run func() provider.Result) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = run()
		}()
	}
	if c.bucket != nil {
		// Under a TPS cap the submits are spaced anyway: nothing to
		// write together.
		for i := range msgs {
			alone(i, func() provider.Result { return c.submitMessage(ctx, &msgs[i]) })
		}
		wg.Wait()
		return out
	}
	c.submitTogether(ctx, msgs, out, alone)
	wg.Wait()
	return out
}

// firstAttempt is the first submit_sm of a one-part message, begun on a
// bind and written with the rest of its batch.
type firstAttempt struct {
	i  int
	sm *pdu.SM
	s  *session
	r  *request
}

// submitTogether makes the first attempt of every one-part message of a
// batch from the caller's goroutine: it begins them all, writes each
// bind's share in one write, and then reads their responses. A batch of
// sends so costs the node one write to the socket, and the SMSC one
// read, rather than one each; and no goroutine a message. Messages of
// several parts, and parts to try again, go to alone.
func (c *Client) submitTogether(ctx context.Context, msgs []provider.Outbound, out []provider.Result, alone func(int, func() provider.Result)) {
	begun := make([]firstAttempt, 0, len(msgs))
	// What each bind has begun and not yet written (one bind, mostly).
	type share struct {
		s *session
		b []byte
	}
	var unwritten []share
	write := func() {
		for _, u := range unwritten {
			_ = u.s.writeRaw(pdu.SubmitSM, u.b) // on failure the session closes and its requests get errConnLost
		}
		unwritten = unwritten[:0]
	}
	for i := range msgs {
		parts, perr := c.prepare(&msgs[i])
		switch {
		case perr != nil:
			out[i] = provider.Result{Err: perr}
			continue
		case len(parts) > 1:
			alone(i, func() provider.Result { return c.submitMessage(ctx, &msgs[i]) })
			continue
		}
		s, err := c.pick(ctx)
		if err != nil {
			out[i] = provider.Result{Err: transient(err)}
			continue
		}
		r, err := s.begin(ctx, pdu.SubmitSM, parts[0], callOpts{window: true}, write)
		if err != nil {
			c.then(ctx, i, parts[0], pdu.PDU{}, err, out, alone)
			continue
		}
		k := 0
		for k < len(unwritten) && unwritten[k].s != s {
			k++
		}
		if k == len(unwritten) {
			unwritten = append(unwritten, share{s: s})
		}
		unwritten[k].b = append(unwritten[k].b, r.encoded...)
		begun = append(begun, firstAttempt{i: i, sm: parts[0], s: s, r: r})
	}
	write()
	// One deadline for the requests written together, from their write.
	expired := make(chan time.Time)
	t := time.AfterFunc(c.cfg.RequestTimeout, func() { close(expired) })
	defer t.Stop()
	for _, a := range begun {
		resp, err := a.s.await(a.r, expired, nil)
		c.then(ctx, a.i, a.sm, resp, err, out, alone)
	}
}

// then settles message i of a batch on the outcome of its first attempt,
// or hands the attempts after it to alone.
func (c *Client) then(ctx context.Context, i int, sm *pdu.SM, resp pdu.PDU, err error, out []provider.Result, alone func(int, func() provider.Result)) {
	var a attempts
	id, perr, done := c.outcome(&a, resp, err)
	if !done {
		a.n = 1
		alone(i, func() provider.Result { return partResult(c.submitPartFrom(ctx, sm, a)) })
		return
	}
	out[i] = partResult(id, perr)
}

// partResult is the result of a message of one part.
func partResult(id string, perr *provider.Error) provider.Result {
	if perr != nil {
		return provider.Result{Err: perr}
	}
	return provider.Result{Ref: id, Parts: []string{id}}
}

func (c *Client) submitMessage(ctx context.Context, m *provider.Outbound) provider.Result {
	parts, perr := c.prepare(m)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	ids := make([]string, len(parts))
	for i, sm := range parts {
		id, perr := c.submitPart(ctx, sm)
		if perr != nil {
			if i > 0 {
				c.log.Warn("smpp: message failed after some of its parts were accepted",
					"message", m.ID, "accepted", ids[:i], "err", perr)
			}
			return provider.Result{Err: perr}
		}
		ids[i] = id
	}
	return provider.Result{Ref: ids[0], Parts: ids}
}

// prepare builds the submit_sm bodies of a message.
func (c *Client) prepare(m *provider.Outbound) ([]*pdu.SM, *provider.Error) {
	if m.Channel != "" && m.Channel != "SMS" {
		return nil, permanent(CodeRejected, "SMPP carries SMS, not %s", m.Channel)
	}
	dest, err := destAddress(m.To)
	if err != nil {
		return nil, permanent(CodeInvalidNumber, "%v", err)
	}
	from := m.From
	if from == "" {
		from = c.cfg.SourceAddr
	}
	ston, snpi, src, err := sourceAddress(from)
	if err != nil {
		return nil, permanent(CodeInvalidSender, "%v", err)
	}
	validity, perr := c.validity(m.ExpiresAt)
	if perr != nil {
		return nil, perr
	}
	encoded, err := c.encode(m)
	if err != nil {
		return nil, permanent(CodeRejected, "%v", err)
	}
	out := make([]*pdu.SM, len(encoded))
	for i, p := range encoded {
		out[i] = &pdu.SM{
			SourceTON: ston, SourceNPI: snpi, SourceAddr: src,
			DestTON: pdu.TONInternational, DestNPI: pdu.NPIISDN, DestAddr: dest,
			ESMClass:           p.ESMClass,
			ValidityPeriod:     validity,
			RegisteredDelivery: 1, // SMSC receipt on success and failure
			DataCoding:         p.DataCoding,
			ShortMessage:       p.Message,
		}
	}
	return out, nil
}

// encode cuts a message's text into parts, or keeps a part its sender
// cut whole, with the sender's header.
func (c *Client) encode(m *provider.Outbound) ([]pdu.EncodedPart, error) {
	if m.Content.UDH == "" {
		return pdu.EncodeText(m.Body, uint8(c.ref.Add(1)), c.cfg.GSMPacking)
	}
	udh, err := hex.DecodeString(m.Content.UDH)
	if err != nil || len(udh) == 0 || int(udh[0])+1 != len(udh) {
		return nil, fmt.Errorf("user data header %q is not a header", m.Content.UDH)
	}
	p, err := pdu.EncodeWithUDH(m.Body, udh, c.cfg.GSMPacking)
	if err != nil {
		return nil, err
	}
	return []pdu.EncodedPart{p}, nil
}

// submitPart sends one submit_sm until it is answered for good or ctx ends.
func (c *Client) submitPart(ctx context.Context, sm *pdu.SM) (string, *provider.Error) {
	return c.submitPartFrom(ctx, sm, attempts{})
}

// attempts is where a part's attempts stand: the next one's number, and
// the outcome of the one before.
type attempts struct {
	n       int
	last    *provider.Error
	lastErr error
}

// submitPartFrom makes a part's attempts from a.n on.
func (c *Client) submitPartFrom(ctx context.Context, sm *pdu.SM, a attempts) (string, *provider.Error) {
	for ; ; a.n++ {
		if a.n > 0 && !c.waitRetry(ctx, a.n, a.lastErr) {
			return "", a.last
		}
		s, err := c.pick(ctx)
		if err != nil {
			if a.last == nil {
				a.last = transient(err)
			}
			return "", a.last
		}
		resp, err := s.call(ctx, pdu.SubmitSM, sm, callOpts{window: true, bucket: c.bucket})
		if id, perr, done := c.outcome(&a, resp, err); done {
			return id, perr
		}
	}
}

// outcome judges the response to attempt a.n: done with the part's id or
// its error, or not done, with a noted for the attempt after it.
func (c *Client) outcome(a *attempts, resp pdu.PDU, err error) (string, *provider.Error, bool) {
	id, perr, retry := c.judge(resp, err)
	if !retry {
		if perr != nil && perr.Temporary && a.last != nil {
			perr = a.last // ctx ended: the error that kept us retrying says more
		}
		return id, perr, true
	}
	if errors.Is(err, errConnLost) || errors.Is(err, errTimeout) {
		c.resubmitted.Add(1)
	}
	a.last, a.lastErr = perr, err
	if err != nil {
		c.noteErr(err)
	}
	return "", nil, false
}

// waitRetry waits before attempt n. A request lost with its connection goes
// again at once the first time (another bind may be up); everything else
// backs off. False if the wait would outlast ctx.
func (c *Client) waitRetry(ctx context.Context, n int, lastErr error) bool {
	if n == 1 && (errors.Is(lastErr, errConnLost) || errors.Is(lastErr, errNotSent)) {
		return ctx.Err() == nil
	}
	d := c.backoff(n, c.cfg.RetryMin, c.cfg.RetryMax)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return false
	}
	return c.sleep(ctx, d)
}

// judge reads the outcome of one submit_sm: the message id, or an error
// and whether to try again.
func (c *Client) judge(resp pdu.PDU, err error) (string, *provider.Error, bool) {
	switch {
	case err == nil && resp.Command == pdu.SubmitSMResp && resp.Status == pdu.StatusOK:
		body, ok := resp.Body.(*pdu.SMResp)
		if !ok {
			return "", permanent(CodeProviderError, "submit_sm_resp without a body"), false
		}
		return body.MessageID, nil, false
	case err == nil:
		// An error status, in submit_sm_resp or generic_nack.
		if resp.Status == pdu.StatusThrottled {
			c.throttled.Add(1)
		}
		if resp.Status == pdu.StatusOK {
			return "", permanent(CodeProviderError, "SMSC answered submit_sm with %s", resp.Command), false
		}
		pe := statusError(resp.Status)
		return "", pe, pe.Temporary
	case errors.Is(err, errBadResponse):
		return "", permanent(CodeProviderError, "%v", err), false
	case errors.Is(err, pdu.ErrMalformed):
		return "", permanent(CodeRejected, "%v", err), false
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, errClosed):
		return "", transient(err), false
	}
	return "", transient(err), true
}

// validity is the validity_period for an expiry time; empty leaves the
// SMSC's default. A message already expired is not sent.
func (c *Client) validity(expires time.Time) (string, *provider.Error) {
	if expires.IsZero() {
		return "", nil
	}
	left := expires.Sub(c.clock.Now())
	if left <= 0 {
		return "", permanent(CodeExpired, "validity ended at %s, before submission", expires.UTC().Format(time.RFC3339))
	}
	if c.cfg.RelativeValidity {
		return relativeTime(left), nil
	}
	return absoluteTime(expires), nil
}

// absoluteTime formats t as "YYMMDDhhmmsstnnp" in UTC (§7.1.1): tenths of
// a second, then a zero quarter-hour offset and "+".
func absoluteTime(t time.Time) string {
	u := t.UTC()
	return fmt.Sprintf("%02d%02d%02d%02d%02d%02d%d00+", u.Year()%100, int(u.Month()), u.Day(),
		u.Hour(), u.Minute(), u.Second(), u.Nanosecond()/int(100*time.Millisecond))
}

// relativeTime formats d as "YYMMDDhhmmss000R" (§7.1.2), in days, hours,
// minutes and seconds, rounded up to a whole second.
func relativeTime(d time.Duration) string {
	d = min(d, maxRelativeValidity)
	secs := int64((d + time.Second - 1) / time.Second)
	return fmt.Sprintf("0000%02d%02d%02d%02d000R", secs/86400, secs/3600%24, secs/60%60, secs%60)
}

// destAddress checks a recipient: digits, country code first (a leading +
// is dropped). SMPP allows 20 digits.
func destAddress(to string) (string, error) {
	if len(to) > 0 && to[0] == '+' {
		to = to[1:]
	}
	if to == "" || len(to) > pdu.MaxAddr-1 || !allDigits(to) {
		return "", fmt.Errorf("recipient %q is not 1 to %d digits", to, pdu.MaxAddr-1)
	}
	return to, nil
}

// sourceAddress classifies a sender: digits are an international number
// (TON 1, NPI 1), anything else an alphanumeric sender ID (TON 5, NPI 0) of
// up to 11 printable ASCII characters with at least one letter (the most a
// handset shows). Empty leaves the choice to the SMSC.
func sourceAddress(from string) (ton, npi byte, addr string, err error) {
	switch {
	case from == "":
		return pdu.TONUnknown, pdu.NPIUnknown, "", nil
	case allDigits(from) || (from[0] == '+' && len(from) > 1 && allDigits(from[1:])):
		if from[0] == '+' {
			from = from[1:]
		}
		if len(from) > pdu.MaxAddr-1 {
			return 0, 0, "", fmt.Errorf("sender number %q is longer than %d digits", from, pdu.MaxAddr-1)
		}
		return pdu.TONInternational, pdu.NPIISDN, from, nil
	}
	if len(from) > 11 {
		return 0, 0, "", fmt.Errorf("alphanumeric sender %q is longer than 11 characters", from)
	}
	letters := 0
	for i := 0; i < len(from); i++ {
		ch := from[i]
		if ch < ' ' || ch > '~' {
			return 0, 0, "", fmt.Errorf("alphanumeric sender %q has a character outside printable ASCII", from)
		}
		if 'A' <= ch && ch <= 'Z' || 'a' <= ch && ch <= 'z' {
			letters++
		}
	}
	if letters == 0 {
		return 0, 0, "", fmt.Errorf("sender %q is neither a number nor an alphanumeric ID with a letter", from)
	}
	return pdu.TONAlphanumeric, pdu.NPIUnknown, from, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
