package sid

import (
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/id"
)

func TestMessageSidRoundTrips(t *testing.T) {
	for i := 0; i < 1000; i++ {
		native := id.New(id.Message, time.Unix(int64(i)*7919, 0))
		s := FromNative(Message, native)
		if len(s) != 34 || !strings.HasPrefix(s, "SM") || strings.ToLower(s[2:]) != s[2:] {
			t.Fatalf("FromNative(%q) = %q", native, s)
		}
		if back := ToNative(Message, id.Message, s); back != native {
			t.Fatalf("ToNative(%q) = %q, want %q", s, back, native)
		}
		if back := ToNative(Message, id.Message, "SM"+strings.ToUpper(s[2:])); back != native {
			t.Fatalf("upper-case hex: %q, want %q", back, native)
		}
	}
}

func TestNotSids(t *testing.T) {
	for _, s := range []string{"", "SM", "SMzz" + strings.Repeat("0", 30), "MM" + strings.Repeat("0", 32), "SM" + strings.Repeat("0", 31)} {
		if got := ToNative(Message, id.Message, s); got != "" {
			t.Errorf("ToNative(%q) = %q, want none", s, got)
		}
	}
	for _, s := range []string{"", "msg_", "msg_" + strings.Repeat("z", 26), "msg_" + strings.Repeat("0", 25) + "i"} {
		if got := FromNative(Message, s); got != "" {
			t.Errorf("FromNative(%q) = %q, want none", s, got)
		}
	}
}

func TestNumberSidsDifferByAccount(t *testing.T) {
	a, b := ForNumber("acc_1", "+14155550100"), ForNumber("acc_2", "+14155550100")
	if a == b || !Valid(Number, a) || a != ForNumber("acc_1", "+14155550100") {
		t.Fatalf("ForNumber: %q %q", a, b)
	}
}
