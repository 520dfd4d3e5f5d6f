package app

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/nodetest"
	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/smppserver/esmetest"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// smppEnv is a node with the SMPP server on.
func smppEnv(t *testing.T, dialect string) *env {
	t.Helper()
	return newEnv(t, dialect, envOptions{poll: 50 * time.Millisecond, config: func(c *config.Config) {
		c.SMPPListen = "127.0.0.1:0"
	}})
}

// smppUser makes an SMPP user of account and returns its system_id and
// password.
func (e *env) smppUser(account, env, systemID string) (string, string) {
	e.t.Helper()
	u, pw, err := console(e.st, e.clock.Now()).CreateSMPPUser(context.Background(), manage.Console, account,
		manage.NewSMPPUser{Environment: env, SystemID: systemID})
	if err != nil {
		e.t.Fatal(err)
	}
	return u.SystemID, pw
}

// dialBound dials the node's SMPP server and binds in mode as sys; a bind
// the server refuses fails the test.
func (e *env) dialBound(mode pdu.CommandID, sys, pw string) *esmetest.ESME {
	e.t.Helper()
	c := esmetest.Dial(e.t, e.srv.SMPPAddr(), nil)
	if st := c.Bind(mode, sys, pw); st != pdu.StatusOK {
		e.t.Fatalf("bind: %s", st)
	}
	return c
}

var receiptText = regexp.MustCompile(`^id:(msg_[0-9a-z]{26}) sub:001 dlvrd:001 submit date:\d{10} done date:\d{10} ` +
	`stat:DELIVRD err:000 text:Hello over SMPP$`)

// A customer sends over SMPP as over the API: one id everywhere, and the
// receipt comes back as deliver_sm with the standard text and TLVs.
func TestSMPPSubmitAndReceipt(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := smppEnv(t, d)
		sys, pw := e.smppUser(e.account.ID, "test", "acme")
		c := e.dialBound(pdu.BindTransceiver, sys, pw)
		r := c.Submit("", "5511999990000", "Hello over SMPP", 1)
		id := ""
		if b, ok := r.Body.(*pdu.SMResp); ok {
			id = b.MessageID
		}
		if r.Status != pdu.StatusOK || !regexp.MustCompile(`^msg_[0-9a-z]{26}$`).MatchString(id) {
			t.Fatalf("submit_sm_resp: %s %q", r.Status, id)
		}
		if m := e.do("GET", "/api/v1/integration/messages/"+id, e.testKey, nil); m.status != 200 {
			t.Fatalf("the message by its SMPP id: %d %s", m.status, m.body)
		}
		dl := c.WaitDelivered(1)[0]
		sm := dl.Body.(*pdu.SM)
		got := receiptText.FindStringSubmatch(pdu.DecodeText(sm.DataCoding, sm.ShortMessage))
		rid, _ := sm.TLVs.CString(pdu.TagReceiptedMessageID)
		state, _ := sm.TLVs.Byte(pdu.TagMessageState)
		if got == nil || got[1] != id || sm.ESMClass != 0x04 || rid != id || state != 2 || sm.SourceAddr != "5511999990000" {
			t.Fatalf("receipt: esm_class %#x %q receipted %q state %d", sm.ESMClass, sm.ShortMessage, rid, state)
		}
		// Acknowledged: never again, and nothing left waiting.
		polltest.For(t, "the acknowledged receipt leaves the table", 10*time.Second, func() bool {
			n, err := e.st.PendingSMPPItems(context.Background())
			return err == nil && n == 0
		})
		// Without registered_delivery no receipt is queued.
		if r := c.Submit("", "5511999990001", "no receipt please", 0); r.Status != pdu.StatusOK {
			t.Fatalf("second submit: %s", r.Status)
		}
		// One part of a message the customer split: one segment, its
		// header kept for the carrier.
		part := append([]byte{5, 0, 3, 9, 2, 1}, strings.Repeat("p", 153)...)
		pr := c.Call(pdu.SubmitSM, &pdu.SM{DestAddr: "5511999990000", ESMClass: pdu.ESMClassUDHI, ShortMessage: part})
		if pr.Status != pdu.StatusOK {
			t.Fatalf("UDH part: %s", pr.Status)
		}
		pm, err := e.st.MessageByID(context.Background(), pr.Body.(*pdu.SMResp).MessageID)
		if err != nil || pm.Segments != 1 || pm.Content.UDH != "050003090201" || pm.Body != strings.Repeat("p", 153) {
			t.Fatalf("UDH part stored as %d segments, header %q, %v", pm.Segments, pm.Content.UDH, err)
		}
		r = c.Submit("", "5511999990010", "Hello over SMPP", 1)
		c.WaitDelivered(2)
		polltest.For(t, "the metrics count the binds, submits and acknowledged receipts", 10*time.Second, func() bool {
			metrics := string(e.do("GET", "/metrics", "", nil).body)
			for _, m := range []string{"msgsvc_smpp_binds 1", `msgsvc_smpp_submits_total{status="ESME_ROK"} 4`,
				`msgsvc_smpp_deliver_sm_total{outcome="acknowledged"} 2`, "msgsvc_smpp_receipts_waiting 0"} {
				if !strings.Contains(metrics, m) {
					return false
				}
			}
			return true
		})
		if rid, _ := c.Delivered[1].Body.(*pdu.SM).TLVs.CString(pdu.TagReceiptedMessageID); rid != r.Body.(*pdu.SMResp).MessageID {
			t.Fatalf("the second receipt is of %s, want the third submit's %s", rid, r.Body.(*pdu.SMResp).MessageID)
		}
	})
}

// Every refusal of a bind and a submit as it comes over the wire, and a second
// account that can neither bind as the first nor send as its sender.
func TestSMPPRefusals(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := smppEnv(t, d)
		ctx := context.Background()
		if _, err := console(e.st, e.clock.Now()).AddSender(ctx, manage.Console, e.account.ID,
			manage.NewSender{Channel: "SMS", Value: "ACME"}); err != nil {
			t.Fatal(err)
		}
		sysA, pwA := e.smppUser(e.account.ID, "test", "acme")
		other, _ := otherAccount(t, e)
		sysB, pwB := e.smppUser(other.ID, "live", "other")
		addr := e.srv.SMPPAddr()

		c := esmetest.Dial(t, addr, nil)
		if r := c.Submit("", "5511999990000", "too early", 0); r.Status != pdu.StatusInvBndSts {
			t.Fatalf("submit before bind: %s", r.Status)
		}
		for _, cmd := range []pdu.CommandID{pdu.EnquireLink, pdu.Unbind, pdu.QuerySM} {
			body := pdu.Body(nil)
			if cmd == pdu.QuerySM {
				body = &pdu.Query{MessageID: "msg_x"}
			}
			if r := c.Call(cmd, body); r.Command != cmd.Resp() || r.Status != pdu.StatusInvBndSts {
				t.Fatalf("%s before bind: %s %s", cmd, r.Command, r.Status)
			}
		}
		for _, b := range []struct{ sys, pw string }{{sysA, "wrong"}, {"nobody", pwA}, {sysA, pwB}, {sysB, pwA}} {
			if st := c.Bind(pdu.BindTransceiver, b.sys, b.pw); st != pdu.StatusBindFail {
				t.Fatalf("bind %s/%s: %s, want ESME_RBINDFAIL", b.sys, b.pw, st)
			}
		}
		if st := c.Bind(pdu.BindTransmitter, sysA, pwA); st != pdu.StatusOK {
			t.Fatalf("bind_transmitter: %s", st)
		}
		if st := c.Bind(pdu.BindTransmitter, sysA, pwA); st != pdu.StatusAlyBnd {
			t.Fatalf("second bind on a session: %s", st)
		}
		if r := c.Call(pdu.CommandID(0x00000099), &pdu.Raw{}); r.Command != pdu.GenericNack || r.Status != pdu.StatusInvCmdID {
			t.Fatalf("unknown command: %s %s", r.Command, r.Status)
		}
		if r := c.Call(pdu.EnquireLink, nil); r.Command != pdu.EnquireLinkResp || r.Status != pdu.StatusOK {
			t.Fatalf("enquire_link: %s %s", r.Command, r.Status)
		}
		if r := c.Submit("", "123", "bad number", 0); r.Status != pdu.StatusInvDstAdr {
			t.Fatalf("invalid destination: %s", r.Status)
		}
		if r := c.Submit("NOTOURS", "5511999990000", "bad sender", 0); r.Status != pdu.StatusInvSrcAdr {
			t.Fatalf("unapproved sender: %s", r.Status)
		}
		if r := c.Submit("ACME", "5511999990000", "our sender", 0); r.Status != pdu.StatusOK {
			t.Fatalf("approved sender: %s", r.Status)
		}
		if _, _, err := console(e.st, e.clock.Now()).AddOptOut(ctx, manage.Console, e.account.ID, "test", "5511999990010"); err != nil {
			t.Fatal(err)
		}
		if r := c.Submit("", "5511999990010", "to an opted-out number", 0); r.Status != pdu.StatusSubmitFail {
			t.Fatalf("opted-out recipient: %s, want ESME_RSUBMITFAIL", r.Status)
		}
		if r := c.Call(pdu.Unbind, nil); r.Command != pdu.UnbindResp || r.Status != pdu.StatusOK {
			t.Fatalf("unbind: %s %s", r.Command, r.Status)
		}

		// Account B: its bind cannot send as A's approved sender, and with
		// no credits its live sends are refused.
		b := esmetest.Dial(t, addr, nil)
		if st := b.Bind(pdu.BindTransceiver, sysB, pwB); st != pdu.StatusOK {
			t.Fatalf("bind of B: %s", st)
		}
		if r := b.Submit("ACME", "5511999990000", "as A", 0); r.Status != pdu.StatusInvSrcAdr {
			t.Fatalf("B as A's sender: %s, want ESME_RINVSRCADR", r.Status)
		}
		if r := b.Submit("", "5511999990000", "no credits", 0); r.Status != pdu.StatusSubmitFail {
			t.Fatalf("B without credits: %s, want ESME_RSUBMITFAIL", r.Status)
		}

		// A receiver bind cannot submit.
		rx := esmetest.Dial(t, addr, nil)
		if st := rx.Bind(pdu.BindReceiver, sysA, pwA); st != pdu.StatusOK {
			t.Fatalf("bind_receiver: %s", st)
		}
		if r := rx.Submit("", "5511999990000", "from a receiver", 0); r.Status != pdu.StatusInvBndSts {
			t.Fatalf("submit on a receiver: %s", r.Status)
		}
	})
}

// B's receiving bind never sees A's receipts, and A's binds see them all.
func TestSMPPReceiptsStayInTheirAccount(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := smppEnv(t, d)
		sysA, pwA := e.smppUser(e.account.ID, "test", "acme")
		other, _ := otherAccount(t, e)
		sysB, pwB := e.smppUser(other.ID, "test", "other")
		addr := e.srv.SMPPAddr()
		b := esmetest.Dial(t, addr, nil)
		if st := b.Bind(pdu.BindReceiver, sysB, pwB); st != pdu.StatusOK {
			t.Fatalf("bind of B: %s", st)
		}
		tx := esmetest.Dial(t, addr, nil)
		if st := tx.Bind(pdu.BindTransmitter, sysA, pwA); st != pdu.StatusOK {
			t.Fatalf("bind of A: %s", st)
		}
		for i := 0; i < 3; i++ {
			if r := tx.Submit("", "5511999990000", "Hello over SMPP", 1); r.Status != pdu.StatusOK {
				t.Fatalf("submit: %s", r.Status)
			}
		}
		// A's receipts wait for a receiving bind of A: B's bind is no such.
		polltest.For(t, "A's three receipts are queued", 10*time.Second, func() bool {
			n, err := e.st.PendingSMPPItems(context.Background())
			return err == nil && n == 3
		})
		rx := esmetest.Dial(t, addr, nil)
		if st := rx.Bind(pdu.BindReceiver, sysA, pwA); st != pdu.StatusOK {
			t.Fatalf("receiver of A: %s", st)
		}
		rx.WaitDelivered(3)
		if r := b.Call(pdu.EnquireLink, nil); r.Status != pdu.StatusOK || len(b.Delivered) != 0 {
			t.Fatalf("B's bind got %d deliver_sm", len(b.Delivered))
		}
	})
}

// Receipts not acknowledged when the node stops are sent after it starts
// again, oldest first, and none twice once acknowledged.
func TestSMPPReceiptsSurviveARestart(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := smppEnv(t, d)
		sys, pw := e.smppUser(e.account.ID, "test", "acme")
		c := esmetest.Dial(t, e.srv.SMPPAddr(), nil)
		c.AutoAck = false
		if st := c.Bind(pdu.BindTransceiver, sys, pw); st != pdu.StatusOK {
			t.Fatalf("bind: %s", st)
		}
		var ids []string
		for i := 0; i < 3; i++ {
			r := c.Submit("", "5511999990000", "Hello over SMPP", 1)
			if r.Status != pdu.StatusOK {
				t.Fatalf("submit: %s", r.Status)
			}
			ids = append(ids, r.Body.(*pdu.SMResp).MessageID)
		}
		// The first receipt is acknowledged, the others read and left
		// unanswered when the customer and then the node go away.
		first := c.WaitDelivered(1)[0]
		c.Write(pdu.PDU{Command: pdu.DeliverSMResp, Seq: first.Seq, Body: &pdu.SMResp{}})
		c.WaitDelivered(3)
		acked, _ := first.Body.(*pdu.SM).TLVs.CString(pdu.TagReceiptedMessageID)
		polltest.For(t, "the acknowledged receipt leaves the table", 10*time.Second, func() bool {
			n, err := e.st.PendingSMPPItems(context.Background())
			return err == nil && n == 2
		})
		c.Conn.Close()
		cfg := e.srv.cfg
		e.stop()

		srv, err := NewServer(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)),
			Options{Now: e.clock.Now, Poll: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("second run: %v", err)
			}
		}()
		again := esmetest.Dial(t, srv.SMPPAddr(), nil)
		if st := again.Bind(pdu.BindReceiver, sys, pw); st != pdu.StatusOK {
			t.Fatalf("bind after restart: %s", st)
		}
		got := again.WaitDelivered(2)
		var rids []string
		for _, p := range got {
			rid, _ := p.Body.(*pdu.SM).TLVs.CString(pdu.TagReceiptedMessageID)
			rids = append(rids, rid)
		}
		want := []string{}
		for _, id := range ids {
			if id != acked {
				want = append(want, id)
			}
		}
		// Receipts go oldest receipt first, which is not always the order
		// the messages were submitted in.
		slices.Sort(rids)
		slices.Sort(want)
		if len(rids) != 2 || !slices.Equal(rids, want) {
			t.Fatalf("after restart: receipts of %v, want those of %v (acknowledged before: %s)", rids, want, acked)
		}
		polltest.For(t, "nothing left waiting", 10*time.Second, func() bool {
			n, err := srv.Store().PendingSMPPItems(context.Background())
			return err == nil && n == 0
		})
	})
}

// A removed user's binds are closed at once and it binds no more.
func TestSMPPUserRemovalClosesBinds(t *testing.T) {
	e := smppEnv(t, "sqlite")
	sys, pw := e.smppUser(e.account.ID, "test", "acme")
	c := e.dialBound(pdu.BindTransceiver, sys, pw)
	users, err := e.st.SMPPUsers(context.Background(), e.account.ID)
	if err != nil || len(users) != 1 {
		t.Fatal(err)
	}
	dev := e.member("developer")
	if r := e.mg("DELETE", "/api/v1/manage/smpp-users/"+users[0].ID, dev, nil); r.status != 204 {
		t.Fatalf("remove: %d %s", r.status, r.body)
	}
	for {
		if _, err := c.Read(); err != nil {
			break // closed by the server
		}
	}
	if st := esmetest.Dial(t, e.srv.SMPPAddr(), nil).Bind(pdu.BindTransceiver, sys, pw); st != pdu.StatusBindFail {
		t.Fatalf("bind of a removed user: %s", st)
	}
}

// Replies go as deliver_sm to the user that sent the message they answer,
// else to any receiving bind of the account, never to another account's.
func TestSMPPReplies(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := smppEnv(t, d)
		sys1, pw1 := e.smppUser(e.account.ID, "test", "acme")
		sys2, pw2 := e.smppUser(e.account.ID, "test", "acme2")
		other, otherKey := otherAccount(t, e)
		sysB, pwB := e.smppUser(other.ID, "test", "other")
		addr := e.srv.SMPPAddr()
		one, two, b := esmetest.Dial(t, addr, nil), esmetest.Dial(t, addr, nil), esmetest.Dial(t, addr, nil)
		for _, c := range []struct {
			e       *esmetest.ESME
			sys, pw string
		}{{one, sys1, pw1}, {two, sys2, pw2}, {b, sysB, pwB}} {
			if st := c.e.Bind(pdu.BindTransceiver, c.sys, c.pw); st != pdu.StatusOK {
				t.Fatalf("bind %s: %s", c.sys, st)
			}
		}
		if r := one.Submit("", "5511999990000", "Shall we?", 0); r.Status != pdu.StatusOK {
			t.Fatalf("submit: %s", r.Status)
		}
		reply := func(key, from, text string) {
			if r := e.do("POST", "/api/v1/integration/test/replies", key, map[string]any{"from": from, "message": text}); r.status != 202 {
				t.Fatalf("test reply: %d %s", r.status, r.body)
			}
		}
		reply(e.testKey, "5511999990000", "Yes please ✓")
		got := one.WaitDelivered(1)[0].Body.(*pdu.SM)
		if got.ESMClass != 0 || got.DataCoding != pdu.CodingUCS2 || pdu.DecodeText(got.DataCoding, got.ShortMessage) != "Yes please ✓" ||
			got.SourceAddr != "5511999990000" {
			t.Fatalf("reply to the sending user: esm_class %#x dc %d %q from %s", got.ESMClass, got.DataCoding, got.ShortMessage, got.SourceAddr)
		}
		// A reply answering no SMPP message goes to any receiving bind of A.
		reply(e.testKey, "5511999990030", "hello")
		polltest.For(t, "the account's reply is delivered", 10*time.Second, func() bool {
			one.Call(pdu.EnquireLink, nil)
			two.Call(pdu.EnquireLink, nil)
			return len(one.Delivered)+len(two.Delivered) == 2
		})
		// B's own reply reaches B, and B never saw A's.
		reply(otherKey, "5511999990040", "for B")
		if got := b.WaitDelivered(1); len(got) != 1 || string(got[0].Body.(*pdu.SM).ShortMessage) != "for B" {
			t.Fatalf("B's deliveries: %d", len(got))
		}
		one.Call(pdu.EnquireLink, nil)
		two.Call(pdu.EnquireLink, nil)
		if len(one.Delivered)+len(two.Delivered) != 2 {
			t.Fatalf("A's binds got %d deliver_sm, want 2", len(one.Delivered)+len(two.Delivered))
		}
	})
}

// A customer that sends a window of submits and goes away after reading
// some answers: every submit answered is stored (once), none is stored
// that was not read, the dropped bind is gone from the user's count, and
// the node serves the next binds.
func TestSMPPDisconnectMidWindow(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := smppEnv(t, d)
		sys, pw := e.smppUser(e.account.ID, "test", "acme")
		c := e.dialBound(pdu.BindTransmitter, sys, pw)
		const n = 60
		var seqs []uint32
		for i := 0; i < n; i++ {
			seqs = append(seqs, c.Send(pdu.SubmitSM, &pdu.SM{DestAddr: "5511999990000", ShortMessage: []byte("mid-window")}))
		}
		var answered []string
		for _, s := range seqs[:10] {
			r := c.Response(s)
			if r.Status != pdu.StatusOK {
				t.Fatalf("submit %d: %s", s, r.Status)
			}
			answered = append(answered, r.Body.(*pdu.SMResp).MessageID)
		}
		c.Conn.Close()
		for _, id := range answered {
			if _, err := e.st.MessageByID(context.Background(), id); err != nil {
				t.Fatalf("answered %s, not stored: %v", id, err)
			}
		}
		// The user's four binds are free again: the dropped one was let go.
		for i := 0; i < 4; i++ {
			again := esmetest.Dial(t, e.srv.SMPPAddr(), nil)
			polltest.For(t, "a bind after the drop", 10*time.Second, func() bool {
				return again.Bind(pdu.BindTransmitter, sys, pw) == pdu.StatusOK
			})
			if i == 3 {
				if r := again.Submit("", "5511999990000", "after", 0); r.Status != pdu.StatusOK {
					t.Fatalf("submit after the drop: %s", r.Status)
				}
			}
		}
		ms, err := e.st.SearchMessages(context.Background(), domain.MessageFilter{AccountID: e.account.ID, Env: domain.Test, Limit: 1000})
		if err != nil || len(ms) < len(answered)+1 || len(ms) > n+1 {
			t.Fatalf("%d messages stored (%v), want %d to %d", len(ms), err, len(answered)+1, n+1)
		}
	})
}

// A flood beyond the account's send limit: exactly the limit is
// accepted in the minute, the rest answered ESME_RTHROTTLED.
func TestSMPPFloodBeyondTheRateLimit(t *testing.T) {
	e := smppEnv(t, "sqlite")
	if err := e.st.SetLimits(context.Background(), e.account.ID, domain.Limits{SendRPM: 20}); err != nil {
		t.Fatal(err)
	}
	sys, pw := e.smppUser(e.account.ID, "test", "acme")
	e.clock.StartMinute()
	c := e.dialBound(pdu.BindTransmitter, sys, pw)
	var seqs []uint32
	for i := 0; i < 50; i++ {
		seqs = append(seqs, c.Send(pdu.SubmitSM, &pdu.SM{DestAddr: "5511999990000", ShortMessage: []byte("flood")}))
	}
	counts := map[pdu.Status]int{}
	for _, s := range seqs {
		counts[c.Response(s).Status]++
	}
	if counts[pdu.StatusOK] != 20 || counts[pdu.StatusThrottled] != 30 {
		t.Fatalf("answers %v, want 20 ESME_ROK and 30 ESME_RTHROTTLED", counts)
	}
}

// startSMPPNode runs another node on cfg until the test ends.
func startSMPPNode(t *testing.T, cfg config.Config, now func() time.Time) *Server {
	t.Helper()
	srv, err := NewServer(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)),
		Options{Now: now, Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	nodetest.Run(t, "node "+cfg.NodeID, srv.Run)
	return srv
}

// Across nodes on PostgreSQL: a customer bound to node 1 receives the
// receipt of a message it submitted through node 2.
func TestSMPPReceiptAcrossNodes(t *testing.T) {
	storetest.Need(t, "postgres")
	e := smppEnv(t, "postgres")
	sys, pw := e.smppUser(e.account.ID, "test", "acme")
	cfg := e.srv.cfg
	cfg.NodeID, cfg.DataDir = "test-node-2", t.TempDir()
	two := startSMPPNode(t, cfg, e.clock.Now)
	rx := esmetest.Dial(t, e.srv.SMPPAddr(), nil)
	if st := rx.Bind(pdu.BindReceiver, sys, pw); st != pdu.StatusOK {
		t.Fatalf("bind to node 1: %s", st)
	}
	tx := esmetest.Dial(t, two.SMPPAddr(), nil)
	if st := tx.Bind(pdu.BindTransmitter, sys, pw); st != pdu.StatusOK {
		t.Fatalf("bind to node 2: %s", st)
	}
	r := tx.Submit("", "5511999990000", "Hello over SMPP", 1)
	if r.Status != pdu.StatusOK {
		t.Fatalf("submit to node 2: %s", r.Status)
	}
	got := rx.WaitDelivered(1)[0].Body.(*pdu.SM)
	if rid, _ := got.TLVs.CString(pdu.TagReceiptedMessageID); rid != r.Body.(*pdu.SMResp).MessageID {
		t.Fatalf("node 1 delivered the receipt of %s, want %s", rid, r.Body.(*pdu.SMResp).MessageID)
	}
	// maxBinds (4) counts the binds of both nodes together.
	for i, addr := range []string{e.srv.SMPPAddr(), two.SMPPAddr(), two.SMPPAddr()} {
		want := pdu.StatusOK
		if i == 2 {
			want = pdu.StatusBindFail
		}
		if st := esmetest.Dial(t, addr, nil).Bind(pdu.BindTransmitter, sys, pw); st != want {
			t.Fatalf("bind %d of the user across nodes: %s, want %s", i+3, st, want)
		}
	}
}

// node-smpp, an SMPP library nobody here wrote, as the customer's ESME:
// a refused bind, a window of submits in GSM and UCS-2, and every receipt
// once with its id. CI sets MSGSVC_TEST_SMSC_SIM_DIR to the simulator's
// sources, whose package.json pins node-smpp.
func TestSMPPServerPeerNodeSMPP(t *testing.T) {
	src := os.Getenv("MSGSVC_TEST_SMSC_SIM_DIR")
	if src == "" {
		t.Skip("set MSGSVC_TEST_SMSC_SIM_DIR to ../shared/peers/smsc-sim (node and npm needed)")
	}
	dir := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script, err := os.ReadFile("../smppserver/testdata/node-esme.js")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "node-esme.js"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--prefix", dir).CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	e := smppEnv(t, "sqlite")
	sys, pw := e.smppUser(e.account.ID, "test", "nodesmpp")
	host, port, _ := net.SplitHostPort(e.srv.SMPPAddr())
	cmd := exec.Command("node", "node-esme.js", "150", "50")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SMPP_HOST="+host, "SMPP_PORT="+port, "SMPP_SYSTEM_ID="+sys, "SMPP_PASSWORD="+pw)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), "OK:") {
		t.Fatalf("node-smpp ESME: %v\n%s", err, out)
	}
	t.Log(strings.TrimSpace(string(out)))
}

// --smpp-tls-cert and --smpp-tls-key make the port speak TLS.
func TestSMPPOverTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeSelfSigned(t, certFile, keyFile)
	e := newEnv(t, "sqlite", envOptions{config: func(c *config.Config) {
		c.SMPPListen, c.SMPPTLSCert, c.SMPPTLSKey = "127.0.0.1:0", certFile, keyFile
	}})
	sys, pw := e.smppUser(e.account.ID, "test", "acme")
	pool := x509.NewCertPool()
	certPEM, err := os.ReadFile(certFile)
	if err != nil || !pool.AppendCertsFromPEM(certPEM) {
		t.Fatalf("read the certificate: %v", err)
	}
	c := esmetest.Dial(t, e.srv.SMPPAddr(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if st := c.Bind(pdu.BindTransceiver, sys, pw); st != pdu.StatusOK {
		t.Fatalf("bind over TLS: %s", st)
	}
	if r := c.Submit("", "5511999990000", "over TLS", 0); r.Status != pdu.StatusOK {
		t.Fatalf("submit over TLS: %s", r.Status)
	}
	plain := esmetest.Dial(t, e.srv.SMPPAddr(), nil)
	plain.Send(pdu.BindTransceiver, &pdu.Bind{SystemID: sys, Password: pw, InterfaceVersion: pdu.InterfaceVersion})
	if p, err := plain.Read(); err == nil && p.Status == pdu.StatusOK {
		t.Fatal("a plain TCP bind was accepted on the TLS port")
	}
}

func writeSelfSigned(t *testing.T, certFile, keyFile string) {
	t.Helper()
	cert := esmetest.SelfSigned(t)
	kb, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A part with a user data header is charged one segment, so it must fit
// one: a 6-octet header and 1,524 characters in message_payload is refused
// ESME_RINVMSGLEN, with nothing stored or charged; a part of exactly 140
// octets with its header passes and is charged one segment.
func TestSMPPOversizeUDHPartRefused(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := smppEnv(t, d)
		ctx := context.Background()
		sys, pw := e.smppUser(e.account.ID, "live", "udhpart")
		c := e.dialBound(pdu.BindTransceiver, sys, pw)
		before, err := e.st.Account(ctx, e.account.ID)
		if err != nil {
			t.Fatal(err)
		}
		header := []byte{5, 0, 3, 7, 2, 1}
		for _, sm := range []*pdu.SM{
			{ESMClass: pdu.ESMClassUDHI, TLVs: pdu.TLVs{{Tag: pdu.TagMessagePayload, Value: append(header, strings.Repeat("a", 1524)...)}}},
			{ESMClass: pdu.ESMClassUDHI, ShortMessage: append(header, strings.Repeat("a", 154)...)},                                     // 141 octets packed
			{ESMClass: pdu.ESMClassUDHI, DataCoding: pdu.CodingUCS2, ShortMessage: append(header, make([]byte, 136)...)},                // 142 octets
			{ESMClass: pdu.ESMClassUDHI, DataCoding: pdu.CodingLatin1, ShortMessage: append(header, bytes.Repeat([]byte{0xE2}, 68)...)}, // â is UCS-2 on the air: 142 octets
		} {
			sm.DestAddr = "5511999990000"
			if r := c.Call(pdu.SubmitSM, sm); r.Status != pdu.StatusInvMsgLen || r.Body != nil {
				t.Fatalf("an oversize part: %s, want ESME_RINVMSGLEN", r.Status)
			}
		}
		after, _ := e.st.Account(ctx, e.account.ID)
		list := e.do("GET", "/api/v1/integration/messages", e.liveKey, nil)
		if after.Balance != before.Balance || list.status != 200 || strings.Contains(string(list.body), "msg_") {
			t.Fatalf("after the refusals: balance %d (was %d), list %d %s", after.Balance, before.Balance, list.status, list.body)
		}
		// 134 octets of UCS-2 (67 characters) after the 6-octet header: 140.
		ucs := make([]byte, 0, 134)
		for range 67 {
			ucs = append(ucs, 0x04, 0x1F)
		}
		for _, sm := range []*pdu.SM{
			{ESMClass: pdu.ESMClassUDHI, DataCoding: pdu.CodingUCS2, ShortMessage: append(header, ucs...)},
			{ESMClass: pdu.ESMClassUDHI, TLVs: pdu.TLVs{{Tag: pdu.TagMessagePayload, Value: append(header, strings.Repeat("a", 153)...)}}},
		} {
			sm.DestAddr = "5511999990000"
			r := c.Call(pdu.SubmitSM, sm)
			if r.Status != pdu.StatusOK {
				t.Fatalf("a part of 140 octets: %s", r.Status)
			}
			m, err := e.st.MessageByID(ctx, r.Body.(*pdu.SMResp).MessageID)
			if err != nil || m.Segments != 1 || m.Content.UDH != "050003070201" {
				t.Fatalf("the 140-octet part: %d segments, header %q, %v", m.Segments, m.Content.UDH, err)
			}
			now, _ := e.st.Account(ctx, e.account.ID)
			if m.Credits <= 0 || before.Balance-now.Balance != m.Credits {
				t.Fatalf("charged %d (the message says %d)", before.Balance-now.Balance, m.Credits)
			}
			before = now
		}
	})
}

// node-smpp (npm smpp 0.5.1), left at its defaults, as the customer's
// ESME: it gives no data_coding, so it sends 1 (with GSM 03.38 septets), 3
// and 8 by the text. Every submit is accepted with a msg_ id, every
// receipt comes back, and every stored text is the one the script sent.
// CI installs the package into a folder and names it in
// MSGSVC_TEST_NODE_SMPP_DIR.
func TestSMPPServerPeerNodeSMPPDefaults(t *testing.T) {
	dir := os.Getenv("MSGSVC_TEST_NODE_SMPP_DIR")
	if dir == "" {
		t.Skip("set MSGSVC_TEST_NODE_SMPP_DIR to a folder where `npm install smpp@0.5.1` was run (node needed)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	modules := filepath.Join(dir, "node_modules")
	b, err := os.ReadFile(filepath.Join(modules, "smpp", "package.json"))
	if err != nil {
		t.Skipf("the npm package smpp is not installed in %s: %v", dir, err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil || pkg.Version != "0.5.1" {
		t.Fatalf("smpp in %s is version %q (%v), want 0.5.1", dir, pkg.Version, err)
	}
	script, err := filepath.Abs("../smppserver/testdata/node-esme-defaults.js")
	if err != nil {
		t.Fatal(err)
	}
	e := smppEnv(t, "sqlite")
	sys, pw := e.smppUser(e.account.ID, "test", "nodedefaults")
	host, port, _ := net.SplitHostPort(e.srv.SMPPAddr())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, "40", "10")
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "SMPP_HOST="+host, "SMPP_PORT="+port, "SMPP_SYSTEM_ID="+sys,
		"SMPP_PASSWORD="+pw)
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || !strings.HasPrefix(lines[len(lines)-1], "OK:") {
		t.Fatalf("node-smpp ESME at its defaults: %v\n%s", err, out)
	}
	checked := 0
	for _, l := range lines {
		id, text, ok := strings.Cut(strings.TrimPrefix(l, "MSG "), " ")
		if !strings.HasPrefix(l, "MSG ") || !ok {
			continue
		}
		var want string
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatalf("script line %q: %v", l, err)
		}
		m, err := e.st.MessageByID(context.Background(), id)
		if err != nil || m.Body != want || m.Segments != 1 {
			t.Fatalf("message %s: body %q in %d segments (%v), the ESME sent %q", id, m.Body, m.Segments, err, want)
		}
		checked++
	}
	if checked != 40 {
		t.Fatalf("%d messages checked, want 40", checked)
	}
	t.Log(lines[len(lines)-1])
}

// A submit_sm waits for no read of the settings counter: its send carries
// the counter the bind's account was read at, and the send's transaction
// checks it. With the poll out of the way, a change made elsewhere still
// bites at the next submit: one that leaves the bind standing (an
// allow-list that still admits it) lets the submit through, read afresh;
// a suspension refuses it, and the bind is closed.
func TestSMPPSubmitSeesChangesWithoutAPoll(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{poll: time.Hour, config: func(c *config.Config) { c.SMPPListen = "127.0.0.1:0" }})
		ctx := context.Background()
		sys, pw := e.smppUser(e.account.ID, "test", "acme")
		c := e.dialBound(pdu.BindTransceiver, sys, pw)
		if r := c.Submit("", "5511999990000", "before", 0); r.Status != pdu.StatusOK {
			t.Fatalf("submit before the changes: %s", r.Status)
		}
		if err := e.st.UpdateAccountSettings(ctx, e.account.ID, []string{"127.0.0.1"}, false, 0); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if r := c.Submit("", "5511999990000", "admitted", 0); r.Status != pdu.StatusOK {
				t.Fatalf("submit %d after an allow-list that admits the bind: %s", i, r.Status)
			}
		}
		if err := e.st.SuspendSubtree(ctx, e.account.ID, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		c.Send(pdu.SubmitSM, &pdu.SM{DestTON: pdu.TONInternational, DestNPI: pdu.NPIISDN, DestAddr: "5511999990000",
			ShortMessage: []byte("after")})
		// The bind may be closed before the refusal is written: either is
		// the suspension biting.
		if p, err := c.Read(); err == nil && (p.Command != pdu.SubmitSMResp || p.Status != pdu.StatusSubmitFail) {
			t.Fatalf("submit after the suspension: %s %s", p.Command, p.Status)
		}
		for {
			if _, err := c.Read(); err != nil {
				break // closed by the server
			}
		}
	})
}
