package webhook

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Vector published with the Standard Webhooks reference libraries.
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTS     = 1614265330
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignVector(t *testing.T) {
	key, err := DecodeSecret(vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got := Sign(key, vectorID, vectorTS, []byte(vectorBody)); got != vectorSig {
		t.Fatalf("Sign = %q, want %q", got, vectorSig)
	}
}

func TestSignatureHeaderShape(t *testing.T) {
	k1, k2 := []byte(strings.Repeat("a", 32)), []byte(strings.Repeat("b", 32))
	body := []byte(`{"event":"delivery_status"}`)
	tests := []struct {
		name string
		keys [][]byte
		want string
	}{
		{"none", nil, ""},
		{"one", [][]byte{k1}, Sign(k1, "id", 7, body)},
		{"two", [][]byte{k1, k2}, Sign(k1, "id", 7, body) + " " + Sign(k2, "id", 7, body)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SignatureHeader(tt.keys, "id", 7, body); got != tt.want {
				t.Fatalf("SignatureHeader = %q, want %q", got, tt.want)
			}
		})
	}
	if Sign(k1, "id", 7, body) == Sign(k2, "id", 7, body) {
		t.Fatal("different keys gave the same signature")
	}
}

// TestStandardWebhooksVerifies checks interoperability: the reference Go
// verifier must accept what we send, with one key and during rotation,
// and must reject a body or header that was changed in transit.
func TestStandardWebhooksVerifies(t *testing.T) {
	oldSecret, newSecret := mustSecret(t), mustSecret(t)
	oldKey, _ := DecodeSecret(oldSecret)
	newKey, _ := DecodeSecret(newSecret)

	const id = "evt_2b1f0c"
	const ts int64 = 1795000000
	body := []byte(`{"event":"delivery_status","messageId":"m1","status":"DELIVERED"}`)

	tests := []struct {
		name       string
		keys       [][]byte
		verifyWith string
		id         string
		ts         int64
		body       []byte
		wantOK     bool
	}{
		{"one key", [][]byte{newKey}, newSecret, id, ts, body, true},
		{"two keys, receiver has old", [][]byte{oldKey, newKey}, oldSecret, id, ts, body, true},
		{"two keys, receiver has new", [][]byte{oldKey, newKey}, newSecret, id, ts, body, true},
		{"one key, receiver has other", [][]byte{newKey}, oldSecret, id, ts, body, false},
		{"tampered body", [][]byte{newKey}, newSecret, id, ts, []byte(`{"event":"delivery_status","messageId":"m1","status":"FAILED"}`), false},
		{"tampered body, two keys", [][]byte{oldKey, newKey}, oldSecret, id, ts, []byte(`{}`), false},
		{"tampered id", [][]byte{newKey}, newSecret, "evt_other", ts, body, false},
		{"tampered timestamp", [][]byte{newKey}, newSecret, id, ts + 1, body, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig := SignatureHeader(tt.keys, id, ts, body)
			h := http.Header{}
			h.Set("webhook-id", tt.id)
			h.Set("webhook-timestamp", strconv.FormatInt(tt.ts, 10))
			h.Set("webhook-signature", sig)
			wh, err := standardwebhooks.NewWebhook(tt.verifyWith)
			if err != nil {
				t.Fatal(err)
			}
			// The fixed timestamp keeps the test independent of the clock;
			// tolerance checking is the receiver's business.
			err = wh.VerifyIgnoringTimestamp(tt.body, h)
			if (err == nil) != tt.wantOK {
				t.Fatalf("verify error = %v, want ok=%v", err, tt.wantOK)
			}
		})
	}
}

// TestKeyedMACSignsAsSign: a secret's kept HMAC states sign exactly as a
// fresh one does, however often they are reused, from many goroutines at
// once, and whatever was signed with them before.
func TestKeyedMACSignsAsSign(t *testing.T) {
	key, err := DecodeSecret(vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	k := newKeyedMAC(key)
	if got := k.sign(vectorID, vectorTS, []byte(vectorBody)); got != vectorSig {
		t.Fatalf("sign = %q, want %q", got, vectorSig)
	}
	other := newKeyedMAC([]byte(strings.Repeat("k", 32)))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				id := "msg_" + strconv.Itoa(g) + "_" + strconv.Itoa(i)
				body := []byte(strings.Repeat("x", i*7))
				if got, want := k.sign(id, int64(i), body), Sign(key, id, int64(i), body); got != want {
					t.Errorf("sign(%s) = %q, want %q", id, got, want)
					return
				}
				if got, want := signatureHeader([]*keyedMAC{k, other}, id, 9, body),
					Sign(key, id, 9, body)+" "+Sign([]byte(strings.Repeat("k", 32)), id, 9, body); got != want {
					t.Errorf("signatureHeader(%s) = %q, want %q", id, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkSign(b *testing.B) {
	key := []byte(strings.Repeat("a", 32))
	body := []byte(`{"event":"delivery_status","campaignId":"cmp_01","messageId":"msg_01","phone":"+46720000001","status":"DELIVERED","timestamp":"2026-11-30T10:00:00.123Z","provider":"smpp","errorCode":null,"errorMessage":null}`)
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Sign(key, "evt_01KB0000000000000000000000", 1764496800, body)
		}
	})
	b.Run("kept", func(b *testing.B) {
		k := newKeyedMAC(key)
		b.ReportAllocs()
		for b.Loop() {
			k.sign("evt_01KB0000000000000000000000", 1764496800, body)
		}
	})
}
