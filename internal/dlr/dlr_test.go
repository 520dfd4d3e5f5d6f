package dlr

import (
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

func TestReceiptOfEachFinalStatus(t *testing.T) {
	sub := time.Date(2026, 11, 21, 9, 58, 30, 0, time.UTC)
	done := time.Date(2026, 11, 21, 10, 2, 0, 0, time.UTC)
	base := domain.Message{ID: "msg_01", AccountID: "acc_a", Env: domain.Live, To: "5511999990000", From: "ACME",
		Body: "Your code is 123456, valid for 5 minutes", CreatedAt: sub,
		Content: domain.Content{SMPP: &domain.SMPPOrigin{User: "smu_a", Receipt: true}}}
	cases := []struct {
		status domain.Status
		code   string
		text   string
		state  int
	}{
		{domain.Delivered, "", "dlvrd:001 submit date:2611210958 done date:2611211002 stat:DELIVRD err:000", StateDelivered},
		{domain.Read, "", "dlvrd:001 submit date:2611210958 done date:2611211002 stat:DELIVRD err:000", StateDelivered},
		{domain.Canceled, "", "dlvrd:000 submit date:2611210958 done date:2611211002 stat:DELETED err:000", StateDeleted},
		{domain.Failed, domain.CodeExpired, "dlvrd:000 submit date:2611210958 done date:2611211002 stat:EXPIRED err:004", StateExpired},
		{domain.Failed, domain.CodeInvalidNumber, "dlvrd:000 submit date:2611210958 done date:2611211002 stat:REJECTD err:001", StateRejected},
		{domain.Failed, domain.CodeUndelivered, "dlvrd:000 submit date:2611210958 done date:2611211002 stat:UNDELIV err:006", StateUndeliverable},
		{domain.Failed, "SOMETHING_NEW", "dlvrd:000 submit date:2611210958 done date:2611211002 stat:UNDELIV err:099", StateUndeliverable},
	}
	for _, c := range cases {
		m := base
		m.Status, m.ErrorCode = c.status, c.code
		if !Wanted(m, domain.Sent) {
			t.Fatalf("%s: no receipt wanted", c.status)
		}
		it := Item(m, done)
		want := "id:msg_01 sub:001 " + c.text + " text:Your code is 123456,"
		if it.Text != want || it.State != c.state || it.UserID != "smu_a" || it.ESMClass != ESMClassReceipt ||
			it.Source != "5511999990000" || it.Dest != "ACME" || !it.ExpiresAt.Equal(done.Add(72*time.Hour)) {
			t.Errorf("%s %s:\n got %q state %d\nwant %q state %d", c.status, c.code, it.Text, it.State, want, c.state)
		}
	}
	m := base
	m.Status = domain.Read
	if Wanted(m, domain.Delivered) {
		t.Error("READ after DELIVERED asks for a second receipt")
	}
	m.Content.SMPP.Receipt = false
	if Wanted(m, domain.Sent) {
		t.Error("a receipt without registered_delivery")
	}
}
