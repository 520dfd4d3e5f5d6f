package client_test

import (
	"encoding/json"
	"testing"

	"github.com/msgsvc/msgsvc/client"
)

func TestAmountsSurviveDecoding(t *testing.T) {
	for _, c := range []struct {
		body   string
		micros int64
	}{
		{`{"balance": 1020.123457}`, 1020123457},
		{`{"balance": 0.000001}`, 1},
		{`{"balance": 12.5}`, 12500000},
		{`{"balance": 999999999.999999}`, 999999999999999},
		{`{"balance": 123456789.000001}`, 123456789000001},
		{`{"balance": -3.000002}`, -3000002},
	} {
		var b client.Balance
		if err := json.Unmarshal([]byte(c.body), &b); err != nil {
			t.Fatal(err)
		}
		if got := client.MicroCredits(b.Balance); got != c.micros {
			t.Errorf("%s: %d micro-credits, want %d", c.body, got, c.micros)
		}
		again, _ := json.Marshal(b.Balance)
		var in struct{ Balance json.Number }
		_ = json.Unmarshal([]byte(c.body), &in)
		if string(again) != in.Balance.String() {
			t.Errorf("%s re-encodes as %s", c.body, again)
		}
	}
}
