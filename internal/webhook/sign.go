package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
)

// signatureVersion is the Standard Webhooks scheme tag for HMAC-SHA256.
const signatureVersion = "v1"

// Sign returns "v1,<base64 HMAC-SHA256>" over "{id}.{ts}.{body}", the
// Standard Webhooks signature for one key.
func Sign(key []byte, id string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	// Writing the parts separately avoids copying a possibly large body
	// into one concatenated buffer.
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(nil, ts, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return signatureVersion + "," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// SignatureHeader returns the webhook-signature header value: one
// signature per key, space-separated, so receivers holding either the old
// or the new secret verify during a rotation. No keys gives "".
func SignatureHeader(keys [][]byte, id string, ts int64, body []byte) string {
	sigs := make([]string, 0, len(keys))
	for _, k := range keys {
		sigs = append(sigs, Sign(k, id, ts, body))
	}
	return strings.Join(sigs, " ")
}
