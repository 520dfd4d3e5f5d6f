package vocab

import (
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Only a failed or undelivered message has an error code: msgsvc's code
// as Twilio numbers it, else Twilio's unknown error.
func TestErrorCode(t *testing.T) {
	cases := []struct {
		code, status string
		want         int
	}{
		{domain.CodeUndelivered, Undelivered, 30003},
		{domain.CodeInvalidNumber, Failed, 21211},
		{domain.CodeExpired, Failed, 30001},
		{"SOMETHING_NEW", Failed, 30008},
		{"", Undelivered, 30008},
		{domain.CodeUndelivered, Delivered, 0},
		{"", Sent, 0},
	}
	for _, c := range cases {
		if got := ErrorCode(domain.Message{ErrorCode: c.code}, c.status); got != c.want {
			t.Errorf("ErrorCode(%q, %s) = %d, want %d", c.code, c.status, got, c.want)
		}
	}
	if ErrorCodeText(domain.Message{ErrorCode: domain.CodeRejected}, Failed) != "30007" || ErrorCodeText(domain.Message{}, Sent) != "" {
		t.Error("ErrorCodeText")
	}
}
