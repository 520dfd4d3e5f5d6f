package store

import (
	"reflect"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
)

func TestUplineText(t *testing.T) {
	levels := []domain.Level{{AccountID: "acc_mid", Charged: 1500000, SMS: 1500000, RCS: 500000}, {AccountID: "acc_top", Charged: 0}}
	text := encodeUpline(levels)
	if text != "acc_mid,1500000,1500000,500000;acc_top,0,0,0" {
		t.Fatalf("encoded %q", text)
	}
	back, err := decodeUpline(text)
	if err != nil || !reflect.DeepEqual(back, levels) {
		t.Fatalf("decoded %+v (%v), want %+v", back, err, levels)
	}
	if l, err := decodeUpline(""); l != nil || err != nil || encodeUpline(nil) != "" {
		t.Fatal("no upline is the empty text")
	}
	for _, bad := range []string{",1,2,3", "acc_x,1,2", "acc_x,one,2,3", "acc_x"} {
		if _, err := decodeUpline(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}
