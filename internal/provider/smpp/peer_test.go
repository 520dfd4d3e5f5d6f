package smpp

import (
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// The tests in this file run against the independent SMSC simulator of
// shared/peers/smsc-sim (node-smpp), which this project did not write:
//
//	pid=$(internal/provider/smpp/testdata/run-peer.sh)
//	MSGSVC_TEST_SMSC_ADDR=127.0.0.1:2775 go test -run Peer ./internal/provider/smpp/
//	kill "$pid"

func peerConfig(t *testing.T) Config {
	addr := os.Getenv("MSGSVC_TEST_SMSC_ADDR")
	if addr == "" {
		t.Skip("MSGSVC_TEST_SMSC_ADDR is not set; start the independent SMSC simulator with " +
			"internal/provider/smpp/testdata/run-peer.sh and set it to 127.0.0.1:2775")
	}
	env := func(k, def string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return def
	}
	cfg := testConfig(addr)
	cfg.SystemID = env("MSGSVC_TEST_SMSC_SYSTEM_ID", "kannel")
	cfg.Password = env("MSGSVC_TEST_SMSC_PASSWORD", "kannel")
	cfg.SystemType = ""
	cfg.SourceAddr = "MsgSvc"
	cfg.RequestTimeout = 5 * time.Second
	cfg.EnquireLinkInterval = 200 * time.Millisecond // exercise it against the peer too
	return cfg
}

func TestPeerSubmitAndReceipts(t *testing.T) {
	cfg := peerConfig(t)
	cfg.Binds = 2
	sink := newSink()
	c := startClient(t, cfg, sink)
	start := time.Now()
	long := strings.Repeat("A long GSM text with {braces} and €uro signs. ", 9) // 3 parts
	msgs := []provider.Outbound{
		outSMS("one", "5511999990000", "Hello from msgsvc @ £ ok"),
		outSMS("three", "5511999990001", long),
		outSMS("ucs2", "5511999990002", "Olá, жизнь 😀"),
	}
	msgs[1].From = "15550001111"
	res := submit(t, c, msgs...)
	mustOK(t, res)
	for i, want := range []int{1, 3, 1} {
		if len(res[i].Parts) != want {
			t.Fatalf("%s: %d parts (%v); want %d", msgs[i].ID, len(res[i].Parts), res[i].Parts, want)
		}
	}
	// Every part gets its own DELIVERED receipt, under its own id.
	want := map[string]bool{}
	for _, r := range res {
		for _, id := range r.Parts {
			want[id] = true
		}
	}
	eventually(t, "a DELIVERED receipt for every part", func() bool {
		statuses, _ := sink.Got()
		got := 0
		for _, s := range statuses {
			if want[s.Ref] && s.Status == "DELIVERED" {
				got++
			}
		}
		return got == len(want)
	})
	statuses, _ := sink.Got()
	if len(statuses) != len(want) {
		t.Fatalf("%d statuses for %d parts: %+v", len(statuses), len(want), statuses)
	}
	// Idle binds send enquire_link every 200 ms; the peer must answer them
	// (else the client would drop and rebind, which LastError would show).
	eventually(t, "idle binds kept alive", func() bool {
		h := c.Health()
		return h.BindsUp == 2 && h.WindowInUse == 0 && time.Since(start) > time.Second
	})
	if h := c.Health(); h.LastError != "" {
		t.Fatalf("health = %+v", h)
	}
}

// TestPeerDecodesUnpackedGSM shows which GSM packing node-smpp reads: the
// simulator puts the first 20 characters it decoded from each submit_sm in
// its receipt's "text:" field. Unpacked septets come back as sent; packed
// ones do not.
func TestPeerDecodesUnpackedGSM(t *testing.T) {
	cfg := peerConfig(t).withDefaults()
	const text = "Hi @ £ {x} é_$ Ñ!"
	echo := func(packing pdu.GSMPacking) string {
		parts, err := pdu.EncodeText(text, 0, packing)
		if err != nil || len(parts) != 1 || parts[0].DataCoding != pdu.CodingDefault {
			t.Fatalf("EncodeText: %+v, %v", parts, err)
		}
		sm := &pdu.SM{SourceTON: pdu.TONAlphanumeric, SourceAddr: "MsgSvc", DestTON: 1, DestNPI: 1, DestAddr: "5511999990000",
			RegisteredDelivery: 1, DataCoding: pdu.CodingDefault, ShortMessage: parts[0].Message}
		return peerReceiptText(t, cfg, sm)
	}
	if got := echo(pdu.Unpacked); got != text {
		t.Fatalf("unpacked: the peer decoded %q; sent %q", got, text)
	}
	got := echo(pdu.Packed)
	if got == text {
		t.Fatalf("packed: the peer decoded %q as well; the default should be reconsidered", got)
	}
	t.Logf("the peer reads packed septets as %q", got)
}

// peerReceiptText submits sm on a bare session and returns the text: field
// of the receipt the peer sends back.
func peerReceiptText(t *testing.T, cfg Config, sm *pdu.SM) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	receipts := map[string]string{}
	s := newSession(0, &cfg, conn, quietLogger(), func(s *session, p pdu.PDU) {
		if dlr, ok := p.Body.(*pdu.SM); ok {
			r, _ := parseReceipt(dlr)
			text := pdu.DecodeLatin1(dlr.ShortMessage) // the simulator writes receipts in Latin-1
			if i := strings.Index(text, " text:"); i >= 0 {
				mu.Lock()
				receipts[r.ID] = text[i+len(" text:"):]
				mu.Unlock()
			}
		}
		_ = s.respond(pdu.DeliverSMResp, pdu.StatusOK, p.Seq, &pdu.SMResp{})
	})
	defer func() { s.unbind(ctx); s.wg.Wait() }()
	if _, err := s.bind(ctx); err != nil {
		t.Fatal(err)
	}
	s.run()
	resp, err := s.call(ctx, pdu.SubmitSM, sm, callOpts{window: true})
	if err != nil || resp.Status != pdu.StatusOK {
		t.Fatalf("submit_sm: %+v, %v", resp, err)
	}
	id := resp.Body.(*pdu.SMResp).MessageID
	var text string
	eventually(t, "the receipt", func() bool {
		mu.Lock()
		defer mu.Unlock()
		var ok bool
		text, ok = receipts[id]
		return ok
	})
	return text
}

// The peer answers query_sm about a message it accepted: its receipt, had
// it been lost, is recovered from the answer.
func TestPeerQuery(t *testing.T) {
	cfg := peerConfig(t)
	c := startClient(t, cfg, newSink())
	res := submit(t, c, outSMS("q", "5511999990003", "Asked about later"))
	mustOK(t, res)
	got, err := c.Query(context.Background(), []provider.QueryRef{{Ref: res[0].Ref}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Ref != res[0].Ref || got[0].Status != "DELIVERED" {
		t.Fatalf("query_sm about %s: %+v", res[0].Ref, got)
	}
}
