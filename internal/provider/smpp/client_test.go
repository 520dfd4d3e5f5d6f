package smpp

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/provider"
)

func outSMS(id, to, body string) provider.Outbound {
	return provider.Outbound{ID: id, Env: "live", To: to, Channel: "SMS", Body: body}
}

func submit(t *testing.T, c *Client, msgs ...provider.Outbound) []provider.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := c.Submit(ctx, msgs)
	if len(res) != len(msgs) {
		t.Fatalf("%d results for %d messages", len(res), len(msgs))
	}
	return res
}

func mustOK(t *testing.T, res []provider.Result) {
	t.Helper()
	for i, r := range res {
		if r.Err != nil || r.Ref == "" || len(r.Parts) == 0 || r.Parts[0] != r.Ref {
			t.Fatalf("result %d = %+v (err %v)", i, r, r.Err)
		}
	}
}

func TestBindAndUnbind(t *testing.T) {
	f := newFakeSMSC(t)
	c := started(t, testConfig(f.addr()), newSink())
	eventually(t, "bound", func() bool { return c.Health().Ready() })
	b := f.count(func(f *fakeSMSC) int { return len(f.binds) })
	if b != 1 {
		t.Fatalf("%d binds", b)
	}
	var got pdu.Bind
	f.set(func(f *fakeSMSC) { got = *f.binds[0] })
	want := pdu.Bind{SystemID: "msgsvc", Password: "secret", SystemType: "VMA", InterfaceVersion: 0x34}
	if got != want {
		t.Fatalf("bind = %+v", got)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := f.count(func(f *fakeSMSC) int { return f.unbinds }); n != 1 {
		t.Fatalf("%d unbinds on Close", n)
	}
	if h := c.Health(); h.BindsUp != 0 {
		t.Fatalf("after Close: %+v", h)
	}
	if r := c.Submit(context.Background(), []provider.Outbound{outSMS("m", "5511999990000", "x")}); r[0].Err == nil || !r[0].Err.Temporary {
		t.Fatalf("Submit after Close = %+v", r[0])
	}
}

func TestBindRefused(t *testing.T) {
	f := newFakeSMSC(t)
	f.set(func(f *fakeSMSC) { f.bindStatus = func(int) pdu.Status { return pdu.StatusInvPaswd } })
	c := started(t, testConfig(f.addr()), newSink())
	defer c.Close(context.Background())
	// It keeps trying, with backoff, and says why it is not ready.
	eventually(t, "three bind attempts", func() bool { return f.count(func(f *fakeSMSC) int { return len(f.binds) }) >= 3 })
	h := c.Health()
	if h.Ready() || !strings.Contains(h.LastError, "ESME_RINVPASWD") || h.LastErrorAt.IsZero() {
		t.Fatalf("health = %+v", h)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	r := c.Submit(ctx, []provider.Outbound{outSMS("m", "5511999990000", "hello")})
	if r[0].Err == nil || !r[0].Err.Temporary {
		t.Fatalf("Submit without a bind = %+v", r[0])
	}
	// Once the SMSC accepts the login, the client binds.
	f.set(func(f *fakeSMSC) { f.bindStatus = nil })
	eventually(t, "bound after the fix", func() bool { return c.Health().Ready() })
}

func TestCloseWakesWaitingSubmit(t *testing.T) {
	f := newFakeSMSC(t)
	f.set(func(f *fakeSMSC) { f.bindStatus = func(int) pdu.Status { return pdu.StatusBindFail } })
	c := started(t, testConfig(f.addr()), newSink())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan provider.Result, 1)
	go func() { done <- c.Submit(ctx, []provider.Outbound{outSMS("m", "5511999990000", "x")})[0] }()
	eventually(t, "bind attempts", func() bool { return f.count(func(f *fakeSMSC) int { return len(f.binds) }) >= 2 })
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var r provider.Result
	eventually(t, "Submit to return after Close", func() bool {
		select {
		case r = <-done:
			return true
		default:
			return false
		}
	})
	if r.Err == nil || !r.Err.Temporary || ctx.Err() != nil {
		t.Fatalf("result = %+v", r.Err)
	}
}

func TestSubmitFields(t *testing.T) {
	f := newFakeSMSC(t)
	clk := newFakeClock()
	c := startClient(t, testConfig(f.addr()), newSink(), WithClock(clk))
	expires := clk.Now().Add(72 * time.Hour)
	alnum := outSMS("a", "+5511999990000", "Olá ж")
	alnum.ExpiresAt = expires
	digits := outSMS("b", "5511999990001", "plain")
	digits.From = "+15550001111"
	mustOK(t, submit(t, c, alnum, digits))

	subs := f.submitList()
	if len(subs) != 2 {
		t.Fatalf("%d submits", len(subs))
	}
	bySrc := map[string]*pdu.SM{}
	for _, s := range subs {
		bySrc[s.sm.SourceAddr] = s.sm
	}
	a, b := bySrc["MyShop"], bySrc["15550001111"]
	if a == nil || b == nil {
		t.Fatalf("sources: %v", bySrc)
	}
	if a.SourceTON != 5 || a.SourceNPI != 0 || b.SourceTON != 1 || b.SourceNPI != 1 {
		t.Fatalf("source TON/NPI: alnum %d/%d, digits %d/%d", a.SourceTON, a.SourceNPI, b.SourceTON, b.SourceNPI)
	}
	for _, sm := range []*pdu.SM{a, b} {
		if sm.DestTON != 1 || sm.DestNPI != 1 || sm.RegisteredDelivery != 1 || sm.ESMClass != 0 {
			t.Fatalf("submit_sm = %+v", sm)
		}
	}
	if a.DestAddr != "5511999990000" || a.DataCoding != pdu.CodingUCS2 || a.ValidityPeriod != "261124100000000+" {
		t.Fatalf("UCS-2 submit_sm = %+v", a)
	}
	if b.DataCoding != pdu.CodingDefault || string(b.ShortMessage) != "plain" || b.ValidityPeriod != "" {
		t.Fatalf("GSM submit_sm = %+v", b)
	}
}

func TestSubmitRefusedBeforeSending(t *testing.T) {
	f := newFakeSMSC(t)
	clk := newFakeClock()
	c := startClient(t, testConfig(f.addr()), newSink(), WithClock(clk))
	expired := outSMS("e", "5511999990000", "late")
	expired.ExpiresAt = clk.Now().Add(-time.Second)
	badSender := outSMS("s", "5511999990000", "x")
	badSender.From = "TwelveLetter"
	rcs := outSMS("r", "5511999990000", "x")
	rcs.Channel = "RCS"
	res := submit(t, c, outSMS("n", "55-11", "x"), badSender, expired, rcs)
	for i, want := range []string{CodeInvalidNumber, CodeInvalidSender, CodeExpired, CodeRejected} {
		if res[i].Err == nil || res[i].Err.Code != want || res[i].Err.Temporary {
			t.Errorf("result %d = %+v; want %s", i, res[i].Err, want)
		}
	}
	if n := len(f.submitList()); n != 0 {
		t.Fatalf("%d submit_sm sent", n)
	}
}

func TestSubmitMultipart(t *testing.T) {
	f := newFakeSMSC(t)
	c := startClient(t, testConfig(f.addr()), newSink())
	text := strings.Repeat("Long message text, ", 20) // 380 septets: 3 parts
	res := submit(t, c, outSMS("m1", "5511999990000", text), outSMS("m2", "5511999990001", strings.Repeat("ж", 140)))
	mustOK(t, res)
	if len(res[0].Parts) != 3 || len(res[1].Parts) != 3 {
		t.Fatalf("parts: %v, %v", res[0].Parts, res[1].Parts)
	}
	subs := f.submitList()
	if len(subs) != 6 {
		t.Fatalf("%d submit_sm", len(subs))
	}
	type partKey struct {
		dest string
		seq  uint8
	}
	refs := map[string]map[uint16]bool{}
	got := map[partKey]bool{}
	var joined [2]strings.Builder
	for _, s := range subs {
		if s.sm.ESMClass != pdu.ESMClassUDHI {
			t.Fatalf("esm_class %#x", s.sm.ESMClass)
		}
		ci, n, _, err := pdu.SplitUDH(s.sm.ShortMessage)
		if err != nil || ci == nil || n != 6 || ci.Total != 3 {
			t.Fatalf("UDH %+v %v", ci, err)
		}
		if refs[s.sm.DestAddr] == nil {
			refs[s.sm.DestAddr] = map[uint16]bool{}
		}
		refs[s.sm.DestAddr][ci.Ref] = true
		got[partKey{s.sm.DestAddr, ci.Seq}] = true
	}
	for dest, rs := range refs {
		if len(rs) != 1 {
			t.Fatalf("%s: references %v; want one", dest, rs)
		}
	}
	if refs["5511999990000"] == nil || refs["5511999990001"] == nil {
		t.Fatalf("destinations %v", refs)
	}
	for ref0 := range refs["5511999990000"] {
		if refs["5511999990001"][ref0] {
			t.Fatal("two messages share a reference")
		}
	}
	for _, dest := range []string{"5511999990000", "5511999990001"} {
		for seq := uint8(1); seq <= 3; seq++ {
			if !got[partKey{dest, seq}] {
				t.Fatalf("%s: part %d missing", dest, seq)
			}
		}
	}
	// Parts of one message go in order, so Parts follows the SMSC's ids.
	for i, dest := range []string{"5511999990000", "5511999990001"} {
		seq := uint8(0)
		for _, s := range subs {
			if s.sm.DestAddr != dest {
				continue
			}
			ci, _, rest, _ := pdu.SplitUDH(s.sm.ShortMessage)
			if ci.Seq != seq+1 {
				t.Fatalf("%s: part %d after part %d", dest, ci.Seq, seq)
			}
			seq = ci.Seq
			joined[i].WriteString(pdu.DecodeUserData(s.sm.DataCoding, rest, 0, pdu.Unpacked))
		}
	}
	if joined[0].String() != text || joined[1].String() != strings.Repeat("ж", 140) {
		t.Fatal("parts do not rejoin to the texts")
	}
}

func TestSubmitSeveralBinds(t *testing.T) {
	f := newFakeSMSC(t)
	cfg := testConfig(f.addr())
	cfg.Binds = 3
	c := startClient(t, cfg, newSink())
	var msgs []provider.Outbound
	for i := range 9 {
		msgs = append(msgs, outSMS("m", "551199999000"+string(rune('0'+i)), "hi"))
	}
	mustOK(t, submit(t, c, msgs...))
	per := map[int]int{}
	for _, s := range f.submitList() {
		per[s.conn]++
	}
	if len(per) != 3 {
		t.Fatalf("submits per connection: %v; want all 3 binds used", per)
	}
	for conn, n := range per {
		if n != 3 {
			t.Fatalf("submits per connection: %v (conn %d); want round-robin", per, conn)
		}
	}
}

// The connection is cut while six requests are in the window, three of them
// answered. The three answered ones must never be sent again; the three
// unanswered ones must be sent again after the reconnect.
func TestConnectionCutMidWindow(t *testing.T) {
	f := newFakeSMSC(t)
	f.set(func(f *fakeSMSC) {
		f.onSubmit = func(fc *fakeConn, p pdu.PDU, n int) bool {
			if fc.idx != 0 {
				return false
			}
			onFirst := 0
			for _, s := range f.submitList() {
				if s.conn == 0 {
					onFirst++
				}
			}
			if onFirst <= 3 {
				return false // answered
			}
			if onFirst == 6 {
				_ = fc.c.Close()
			}
			return true // never answered
		}
	})
	c := startClient(t, testConfig(f.addr()), newSink())
	var msgs []provider.Outbound
	for i := range 6 {
		msgs = append(msgs, outSMS("m", "5511999990000", "message "+string(rune('A'+i))))
	}
	res := submit(t, c, msgs...)
	mustOK(t, res)

	seen := map[string][]int{}
	for _, s := range f.submitList() {
		seen[string(s.sm.ShortMessage)] = append(seen[string(s.sm.ShortMessage)], s.conn)
	}
	answered, resent := 0, 0
	for body, conns := range seen {
		switch {
		case len(conns) == 1 && conns[0] == 0:
			answered++
		case len(conns) == 2 && conns[0] == 0 && conns[1] > 0:
			resent++
		default:
			t.Fatalf("%q went over connections %v", body, conns)
		}
	}
	if answered != 3 || resent != 3 {
		t.Fatalf("answered %d, resent %d: %v", answered, resent, seen)
	}
	if h := c.Health(); h.Resubmitted != 3 || h.BindsUp != 1 {
		t.Fatalf("health = %+v", h)
	}
}

func TestSlowSMSCTimesOutAndRetries(t *testing.T) {
	f := newFakeSMSC(t)
	f.set(func(f *fakeSMSC) {
		f.onSubmit = func(fc *fakeConn, p pdu.PDU, n int) bool { return n == 1 } // the first is never answered
	})
	cfg := testConfig(f.addr())
	cfg.RequestTimeout = 250 * time.Millisecond
	c := startClient(t, cfg, newSink())
	mustOK(t, submit(t, c, outSMS("m", "5511999990000", "hello")))
	// Normally two; a machine slow enough to miss the timeout on an answered
	// one sends more, each counted.
	n := len(f.submitList())
	if h := c.Health(); n < 2 || h.Resubmitted != uint64(n-1) || h.WindowInUse != 0 {
		t.Fatalf("%d submit_sm, health %+v; want the timed-out one sent again", n, h)
	}
}

func TestThrottledThenAccepted(t *testing.T) {
	f := newFakeSMSC(t)
	f.set(func(f *fakeSMSC) {
		f.onSubmit = func(fc *fakeConn, p pdu.PDU, n int) bool {
			if n > 2 {
				return false
			}
			fc.send(pdu.PDU{Command: pdu.SubmitSMResp, Status: pdu.StatusThrottled, Seq: p.Seq})
			return true
		}
	})
	c := startClient(t, testConfig(f.addr()), newSink())
	res := submit(t, c, outSMS("m", "5511999990000", "hello"))
	mustOK(t, res)
	if n := len(f.submitList()); n != 3 {
		t.Fatalf("%d submit_sm", n)
	}
	if h := c.Health(); h.Throttled != 2 {
		t.Fatalf("health = %+v", h)
	}
}

func TestPermanentAndLastingErrors(t *testing.T) {
	f := newFakeSMSC(t)
	f.set(func(f *fakeSMSC) {
		f.onSubmit = func(fc *fakeConn, p pdu.PDU, n int) bool {
			st := pdu.StatusMsgQFul
			if p.Body.(*pdu.SM).DestAddr == "5511999990009" {
				st = pdu.StatusInvDstAdr
			}
			fc.send(pdu.PDU{Command: pdu.SubmitSMResp, Status: st, Seq: p.Seq})
			return true
		}
	})
	c := startClient(t, testConfig(f.addr()), newSink())
	res := submit(t, c, outSMS("m", "5511999990009", "hello"))
	if e := res[0].Err; e == nil || e.Code != CodeInvalidNumber || e.Temporary || !strings.Contains(e.Message, "ESME_RINVDSTADR") {
		t.Fatalf("result = %+v", e)
	}
	if n := len(f.submitList()); n != 1 {
		t.Fatalf("a permanent error was retried: %d submit_sm", n)
	}
	// A queue that stays full: retried until the deadline, then temporary.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res = c.Submit(ctx, []provider.Outbound{outSMS("m", "5511999990000", "hello")})
	if e := res[0].Err; e == nil || !e.Temporary || !strings.Contains(e.Message, "ESME_RMSGQFUL") {
		t.Fatalf("result = %+v", e)
	}
	if n := len(f.submitList()); n < 3 {
		t.Fatalf("only %d submit_sm: not retried", n)
	}
}

func TestStatusErrorTable(t *testing.T) {
	cases := []struct {
		st        pdu.Status
		code      string
		temporary bool
	}{
		{pdu.StatusThrottled, CodeProviderError, true},
		{pdu.StatusMsgQFul, CodeProviderError, true},
		{pdu.StatusSysErr, CodeProviderError, true},
		{pdu.StatusXTAppn, CodeProviderError, true},
		{pdu.StatusInvBndSts, CodeProviderError, true},
		{pdu.StatusInvDstAdr, CodeInvalidNumber, false},
		{pdu.StatusInvDstTON, CodeInvalidNumber, false},
		{pdu.StatusInvSrcAdr, CodeInvalidSender, false},
		{pdu.StatusInvSrcNPI, CodeInvalidSender, false},
		{pdu.StatusXRAppn, CodeRejected, false},
		{pdu.StatusInvMsgLen, CodeRejected, false},
		{pdu.StatusInvExpiry, CodeRejected, false},
		{pdu.StatusSubmitFail, CodeProviderError, false},
		{pdu.Status(0x400), CodeProviderError, false},
	}
	for _, c := range cases {
		e := statusError(c.st)
		if e.Code != c.code || e.Temporary != c.temporary {
			t.Errorf("%v -> %+v", c.st, e)
		}
	}
}

func TestReceiptBeforeResponse(t *testing.T) {
	f := newFakeSMSC(t)
	sink := newSink()
	sink.FailStatuses(1)
	var dlrSeq, retrySeq atomic.Uint32
	f.set(func(f *fakeSMSC) {
		f.onSubmit = func(fc *fakeConn, p pdu.PDU, n int) bool {
			// Off the fake's read loop, which must go on reading responses.
			go func() {
				dlr := &pdu.SM{SourceAddr: "5511999990000", DestAddr: "MyShop", ESMClass: pdu.ESMClassReceipt,
					ShortMessage: []byte("id:M77 sub:001 dlvrd:001 submit date:2611211000 done date:2611211000 stat:DELIVRD err:000 text:hello"),
					TLVs:         pdu.TLVs{pdu.StringTLV(pdu.TagReceiptedMessageID, "M77"), pdu.ByteTLV(pdu.TagMessageState, byte(pdu.StateDelivered))}}
				answered := func(seq uint32) bool {
					for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
						if _, ok := f.respTo(pdu.DeliverSMResp, seq); ok {
							return true
						}
					}
					return false
				}
				// The Sink fails the first time: the SMSC must be told to retry.
				dlrSeq.Store(fc.request(pdu.DeliverSM, dlr))
				if !answered(dlrSeq.Load()) {
					return
				}
				retrySeq.Store(fc.request(pdu.DeliverSM, dlr))
				if !answered(retrySeq.Load()) {
					return
				}
				fc.send(pdu.PDU{Command: pdu.SubmitSMResp, Seq: p.Seq, Body: &pdu.SMResp{MessageID: "M77"}})
			}()
			return true
		}
	})
	c := startClient(t, testConfig(f.addr()), sink)
	res := submit(t, c, outSMS("m", "5511999990000", "hello"))
	mustOK(t, res)
	if res[0].Ref != "M77" {
		t.Fatalf("ref %q", res[0].Ref)
	}
	first, _ := f.respTo(pdu.DeliverSMResp, dlrSeq.Load())
	second, _ := f.respTo(pdu.DeliverSMResp, retrySeq.Load())
	if first.Status != pdu.StatusXTAppn || second.Status != pdu.StatusOK {
		t.Fatalf("deliver_sm_resp statuses %v, %v", first.Status, second.Status)
	}
	statuses, _ := sink.Got()
	if len(statuses) != 1 || statuses[0].Ref != "M77" || statuses[0].Status != "DELIVERED" || statuses[0].At.IsZero() {
		t.Fatalf("statuses = %+v", statuses)
	}
}

func TestReceiptsMapped(t *testing.T) {
	f := newFakeSMSC(t)
	sink := newSink()
	c := startClient(t, testConfig(f.addr()), sink)
	_ = c
	fc := f.conn(0)
	var seqs []uint32
	for _, text := range []string{
		"id:A1 sub:001 dlvrd:000 submit date:2611211000 done date:2611211000 stat:UNDELIV err:034 text:x",
		"id:A2 sub:001 dlvrd:000 submit date:2611211000 done date:2611211000 stat:ENROUTE err:000 text:x",
		"id:A3 sub:001 dlvrd:000 submit date:2611211000 done date:2611211000 stat:EXPIRED err:000 text:x",
		"garbage without an id",
	} {
		seqs = append(seqs, fc.request(pdu.DeliverSM, &pdu.SM{SourceAddr: "1", DestAddr: "2", ESMClass: pdu.ESMClassReceipt, ShortMessage: []byte(text)}))
	}
	for _, seq := range seqs {
		eventually(t, "deliver_sm_resp", func() bool { p, ok := f.respTo(pdu.DeliverSMResp, seq); return ok && p.Status == pdu.StatusOK })
	}
	statuses, _ := sink.Got()
	got := map[string]provider.Status{}
	for _, s := range statuses {
		got[s.Ref] = s
	}
	if len(statuses) != 2 || got["A1"].ErrorCode != "UNDELIVERED" || got["A1"].Status != "FAILED" ||
		got["A3"].ErrorCode != "EXPIRED" {
		t.Fatalf("statuses = %+v", statuses)
	}
}

func TestGarbageFromSMSC(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  []byte
	}{
		{"huge length", []byte{0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 5}},
		{"just over the cap", binary.BigEndian.AppendUint32(nil, pdu.MaxPDULen+1)},
		{"shorter than a header", []byte{0, 0, 0, 8, 0, 0, 0, 0x15, 0, 0, 0, 0}},
		{"text", []byte("HTTP/1.1 400 Bad Request\r\n\r\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSMSC(t)
			c := startClient(t, testConfig(f.addr()), newSink())
			f.conn(0).sendRaw(tc.raw)
			eventually(t, "a second bind", func() bool { return f.count(func(f *fakeSMSC) int { return len(f.binds) }) == 2 })
			eventually(t, "bound again", func() bool { return c.Health().Ready() })
			if h := c.Health(); !strings.Contains(h.LastError, "read") {
				t.Fatalf("health = %+v", h)
			}
			mustOK(t, submit(t, c, outSMS("m", "5511999990000", "still works")))
		})
	}
}

func TestMalformedRequestIsNacked(t *testing.T) {
	f := newFakeSMSC(t)
	c := startClient(t, testConfig(f.addr()), newSink())
	fc := f.conn(0)
	// A deliver_sm framed correctly whose sm_length runs past the end, and a
	// command the client does not know.
	bad := mustEncode(t, pdu.PDU{Command: pdu.DeliverSM, Seq: 4242, Body: &pdu.SM{SourceAddr: "1", DestAddr: "2", ShortMessage: []byte("ab")}})
	bad[len(bad)-3] = 9
	fc.sendRaw(bad)
	seq := fc.request(0x00000103, &pdu.Raw{Data: []byte{1}})
	eventually(t, "two generic_nack", func() bool {
		a, ok1 := f.respTo(pdu.GenericNack, 4242)
		b, ok2 := f.respTo(pdu.GenericNack, seq)
		return ok1 && ok2 && a.Status == pdu.StatusInvCmdLen && b.Status == pdu.StatusInvCmdID
	})
	if n := f.count(func(f *fakeSMSC) int { return len(f.binds) }); n != 1 || !c.Health().Ready() {
		t.Fatalf("the connection was dropped (%d binds)", n)
	}
}

func TestEnquireLinkBothWays(t *testing.T) {
	f := newFakeSMSC(t)
	cfg := testConfig(f.addr())
	cfg.EnquireLinkInterval = 30 * time.Millisecond
	cfg.RequestTimeout = 200 * time.Millisecond
	c := startClient(t, cfg, newSink())
	// The client checks an idle link.
	eventually(t, "enquire_link from the client", func() bool { return f.count(func(f *fakeSMSC) int { return f.enquires }) >= 2 })
	// The client answers the SMSC's.
	seq := f.conn(0).request(pdu.EnquireLink, nil)
	eventually(t, "enquire_link_resp", func() bool { p, ok := f.respTo(pdu.EnquireLinkResp, seq); return ok && p.Status == pdu.StatusOK })
	// An SMSC that stops answering is dropped and bound again.
	f.set(func(f *fakeSMSC) { f.ignoreEnquire = true })
	eventually(t, "a new bind", func() bool { return f.count(func(f *fakeSMSC) int { return len(f.binds) }) >= 2 })
	f.set(func(f *fakeSMSC) { f.ignoreEnquire = false })
	eventually(t, "bound again", func() bool { return c.Health().Ready() })
	if h := c.Health(); !strings.Contains(h.LastError, "enquire_link") {
		t.Fatalf("health = %+v", h)
	}
}

func TestTPSCap(t *testing.T) {
	f := newFakeSMSC(t)
	clk := newFakeClock()
	cfg := testConfig(f.addr())
	cfg.TPS = 5 // one submit_sm per 200 ms
	cfg.Window = 20
	c := startClient(t, cfg, newSink(), WithClock(clk))
	const n = 5
	done := make(chan []provider.Result, 1)
	go func() {
		msgs := make([]provider.Outbound, n)
		for i := range msgs {
			msgs[i] = outSMS("m", "5511999990000", "hi")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- c.Submit(ctx, msgs)
	}()
	sent := func() int { return len(f.submitList()) }
	const tick = 200 * time.Millisecond
	for want := 1; want <= n; want++ {
		// Exactly one more submit_sm per interval: the rest wait for tokens
		// at distinct instants within the next (n-want) intervals.
		eventually(t, "submits and waiters", func() bool {
			return sent() == want && clk.waiting(time.Duration(n-want)*tick) == n-want
		})
		if got := sent(); got != want {
			t.Fatalf("after %d intervals: %d submit_sm", want-1, got)
		}
		clk.Advance(tick)
	}
	for _, r := range <-done {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
}

// An SMSC may send a message's receipt right behind the answer to its
// submit_sm, before Submit has returned and the hand-over is recorded. The
// client announces the SMSC's id to its Sink as it reads the answer, so the
// announcement always comes before the receipt it might otherwise race.
func TestAnswerAnnouncedBeforeItsReceipt(t *testing.T) {
	f := newFakeSMSC(t)
	sink := newSink()
	f.set(func(f *fakeSMSC) {
		f.onSubmit = func(fc *fakeConn, p pdu.PDU, n int) bool {
			id := fmt.Sprintf("R%d", n)
			fc.send(pdu.PDU{Command: pdu.SubmitSMResp, Seq: p.Seq, Body: &pdu.SMResp{MessageID: id}})
			fc.request(pdu.DeliverSM, &pdu.SM{SourceAddr: "5511999990000", DestAddr: "MyShop", ESMClass: pdu.ESMClassReceipt,
				ShortMessage: []byte("id:" + id + " sub:001 dlvrd:001 submit date:2611211000 done date:2611211000 stat:DELIVRD err:000 text:x")})
			return true
		}
	})
	c := startClient(t, testConfig(f.addr()), sink)
	for i := 0; i < 20; i++ {
		mustOK(t, submit(t, c, outSMS(fmt.Sprintf("m%d", i), "5511999990000", "hello")))
	}
	eventually(t, "every receipt", func() bool { sts, _ := sink.Got(); return len(sts) == 20 })
	first := map[string]string{}
	for _, e := range sink.Log() {
		kind, ref, _ := strings.Cut(e, " ")
		if _, ok := first[ref]; !ok {
			first[ref] = kind
		}
	}
	for i := 1; i <= 20; i++ {
		if ref := fmt.Sprintf("R%d", i); first[ref] != "expect" {
			t.Fatalf("for %s the sink heard %q first, want its announcement (log %v)", ref, first[ref], sink.Log())
		}
	}
}
