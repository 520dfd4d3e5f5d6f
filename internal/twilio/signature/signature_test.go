package signature

import (
	"net/url"
	"testing"

	"github.com/twilio/twilio-go/client"
)

// Twilio's own validator accepts what Sign computes, for a POST's form
// and for a GET's query, and refuses it once anything signed changed.
func TestTwilioValidatorAccepts(t *testing.T) {
	const token = "12345678901234567890123456789012"
	form := url.Values{"MessageSid": {"SM0123456789abcdef0123456789abcdef"}, "AccountSid": {"AC0123456789abcdef0123456789abcdef"},
		"From": {"+15005550006"}, "To": {"+4915112345678"}, "Body": {"Olá & bye=1+1 ✓"}, "NumMedia": {"0"},
		"MessageStatus": {"delivered"}}
	for _, raw := range []string{"https://example.com/sms", "https://example.com:8443/cb?x=1&y=%20z", "http://127.0.0.1:9000/s"} {
		sig := Sign(token, raw, form)
		v := client.NewRequestValidator(token)
		if !v.Validate(raw, first(form), sig) {
			t.Fatalf("%s: Twilio's validator refused %s", raw, sig)
		}
		if !v.ValidateBody(raw, []byte(form.Encode()), sig) {
			t.Fatalf("%s: Twilio's validator refused the body's signature", raw)
		}
		if !Valid(token, raw, form, sig) {
			t.Fatal("Valid refused its own signature")
		}
		tampered := url.Values{}
		for k, vs := range form {
			tampered[k] = vs
		}
		tampered.Set("MessageStatus", "failed")
		if v.Validate(raw, first(tampered), sig) || Valid(token, raw, tampered, sig) {
			t.Fatalf("%s: a changed parameter still validates", raw)
		}
		if v.Validate(raw+"x", first(form), sig) {
			t.Fatalf("%s: another URL still validates", raw)
		}
		other := client.NewRequestValidator("00000000000000000000000000000000")
		if other.Validate(raw, first(form), sig) {
			t.Fatalf("%s: another token validates", raw)
		}
	}
	// A GET signs its URL with the query and no parameters.
	get := "https://example.com/sms?" + form.Encode()
	v := client.NewRequestValidator(token)
	if sig := Sign(token, get, nil); !v.Validate(get, map[string]string{}, sig) {
		t.Fatal("Twilio's validator refused a GET's signature")
	}
}

// Parameters sign sorted by name whatever order they were given in, and a
// name with no value still signs its name.
func TestSortedByName(t *testing.T) {
	a := Sign("k", "https://x/y", url.Values{"b": {"2"}, "a": {"1"}, "c": {""}})
	if want := Sign("k", "https://x/ya1b2c", nil); a != want {
		t.Fatalf("signature %s, want that of the URL followed by a1b2c (%s)", a, want)
	}
}

func first(v url.Values) map[string]string {
	out := map[string]string{}
	for k, vs := range v {
		out[k] = vs[0]
	}
	return out
}
