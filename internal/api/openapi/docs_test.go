package openapi

import (
	"bytes"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/provider/builtin"
)

func serve(t *testing.T, h http.Handler, method, target string, header http.Header) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHandlerRoutes(t *testing.T) {
	h := Handler(builtin.Types())
	docs := serve(t, h, "GET", "/docs", nil)
	etag := serve(t, h, "GET", "/openapi.json", nil).Header.Get("ETag")
	tests := []struct {
		name, method, target string
		header               http.Header
		status               int
		mediaType            string
		body                 []byte // nil: not checked
	}{
		{"spec", "GET", "/openapi.json", nil, 200, "application/json", Spec(builtin.Types())},
		{"spec head", "HEAD", "/openapi.json", nil, 200, "application/json", []byte{}},
		{"spec unchanged", "GET", "/openapi.json", http.Header{"If-None-Match": {etag}}, 304, "", []byte{}},
		{"docs", "GET", "/docs", nil, 200, "text/html", nil},
		{"docs stale etag", "GET", "/docs", http.Header{"If-None-Match": {`"old"`}}, 200, "text/html", nil},
		{"docs unchanged", "GET", "/docs", http.Header{"If-None-Match": {docs.Header.Get("ETag")}}, 304, "", []byte{}},
		{"post docs", "POST", "/docs", nil, 405, "", nil},
		{"put spec", "PUT", "/openapi.json", nil, 405, "", nil},
		{"other path", "GET", "/docs/x", nil, 404, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := serve(t, h, tt.method, tt.target, tt.header)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.mediaType != "" {
				mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
				if err != nil || mt != tt.mediaType {
					t.Errorf("Content-Type %q, want %s", resp.Header.Get("Content-Type"), tt.mediaType)
				}
			}
			if body := readAll(t, resp.Body); tt.body != nil && !bytes.Equal(body, tt.body) {
				t.Errorf("body differs from the expected %d bytes (got %d)", len(tt.body), len(body))
			}
		})
	}
}

func TestDocsPage(t *testing.T) {
	resp := serve(t, Handler(builtin.Types()), "GET", "/docs", nil)
	page := string(readAll(t, resp.Body))
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP %q does not forbid loading resources", csp)
	}

	var want []string
	for _, w := range wantOperations {
		want = append(want, w.path, `id="op-`+w.operationID+`"`)
	}
	for code := range contractCodes {
		want = append(want, `id="code-`+code+`"`)
	}
	want = append(want,
		`id="authentication"`, `id="verifying-webhooks"`, `id="webhooks"`,
		`id="webhook-delivery_status"`, `id="webhook-message_received"`,
		"webhook-signature", "X-Service-Signature", "X-RateLimit-Remaining", "RateLimit-Reset", "Retry-After",
		`id="schema-Message"`, `id="schema-SendRequest"`, "Exactly one of <code>to</code>, <code>recipients</code>.",
		"messages[].messageId",          // nested array rows of the dry-run answer
		"pattern ^\\&#43;?[0-9]{8,15}$", // a referenced phone's constraint shown inline (the page escapes "+")
		"1–1000 items",                  // recipients
		`"dryRun": true`,                // a pretty-printed example; quotes need no escaping in <pre>
		`id="response-Unauthorized"`,    // a shared error answer, shown once
		`<a href="#response-Unauthorized"><code>MISSING_API_KEY</code>`, // and linked from an operation
		"<li><code>0001</code>: <code>",                                 // a list from a description
	)
	for _, s := range want {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}

	// Shared answers are shown once and linked, so the page stays light: it
	// weighed 764 KB for some 50 operations (15 KB each) when each repeated
	// them, and about 6.4 KB an operation since. The budget grows with the
	// operations, not with repetition.
	if budget := len(wantOperations) * 7 << 10; len(page) > budget {
		t.Errorf("the page weighs %d KB for %d operations; keep it under %d KB (7 KB each)", len(page)>>10,
			len(wantOperations), budget>>10)
	}
	if n := strings.Count(page, `"code": "MISSING_API_KEY"`); n > 2 {
		t.Errorf("the MISSING_API_KEY example appears %d times; shared answers belong in one place", n)
	}

	// Fully offline: nothing is loaded from anywhere, not even from us.
	for _, bad := range []string{"<script", "<link", "<iframe", "<img", "@import", "url(", "src="} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}

	// Every in-page link has a target.
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		if ids[m[1]] {
			t.Errorf("duplicate id %q", m[1])
		}
		ids[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`href="#([^"]+)"`).FindAllStringSubmatch(page, -1) {
		if !ids[m[1]] {
			t.Errorf("link to missing #%s", m[1])
		}
	}
}

func TestNewHandlerRejectsBrokenSpecs(t *testing.T) {
	tests := []struct {
		name, spec string
	}{
		{"not JSON", "openapi: 3.1.0"},
		{"paths not an object", `{"openapi": "3.1.0", "paths": []}`},
		{"dangling response", `{"openapi": "3.1.0", "paths": {"/x": {"get": {"responses": {"200": {"$ref": "#/components/responses/Gone"}}}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := newHandler([]byte(tt.spec)); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestFormatText(t *testing.T) {
	tests := []struct {
		in   string
		want template.HTML
	}{
		{"", ""},
		{"plain", "plain"},
		{"use `X-API-KEY` here", "use <code>X-API-KEY</code> here"},
		{"<b>not bold</b> & `<i>`", "&lt;b&gt;not bold&lt;/b&gt; &amp; <code>&lt;i&gt;</code>"},
		{"one ` tick", "one ` tick"},
		{"first\n\nsecond", "<p>first</p><p>second</p>"},
		{"line\nbreak", "line<br>break"},
		{"intro\n\n- `a`: one\n- b", "<p>intro</p><ul><li><code>a</code>: one</li><li>b</li></ul>"},
	}
	for _, tt := range tests {
		if got := formatText(tt.in); got != tt.want {
			t.Errorf("formatText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestConstraintsText(t *testing.T) {
	doc, err := parse(Spec(builtin.Types()))
	if err != nil {
		t.Fatal(err)
	}
	r := renderer{doc: doc}
	send, _ := doc.Components.Schemas.get("SendRequest")
	tests := []struct {
		field, want string
	}{
		{"to", "8–16 characters; pattern ^\\+?[0-9]{8,15}$"},
		{"type", "one of SMS, WHATSAPP, RCS, in any letter case"},
		{"validity", "min 60; max 259200; default 259200"},
		{"reference", "1–128 characters"},
		{"buttons", "1–3 items"},
	}
	for _, tt := range tests {
		p, _ := send.Properties.get(tt.field)
		if got := r.constraints(p); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.field, got, tt.want)
		}
	}
}
