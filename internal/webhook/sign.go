package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"strconv"
	"strings"
	"sync"
)

// signatureVersion is the Standard Webhooks scheme tag for HMAC-SHA256.
const signatureVersion = "v1"

// Sign returns "v1,<base64 HMAC-SHA256>" over "{id}.{ts}.{body}", the
// Standard Webhooks signature for one key.
func Sign(key []byte, id string, ts int64, body []byte) string {
	return signWith(hmac.New(sha256.New, key), id, ts, body)
}

func signWith(mac hash.Hash, id string, ts int64, body []byte) string {
	// The body is written on its own, not copied into one buffer with
	// the rest: it may be large.
	var head [96]byte
	b := append(head[:0], id...)
	b = append(strconv.AppendInt(append(b, '.'), ts, 10), '.')
	mac.Write(b)
	mac.Write(body)
	var sum [sha256.Size]byte
	var out [len(signatureVersion) + 1 + 44]byte // 44: base64 of 32 bytes
	b = append(out[:0], signatureVersion+","...)
	b = base64.StdEncoding.AppendEncode(b, mac.Sum(sum[:0]))
	return string(b)
}

// keyedMAC signs with one secret, keeping its keyed HMAC states for
// reuse: a state reset to the key costs a copy of two hash states, where
// a new one hashes the key's two pads and allocates five times (1 % of a
// node's CPU with two webhooks a message).
type keyedMAC struct{ macs sync.Pool }

func newKeyedMAC(key []byte) *keyedMAC {
	k := &keyedMAC{}
	k.macs.New = func() any { return hmac.New(sha256.New, key) }
	return k
}

func (k *keyedMAC) sign(id string, ts int64, body []byte) string {
	mac := k.macs.Get().(hash.Hash)
	// Reset makes a state as keyed as a new one (and, the first time,
	// keeps the keyed states so that later resets only copy them back).
	mac.Reset()
	sig := signWith(mac, id, ts, body)
	k.macs.Put(mac)
	return sig
}

// signatureHeader is SignatureHeader with the keys' kept states (the
// worker's, which keeps them per account).
func signatureHeader(keys []*keyedMAC, id string, ts int64, body []byte) string {
	if len(keys) == 1 {
		return keys[0].sign(id, ts, body)
	}
	sigs := make([]string, 0, len(keys))
	for _, k := range keys {
		sigs = append(sigs, k.sign(id, ts, body))
	}
	return strings.Join(sigs, " ")
}

// SignatureHeader returns the webhook-signature header value: one
// signature per key, space-separated, so receivers holding either the old
// or the new secret verify during a rotation. No keys gives "".
func SignatureHeader(keys [][]byte, id string, ts int64, body []byte) string {
	macs := make([]*keyedMAC, len(keys))
	for i, k := range keys {
		macs[i] = newKeyedMAC(k)
	}
	return signatureHeader(macs, id, ts, body)
}
