package store

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// The hand-read decisions must read exactly as encoding/json reads them:
// every text the encoder writes takes the fast path, and whatever the
// fast path accepts, encoding/json reads the same.

func sameAsJSON(t *testing.T, text string) {
	t.Helper()
	fast, ok := decodeDecisionFast(text)
	var want domain.FraudDecision
	err := json.Unmarshal([]byte(text), &want)
	if !ok {
		got, gotErr := decodeDecision(text)
		if (gotErr == nil) != (err == nil) || err == nil && !reflect.DeepEqual(*got, want) {
			t.Fatalf("%s: fallback read %+v, %v; encoding/json %+v, %v", text, got, gotErr, want, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: read by hand as %+v, encoding/json refuses it: %v", text, *fast, err)
	}
	if !reflect.DeepEqual(*fast, want) {
		t.Fatalf("%s:\nby hand       %+v\nencoding/json %+v", text, *fast, want)
	}
}

func TestDecisionsReadByHandAsEncodingJSONReadsThem(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"", "perRecipientHourly", "burst", "5511999990", "55", "a\"b", "tab\there", "é", "ops@example.com", `back\slash`, "<tag>"}
	zones := []*time.Location{time.UTC, time.FixedZone("x", 3600), time.FixedZone("y", -5*3600-1800)}
	for i := 0; i < 5000; i++ {
		d := domain.FraudDecision{
			Rule: words[r.IntN(len(words))], Scope: words[r.IntN(len(words))], Key: words[r.IntN(len(words))],
			Count: r.Int64N(1 << 40), Cap: r.Int64N(1<<20) - 5, Action: domain.FraudAction(words[r.IntN(len(words))]),
			At: time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(zones[r.IntN(len(zones))]),
		}
		if r.IntN(2) == 0 {
			d.Baseline, d.Factor = r.Float64()*1000, float64(r.IntN(20))/3
		}
		if r.IntN(3) == 0 {
			d.Resolution, d.ResolvedBy = domain.HoldReleased, words[r.IntN(len(words))]
			d.ResolvedAt = time.Unix(r.Int64N(4e9), 0).UTC()
		}
		text := encodeDecision(&d)
		sameAsJSON(t, text)
		if got, err := decodeDecision(text); err != nil || !reflect.DeepEqual(*got, roundTrip(t, text)) {
			t.Fatalf("%s: %+v, %v", text, got, err)
		}
	}
	for _, text := range []string{`{}`, `{"rule":"x"}`, `{"Rule":"x"}`, `{"count":1.5}`, `{"count":"1"}`, `{"at":null}`,
		`{"rule":"x",}`, `{"rule":"x"} `, ` {"rule":"x"}`, `{"rule":"x","rule":"y"}`, `{"cap":-3,"factor":1e3}`,
		`{"rule":"\u0041"}`, `{"unknown":1}`, `{"at":"2026-11-28T21:00:00+01:00"}`, `{"at":"bad"}`, `{"count":01}`, `{"cap":+1}`, `{"factor":.5}`, `{"factor":1.}`, `{"cap":-}`, `{"factor":1e}`, `{"cap":-0}`} {
		sameAsJSON(t, text)
	}
}

// TestDecisionsWrittenByHandAsEncodingJSONWritesThem: the hand-written
// text is encoding/json's, byte for byte, or declined.
func TestDecisionsWrittenByHandAsEncodingJSONWritesThem(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	safe := []string{"", "perRecipientHourly", "burst", "5511999990", "55", "ops@example.com", "block"}
	unsafe := []string{"a\"b", "tab\there", "é", `back\slash`, "<tag>", "a&b", "\u2028", "\xff"}
	words := append(append(append([]string{}, safe...), safe...), safe...)
	words = append(words, unsafe...)
	floats := []float64{0, 0, 0, 1, 2.5, 1.0 / 3, 1e-7, 1e-6, 123456.789, 1e20, 1e21, -4.25, 5, 7.5, math.Inf(1), math.NaN()}
	zones := []*time.Location{time.UTC, time.FixedZone("x", 3600), time.FixedZone("y", -5*3600-1800)}
	declined := 0
	for i := 0; i < 20000; i++ {
		d := domain.FraudDecision{
			Rule: words[r.IntN(len(words))], Scope: words[r.IntN(len(words))], Key: words[r.IntN(len(words))],
			Count: r.Int64N(1<<40) - 1<<39, Cap: r.Int64N(1 << 20), Action: domain.FraudAction(words[r.IntN(len(words))]),
			Baseline: floats[r.IntN(len(floats))], Factor: floats[r.IntN(len(floats))],
			At: time.Unix(r.Int64N(4e11)-1e11, r.Int64N(1e9)).In(zones[r.IntN(len(zones))]),
		}
		if r.IntN(8) == 0 {
			d.At = time.Time{}
		}
		if r.IntN(3) == 0 {
			d.Resolution, d.ResolvedBy = words[r.IntN(len(words))], words[r.IntN(len(words))]
			d.ResolvedAt = time.Unix(r.Int64N(4e9), r.Int64N(2)*r.Int64N(1e9)).In(zones[r.IntN(len(zones))])
		}
		want, err := json.Marshal(&d)
		fast, ok := encodeDecisionFast(&d)
		if !ok {
			declined++
			continue
		}
		if err != nil || fast != string(want) {
			t.Fatalf("by hand       %s\nencoding/json %s (%v)", fast, want, err)
		}
	}
	if declined > 18000 {
		t.Fatalf("declined %d of 20000", declined)
	}
}

func roundTrip(t *testing.T, text string) domain.FraudDecision {
	var d domain.FraudDecision
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func FuzzDecisionReadByHand(f *testing.F) {
	f.Add(`{"rule":"burst","scope":"range","key":"5511999990","count":12,"cap":10,"baseline":2.5,"factor":5,"action":"block","at":"2026-11-28T21:00:00.123Z"}`)
	f.Add(`{"count":01}`)
	f.Fuzz(func(t *testing.T, text string) {
		fast, ok := decodeDecisionFast(text)
		if !ok {
			return
		}
		var want domain.FraudDecision
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatalf("read by hand where encoding/json refuses it: %q", text)
		}
		if !reflect.DeepEqual(*fast, want) {
			t.Fatalf("%q:\nby hand       %+v\nencoding/json %+v", text, *fast, want)
		}
	})
}
