// Package signature computes X-Twilio-Signature as Twilio's request
// validators check it: a base64 HMAC-SHA1, keyed with the account's auth
// token, over the full URL the request goes to followed by each form
// parameter's name and value, sorted by name. A GET carries its parameters
// in the URL's query and signs the URL alone.
package signature

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net/url"
	"slices"
)

// Header is the request header that carries the signature.
const Header = "X-Twilio-Signature"

// Sign is the signature of a request to rawURL (exactly as it is
// requested, query included) with the form parameters params (nil for a
// GET), keyed with token. A name given several values signs each, in the
// order given.
func Sign(token, rawURL string, params url.Values) string {
	m := hmac.New(sha1.New, []byte(token))
	m.Write([]byte(rawURL))
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		for _, v := range params[k] {
			m.Write([]byte(k))
			m.Write([]byte(v))
		}
	}
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Valid reports whether sig is the signature of the request, compared in
// constant time.
func Valid(token, rawURL string, params url.Values, sig string) bool {
	return hmac.Equal([]byte(Sign(token, rawURL, params)), []byte(sig))
}
