package app

import (
	"testing"

	"github.com/msgsvc/msgsvc/internal/media/mediatest"
)

// What the hostile test found in sends and uploads: a callbackUrl with
// spaces or <>" (written raw into the webhook's request line), an escaped
// lone surrogate in text, invalid UTF-8 answered without naming the
// field, and a PNG with data after IEND. Each is refused and changes
// nothing.
func TestHostileSendsAndUploads(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	before := balance(t, e)
	for _, url := range []string{"https://example.com/hook?a=b c", "https://example.com/hook?a=<b>", `https://example.com/hook?a="b"`,
		"https://example.com/a b"} {
		r := send(t, e, e.testKey, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS", "callbackUrl": url})
		if f := fieldsOf(t, r); r.status != 400 || len(f) != 1 || f[0] != "callbackUrl" {
			t.Errorf("callbackUrl %q: %d %s", url, r.status, r.body)
		}
	}
	for name, body := range map[string]string{
		"lone surrogate": `{"to": "5511999990010", "type": "SMS", "message": "hi \ud800"}`,
		"invalid UTF-8":  "{\"to\": \"5511999990010\", \"type\": \"SMS\", \"message\": \"hi \xff\"}",
	} {
		r := e.do("POST", "/api/v1/integration/messages", e.testKey, []byte(body))
		if f := fieldsOf(t, r); r.status != 400 || r.json(t)["code"] != "VALIDATION_ERROR" || len(f) != 1 || f[0] != "message" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	png := append(mediatest.PNG(), []byte("<script>alert(1)</script>")...)
	if r := e.uploadMedia(e.testKey, "a.png", "image/png", png); r.status != 415 {
		t.Errorf("a PNG with data after IEND: %d %s", r.status, r.body)
	}
	if after := balance(t, e); after != before {
		t.Errorf("balance %d, then %d", before, after)
	}
}
