package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/user"
)

// uploadCampaign posts a campaign from a file to the management API.
func (e *env) uploadCampaign(token, query string, csv io.Reader, fields map[string]string, headers ...string) response {
	e.t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		for k, v := range fields {
			_ = mw.WriteField(k, v)
		}
		fw, err := mw.CreateFormFile("file", "recipients.csv")
		if err == nil {
			_, err = io.Copy(fw, csv)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequest("POST", e.base+"/api/v1/manage/campaigns"+query, pr)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// campaignCSV is a file of n recipients with a name each; bad lists the
// rows (0-based) whose number is invalid.
func campaignCSV(n int, bad ...int) string {
	var b strings.Builder
	b.WriteString("to,name\n")
	isBad := map[int]bool{}
	for _, i := range bad {
		isBad[i] = true
	}
	for i := 0; i < n; i++ {
		if isBad[i] {
			fmt.Fprintf(&b, "12,Bad%d\n", i)
			continue
		}
		fmt.Fprintf(&b, "5511%09d,Ana%d\n", 910000000+i, i)
	}
	return b.String()
}

func (e *env) balanceOf(accountID string) int64 {
	e.t.Helper()
	a, err := e.st.Account(context.Background(), accountID)
	if err != nil {
		e.t.Fatal(err)
	}
	return a.Balance
}

func (e *env) campaignMessages(accountID, campaignID string) []domain.Message {
	e.t.Helper()
	var out []domain.Message
	after := ""
	for {
		page, err := e.st.CampaignMessages(context.Background(), campaignID, after, 1000)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, m := range page {
			if m.AccountID != accountID {
				e.t.Fatalf("message %s of campaign %s belongs to %s", m.ID, campaignID, m.AccountID)
			}
		}
		out = append(out, page...)
		if len(page) < 1000 {
			return out
		}
		after = page[len(page)-1].ID
	}
}

// A campaign from a file: the dry run prices it and sends nothing; the
// send charges exactly its messages' prices, fills each text from its
// row, reports the bad rows by line and answers a retry with the same key
// without sending again.
func TestManageCampaignFromFile(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		dev := e.member(user.Developer)
		before := e.balanceOf(e.account.ID)
		fields := map[string]string{"text": "Hi {{name}}", "type": "SMS", "scheduledAt": e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)}

		dry := e.uploadCampaign(dev, "?dryRun=true", strings.NewReader(campaignCSV(30, 5)), fields)
		if dry.status != 200 {
			t.Fatalf("dry run: %d %s", dry.status, dry.body)
		}
		dj := dry.json(t)
		if dj["recipients"] != 29.0 || dj["credits"] != 29.0 || dj["campaignId"] != nil || dj["rejectedCount"] != 1.0 {
			t.Fatalf("dry run: %s", dry.body)
		}
		if rej := dj["rejected"].([]any)[0].(map[string]any); rej["line"] != 7.0 || rej["field"] != "to" || rej["code"] != "VALIDATION_ERROR" {
			t.Fatalf("rejected row %v, want line 7 on to", rej)
		}
		if e.balanceOf(e.account.ID) != before {
			t.Fatal("the dry run charged")
		}

		key := []string{"Idempotency-Key", "upload-1"}
		r := e.uploadCampaign(dev, "", strings.NewReader(campaignCSV(30, 5)), fields, key...)
		if r.status != 202 {
			t.Fatalf("send: %d %s", r.status, r.body)
		}
		j := r.json(t)
		cid, _ := j["campaignId"].(string)
		msgs := e.campaignMessages(e.account.ID, cid)
		var sum int64
		for _, m := range msgs {
			sum += m.Charged
			if !strings.HasPrefix(m.Body, "Hi Ana") || m.Status != domain.Sending {
				t.Fatalf("message %s: %q %s", m.ID, m.Body, m.Status)
			}
		}
		after := e.balanceOf(e.account.ID)
		if len(msgs) != 29 || before-after != sum || sum != 29*1_000_000 || j["credits"] != 29.0 {
			t.Fatalf("%d messages; balance moved %d, messages charged %d; answer %s", len(msgs), before-after, sum, r.body)
		}
		if ls, _ := e.st.LedgerSum(context.Background(), e.account.ID); ls != after {
			t.Fatalf("ledger sums to %d, balance %d", ls, after)
		}

		again := e.uploadCampaign(dev, "", strings.NewReader(campaignCSV(30, 5)), fields, key...)
		if again.status != 202 || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(bytes.TrimSpace(again.body), bytes.TrimSpace(r.body)) {
			t.Fatalf("retry: %d %s, want the first answer replayed", again.status, again.body)
		}
		other := e.uploadCampaign(dev, "", strings.NewReader(campaignCSV(31)), fields, key...)
		wantProblem(t, "same key, other file", other, 409, "IDEMPOTENCY_CONFLICT")
		if e.balanceOf(e.account.ID) != after {
			t.Fatal("a retried upload charged again")
		}

		// Progress is the campaign's read; cancel refunds what waits.
		c := e.mg("GET", "/api/v1/manage/campaigns/"+cid+"?limit=10", dev, nil)
		cj := c.json(t)
		if c.status != 200 || cj["total"] != 29.0 || cj["counts"].(map[string]any)["SENDING"] != 29.0 || len(cj["messages"].([]any)) != 10 || cj["nextCursor"] == nil {
			t.Fatalf("campaign: %d %s", c.status, c.body)
		}
		x := e.mg("POST", "/api/v1/manage/campaigns/"+cid+"/cancel", dev, nil)
		if x.status != 200 || x.json(t)["canceled"] != 29.0 {
			t.Fatalf("cancel: %d %s", x.status, x.body)
		}
		if got := e.balanceOf(e.account.ID); got != before {
			t.Fatalf("balance %d after the cancel, want %d back", got, before)
		}

		// The test environment shows the price and charges nothing.
		tf := map[string]string{"text": "Hi {{name}}", "type": "SMS", "environment": "test"}
		tr := e.uploadCampaign(dev, "", strings.NewReader(campaignCSV(4)), tf)
		if tr.status != 202 || tr.json(t)["credits"] != 4.0 || e.balanceOf(e.account.ID) != before {
			t.Fatalf("test campaign: %d %s, balance %d", tr.status, tr.body, e.balanceOf(e.account.ID))
		}
		for _, m := range e.campaignMessages(e.account.ID, tr.json(t)["campaignId"].(string)) {
			if m.Charged != 0 || m.Env != domain.Test {
				t.Fatalf("test message %s charged %d in %s", m.ID, m.Charged, m.Env)
			}
		}
	})
}

// A campaign the balance does not cover is refused whole, before anything
// is sent; bad files and templates are refused naming the field.
func TestManageCampaignRefusals(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{credits: 10})
		dev := e.member(user.Developer)
		fields := map[string]string{"text": "Hi {{name}}", "type": "SMS"}
		r := e.uploadCampaign(dev, "", strings.NewReader(campaignCSV(1500)), fields)
		wantProblem(t, "short balance", r, 402, "INSUFFICIENT_CREDITS")
		if n := len(e.messagesOf(e.account.ID)); n != 0 || e.balanceOf(e.account.ID) != 10*1_000_000 {
			t.Fatalf("refused campaign left %d messages, balance %d", n, e.balanceOf(e.account.ID))
		}
		for _, c := range []struct {
			name, csv, text, field string
		}{
			{"no to column", "phone,name\n5511999990000,Ana\n", "Hi", "file"},
			{"no rows", "to,name\n", "Hi", "file"},
			{"unknown variable", "to,name\n5511999990000,Ana\n", "Hi {{first}}", "text"},
			{"bad CSV", "to,name\n5511999990000,\"Ana\n", "Hi", "file"},
		} {
			r := e.uploadCampaign(dev, "", strings.NewReader(c.csv), map[string]string{"text": c.text, "type": "SMS"})
			wantProblem(t, c.name, r, 400, "VALIDATION_ERROR")
			if f := r.json(t)["errors"].([]any)[0].(map[string]any)["field"]; f != c.field {
				t.Fatalf("%s: field %v, want %s (%s)", c.name, f, c.field, r.body)
			}
		}
		var big strings.Builder
		big.WriteString("to\n")
		for i := 0; i <= 100_000; i++ {
			fmt.Fprintf(&big, "55119%08d\n", i)
		}
		wantProblem(t, "too many rows", e.uploadCampaign(dev, "", strings.NewReader(big.String()), fields), 413, "PAYLOAD_TOO_LARGE")
	})
}

func (e *env) messagesOf(accountID string) []domain.Message {
	e.t.Helper()
	ms, err := e.st.SearchMessages(context.Background(), domain.MessageFilter{AccountID: accountID, Limit: 1000})
	if err != nil {
		e.t.Fatal(err)
	}
	return ms
}

// Whose is it: a viewer may read a campaign but not send or cancel one;
// another account's users find neither the campaign nor its cancel.
// Nothing they try changes anything.
func TestManageCampaignTenancy(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		dev, viewer := e.member(user.Developer), e.member(user.Viewer)
		fields := map[string]string{"text": "Hi {{name}}", "type": "SMS", "scheduledAt": e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
		r := e.uploadCampaign(dev, "", strings.NewReader(campaignCSV(3)), fields)
		if r.status != 202 {
			t.Fatalf("send: %d %s", r.status, r.body)
		}
		cid := r.json(t)["campaignId"].(string)
		balance := e.balanceOf(e.account.ID)

		wantProblem(t, "viewer upload", e.uploadCampaign(viewer, "", strings.NewReader(campaignCSV(3)), fields), 403, "FORBIDDEN")
		wantProblem(t, "viewer cancel", e.mg("POST", "/api/v1/manage/campaigns/"+cid+"/cancel", viewer, nil), 403, "FORBIDDEN")
		wantProblem(t, "viewer send", e.mg("POST", "/api/v1/manage/messages", viewer, map[string]any{"to": "5511999990000", "message": "x"}), 403, "FORBIDDEN")
		if c := e.mg("GET", "/api/v1/manage/campaigns/"+cid, viewer, nil); c.status != 200 {
			t.Fatalf("viewer read: %d %s", c.status, c.body)
		}

		other := e.addAccount(NewAccount{Name: "Other", Tier: "enterprise", Credits: 1000, Currency: "USD", Country: "55"})
		email := "owner-other@other.example"
		if _, _, err := createTestUser(context.Background(), e.st, other.ID, email, user.Owner, testPassword, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		stranger := e.login(email, testPassword)
		wantProblem(t, "other account read", e.mg("GET", "/api/v1/manage/campaigns/"+cid, stranger, nil), 404, "NOT_FOUND")
		wantProblem(t, "other account cancel", e.mg("POST", "/api/v1/manage/campaigns/"+cid+"/cancel", stranger, nil), 404, "NOT_FOUND")
		wantProblem(t, "other account names ours", e.uploadCampaign(stranger, "?account="+e.account.ID, strings.NewReader(campaignCSV(3)), fields), 403, "FORBIDDEN")

		if e.balanceOf(e.account.ID) != balance || len(e.messagesOf(other.ID)) != 0 {
			t.Fatal("a refused action changed something")
		}
		for _, m := range e.campaignMessages(e.account.ID, cid) {
			if m.Status != domain.Sending {
				t.Fatalf("message %s is %s after refused cancels", m.ID, m.Status)
			}
		}
		// The send form's API: a developer sends, charged like a key's send.
		s := e.mg("POST", "/api/v1/manage/messages", dev, map[string]any{"to": "5511999990000", "message": "Hello", "environment": "live"})
		if s.status != 202 || e.balanceOf(e.account.ID) != balance-1_000_000 {
			t.Fatalf("send form: %d %s", s.status, s.body)
		}
	})
}

// A campaign from a file meets the account's allowed countries and the
// fraud guard like any send: a row to a country outside the list is left
// out by its line, and messages over a range's hourly cap are blocked,
// charged nothing, and left out of the campaign's credits.
func TestManageCampaignMeetsTheFraudGuard(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		op, dev := e.member("operator"), e.member(user.Developer)
		e.setFraud(op, e.account.ID, map[string]any{"allowedCountries": []string{"55"}, "perRangeHourly": 3, "action": "block"})
		csv := campaignCSV(5) + "447911123456,Abroad\n" // line 7
		before := e.balanceOf(e.account.ID)
		// Scheduled an hour ahead, so that no message is handed over (and
		// none refunded by the simulator's failing numbers) while the
		// balance is read.
		r := e.uploadCampaign(dev, "", strings.NewReader(csv), map[string]string{"text": "Hi {{name}}", "type": "SMS",
			"scheduledAt": e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
		if r.status != 202 {
			t.Fatalf("send: %d %s", r.status, r.body)
		}
		j := r.json(t)
		if j["recipients"] != 5.0 || j["credits"] != 3.0 || j["rejectedCount"] != 1.0 {
			t.Fatalf("answer: %s", r.body)
		}
		if rej := j["rejected"].([]any)[0].(map[string]any); rej["line"] != 7.0 || rej["code"] != "DESTINATION_NOT_ALLOWED" {
			t.Fatalf("rejected row %v, want line 7 DESTINATION_NOT_ALLOWED", rej)
		}
		if paid := before - e.balanceOf(e.account.ID); paid != 3_000_000 {
			t.Fatalf("charged %d micro-credits, want 3 credits", paid)
		}
		blocked := 0
		for _, m := range e.campaignMessages(e.account.ID, j["campaignId"].(string)) {
			if m.ErrorCode == domain.CodeFraudSuspected {
				if m.Status != domain.Failed || m.Credits != 0 {
					t.Fatalf("blocked message %s: %s, %d credits", m.ID, m.Status, m.Credits)
				}
				blocked++
			}
		}
		if blocked != 2 {
			t.Fatalf("%d messages blocked, want 2 (over the range's cap of 3)", blocked)
		}
	})
}
