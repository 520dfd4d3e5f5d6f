package e2e

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/smppserver/esmetest"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// smppListening reads the SMPP server's address from the "msgsvc
// listening" line.
func smppListening(t *testing.T, s *server) string {
	t.Helper()
	for _, line := range s.Logs() {
		var rec struct {
			Msg  string `json:"msg"`
			SMPP string `json:"smpp"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "msgsvc listening" && rec.SMPP != "" {
			return rec.SMPP
		}
	}
	t.Fatal("no SMPP address in the \"msgsvc listening\" line")
	return ""
}

// SIGKILL with receipts pending: those a customer's bind had read but not
// acknowledged when msgsvc died are sent after the restart, every one of
// them, and none that was acknowledged before.
func TestSMPPReceiptsSurviveAKill(t *testing.T) {
	needBinary(t)
	for _, dialect := range storetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			storetest.Need(t, dialect)
			testSMPPReceiptsSurviveAKill(t, storetest.DSN(t, dialect))
		})
	}
}

func testSMPPReceiptsSurviveAKill(t *testing.T, dsn string) {
	ctx := t.Context()
	acc := bootstrap(ctx, t, dsn, "test")
	var user struct{ SystemID, Password string }
	if err := json.Unmarshal(runCLI(ctx, t, "smpp-user", "create", "--db", dsn, "--account", acc.ID, "--env", "test",
		"--json"), &user); err != nil || user.Password == "" {
		t.Fatalf("smpp-user create: %+v %v", user, err)
	}
	data := t.TempDir()
	env := []string{"MSGSVC_SMPP_LISTEN=127.0.0.1:0", "MSGSVC_SIMULATOR_DELAY=20ms"}
	first := startServer(ctx, t, dsn, data, env...)
	c := esmetest.Dial(t, smppListening(t, first), nil)
	c.AutoAck = false
	if st := c.Bind(pdu.BindTransceiver, user.SystemID, user.Password); st != pdu.StatusOK {
		t.Fatalf("bind: %s", st)
	}
	const n = 20
	for i := 0; i < n; i++ {
		if r := c.Submit("", "5511999990010", "before the kill", 1); r.Status != pdu.StatusOK {
			t.Fatalf("submit %d: %s", i, r.Status)
		}
	}
	got := c.WaitDelivered(n)
	var acked, pending []string
	for i, p := range got {
		rid, _ := p.Body.(*pdu.SM).TLVs.CString(pdu.TagReceiptedMessageID)
		if i < 5 {
			c.Write(pdu.PDU{Command: pdu.DeliverSMResp, Seq: p.Seq, Body: &pdu.SMResp{}})
			acked = append(acked, rid)
			continue
		}
		pending = append(pending, rid)
	}
	// Acknowledged means recorded: a kill between a deliver_sm_resp and
	// its record would send that receipt again, as SMPP allows.
	audit := openAudit(ctx, t, dsn)
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := audit.PendingSMPPItems(ctx)
		if err == nil && n == len(pending) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d receipts waiting (%v), want %d", n, err, len(pending))
		}
		time.Sleep(20 * time.Millisecond)
	}
	first.Kill(t)

	second := startServer(ctx, t, dsn, data, env...)
	again := esmetest.Dial(t, smppListening(t, second), nil)
	if st := again.Bind(pdu.BindReceiver, user.SystemID, user.Password); st != pdu.StatusOK {
		t.Fatalf("bind after the restart: %s", st)
	}
	var after []string
	for _, p := range again.WaitDelivered(len(pending)) {
		rid, _ := p.Body.(*pdu.SM).TLVs.CString(pdu.TagReceiptedMessageID)
		if slices.Contains(acked, rid) {
			t.Fatalf("receipt of %s again after it was acknowledged", rid)
		}
		after = append(after, rid)
	}
	slices.Sort(after)
	slices.Sort(pending)
	if !slices.Equal(after, pending) {
		t.Fatalf("after the kill: %v, want the unacknowledged %v", after, pending)
	}
	if r := again.Call(pdu.EnquireLink, nil); r.Status != pdu.StatusOK || len(again.Delivered) != len(pending) {
		t.Fatalf("more deliver_sm than were pending: %d", len(again.Delivered))
	}
}
