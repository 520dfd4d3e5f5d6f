package app

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
)

// An SMSC that sends each receipt right behind its submit_sm_resp, with a
// window of 64 (hand-overs in chunks of 256, more than a bind has
// deliver_sm handlers): every message is delivered without a receipt
// waiting out its hold for a record. Before the riders were bounded,
// the waiting receipts took every handler of the bind, the bind stopped
// reading the answers the records needed, and the hand-overs stalled
// until the 5-second hold ran out.
func TestReceiptsNeverStallTheAnswersTheirRecordsNeed(t *testing.T) {
	smsc := smpptest.Start(t)
	e := newEnv(t, "sqlite", envOptions{credits: 10_000, file: fmt.Sprintf("providers:\n"+
		"  - {name: carrier, type: smpp, smpp: {addr: %q, systemId: msgsvc, password: secret, window: 64}}\n"+
		"routes:\n  - {channel: SMS, primary: carrier}\n", smsc.Addr())})
	polltest.For(t, "the carrier bound", 10*time.Second, func() bool { return smsc.Binds() == 1 })
	defer smsc.Kill()

	var campaigns []string
	for b := range 2 {
		rcpts := make([]string, 1000)
		for i := range rcpts {
			rcpts[i] = fmt.Sprintf("4670%07d", b*1000+i)
		}
		r := send(t, e, e.liveKey, map[string]any{"recipients": rcpts, "message": "hi", "type": "SMS"})
		if r.status != http.StatusAccepted {
			t.Fatalf("batch %d: %d %s", b, r.status, r.body)
		}
		id, _ := r.json(t)["campaignId"].(string)
		if id == "" {
			t.Fatalf("batch %d: no campaignId in %s", b, r.body)
		}
		campaigns = append(campaigns, id)
	}
	for _, id := range campaigns {
		polltest.For(t, "every message of "+id+" delivered", 2*time.Minute, func() bool {
			n, err := e.st.CampaignCounts(context.Background(), id)
			return err == nil && n[domain.Delivered] == 1000
		})
	}
	if n := metricValue(t, e, "msgsvc_receipts_left_behind_total"); n != 0 {
		t.Fatalf("%v receipts waited out their hold for a record", n)
	}
	t.Logf("receipts applied without waiting (past the bound): %v", metricValue(t, e, "msgsvc_receipts_not_waiting_total"))
}
