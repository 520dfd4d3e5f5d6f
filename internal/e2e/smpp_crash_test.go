package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
)

// smscSimEnv names the sources of the independent SMSC simulator
// (../shared/peers/smsc-sim); the test starts its own instance of it so
// that it can read the simulator's counters at the end.
const smscSimEnv = "MSGSVC_TEST_SMSC_SIM_DIR"

// TestCrashRecoveryOverSMPP kills serve with SIGKILL during a load of live
// SMS going over SMPP to the independent simulator, restarts it, and
// checks that every accepted message reaches DELIVERED with its signed
// webhooks. The simulator counts every submit_sm: beyond one per message,
// only hand-overs the simulator acknowledged while the killed node had not
// yet recorded them may come again, at most one chunk per dispatch worker.
func TestCrashRecoveryOverSMPP(t *testing.T) {
	needBinary(t)
	dir := os.Getenv(smscSimEnv)
	if dir == "" {
		t.Skip("set " + smscSimEnv + " to the SMSC simulator's folder (shared/peers/smsc-sim) to run this test")
	}
	ctx := t.Context()
	sim := startSMSC(t, dir)
	dsn := filepath.Join(t.TempDir(), "msgsvc.db")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	acc := bootstrap(ctx, t, dsn, "live")
	rcv := newReceiver(t, acc.WebhookSecret, receiverRefuses, 3, seed)
	reqs := smppRequests(seed, crashRequests, rcv.URL)
	book := newSendBook()
	data := t.TempDir()
	env := append(append([]string(nil), crashServeEnv...), "MSGSVC_SMPP_ADDR="+sim.addr, "MSGSVC_RECEIPT_OVERDUE=3s",
		"MSGSVC_SMPP_SYSTEM_ID=kannel", "MSGSVC_SMPP_PASSWORD=kannel", "MSGSVC_SMPP_BINDS=2")

	first := startServer(ctx, t, dsn, data, env...)
	leftover := sendUntilKill(ctx, t, first, acc.Key, reqs, book)
	accepted, unknown := book.counts()
	t.Logf("killed pid %d after %d accepted requests; %d requests had no answer; %d not yet sent",
		first.cmd.Process.Pid, accepted, unknown, len(leftover))

	second := startServer(ctx, t, dsn, data, env...)
	api := newAPIClient(second.URL, acc.Key)
	defer api.close()
	sendAll(ctx, t, api, leftover, reqs, book)
	msgs := book.messages()
	settled := waitSettled(ctx, t, api, rcv, msgs, recoverWithin)
	// The simulator sends each receipt once and never again, also when the
	// session it went out on dies before answering it (a real SMSC retries
	// a deliver_sm until it is answered). A message whose receipt the kill
	// swallowed so would stay SENT; msgsvc asks the SMSC about it with
	// query_sm once its receipt is overdue (3 s here), so every message
	// still ends DELIVERED.
	checkOutcomes(t, rcv, msgs, settled)
	if code := second.Stop(t, 20*time.Second); code != 0 {
		t.Errorf("msgsvc exited %d after SIGTERM, want 0:\n%s", code, second.logs.tail(40))
	}
	st := sim.stop(t)
	t.Logf("simulator: %d receipts sent, %d unanswered (sent into the killed node's sessions)",
		st.DeliverSM, st.DeliverSM-st.DeliverSMResp-st.DeliverSMErr)

	// Messages whose send got no answer may have been accepted too: the
	// simulator may have seen them, once.
	submits := st.SubmitSM
	extra := submits - len(msgs)
	const bound = 2 * 2 * 4 * 10 * 2 // workers × two chunks in flight × a chunk (four windows of 10 over two binds)
	t.Logf("simulator: %d submit_sm for %d accepted messages (%d more: resubmissions of hand-overs the killed node "+
		"had not recorded, or sends whose answer the kill cut off)", submits, len(msgs), extra)
	if submits < len(msgs) {
		t.Errorf("the simulator saw %d submissions for %d accepted messages", submits, len(msgs))
	}
	if extra > bound+unknown*3 {
		t.Errorf("%d submissions beyond one per message; at most %d can come from the crash", extra, bound+unknown*3)
	}
}

// smppRequests builds n sends to Swedish numbers (the simulator delivers
// every one), 1 to 3 recipients each.
func smppRequests(seed uint64, n int, callback string) []sendRequest {
	rng := rand.New(rand.NewPCG(seed, 2))
	reqs := make([]sendRequest, n)
	for i := range reqs {
		r := sendRequest{Message: fmt.Sprintf("smpp crash test %d", i), Type: "SMS", CallbackURL: callback}
		k := 1 + rng.IntN(3)
		for j := 0; j < k; j++ {
			// Ending in 9: never one of the simulator's special endings (0001-0005)
			// that the checks expect to fail.
			r.Recipients = append(r.Recipients, fmt.Sprintf("46700%05d9", i*3+j))
		}
		if k == 1 {
			r.To, r.Recipients = r.Recipients[0], nil
		}
		reqs[i] = r
	}
	return reqs
}

// smsc is a running instance of the simulator.
type smsc struct {
	addr string
	cmd  *exec.Cmd
	log  string
}

// startSMSC runs the simulator's own start script on a free port.
func startSMSC(t *testing.T, dir string) *smsc {
	t.Helper()
	p := smpptest.StartPeer(t, dir)
	return &smsc{addr: p.Addr, cmd: &exec.Cmd{Process: p.Process}, log: p.Log}
}

// smscStats are the simulator's counters.
type smscStats struct {
	SubmitSM      int `json:"submit_sm"`
	DeliverSM     int `json:"deliver_sm"`      // deliver_sm sent
	DeliverSMResp int `json:"deliver_sm_resp"` // answered with status 0
	DeliverSMErr  int `json:"deliver_sm_err"`  // answered with an error
}

// stop ends the simulator with SIGTERM (it prints its counters as it
// exits) and returns them.
func (s *smsc) stop(t *testing.T) smscStats {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("stop the simulator: %v", err)
	}
	var stats smscStats
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if line := lastLine(s.log, "exiting on"); line != "" {
			st := lastLine(s.log, " stats ")
			if err := json.Unmarshal([]byte(st[strings.Index(st, "{"):]), &stats); err != nil {
				t.Fatalf("simulator stats %q: %v", st, err)
			}
			return stats
		}
		time.Sleep(50 * time.Millisecond) // polling the log file for the exit line
	}
	t.Fatal("the simulator did not exit on SIGTERM")
	return stats
}

func lastLine(path, containing string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	last := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), containing) {
			last = sc.Text()
		}
	}
	return last
}
