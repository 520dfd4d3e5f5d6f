package openapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// verify is the receiver code shown on the reference page, kept here so it
// is compiled and run: TestDocumentedVerifier checks the page shows exactly
// this text.
func verify(secret string, h http.Header, body []byte, now time.Time) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	ts, err := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	if err != nil || now.Sub(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

func TestDocumentedVerifier(t *testing.T) {
	src, err := os.ReadFile("verify_doc_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "verify_doc_test.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var code string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "verify" {
			code = string(src[fset.Position(fn.Pos()).Offset:fset.Position(fn.End()).Offset])
		}
	}
	if code == "" || !strings.Contains(pageTemplate, "<pre><code>"+code+"</code></pre>") {
		t.Error("the page's verification code differs from verify in this file")
	}

	// The worked example of the spec, checked with the documented code.
	doc := rawSpec(t)
	desc := webhookHeader(t, doc, "webhook-signature")["description"].(string)
	secret := between(t, desc, "with the secret `", "`")
	h := http.Header{}
	h.Set("webhook-id", between(t, desc, "`webhook-id` `", "`"))
	h.Set("webhook-timestamp", between(t, desc, "`webhook-timestamp` `", "`"))
	sig := between(t, desc, "the header is `", "`")
	body := `{"event":"delivery_status","campaignId":"cmp_01JD8Z6T2M4Q9X7R5K3W1B0C8N","messageId":"msg_01JD8Z6T2N7H5F3D1B9Z7X5V3T","phone":"5511999990000","status":"DELIVERED","timestamp":"2026-11-21T10:00:01.907Z","provider":"simulator","errorCode":null,"errorMessage":null}`
	signedAt := time.Unix(1795255202, 0)
	tests := []struct {
		name      string
		signature string
		body      string
		now       time.Time
		want      bool
	}{
		{"valid", sig, body, signedAt.Add(30 * time.Second), true},
		{"rotation: second of two", "v1,AAAA " + sig, body, signedAt, true},
		{"too old", sig, body, signedAt.Add(6 * time.Minute), false},
		{"from the future", sig, body, signedAt.Add(-6 * time.Minute), false},
		{"body changed", sig, strings.Replace(body, "DELIVERED", "READ", 1), signedAt, false},
		{"wrong signature", "v1,AAAA", body, signedAt, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := h.Clone()
			h.Set("webhook-signature", tt.signature)
			if got := verify(secret, h, []byte(tt.body), tt.now); got != tt.want {
				t.Errorf("verify = %v, want %v", got, tt.want)
			}
		})
	}
}
