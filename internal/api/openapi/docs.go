// Package openapi holds the hand-written OpenAPI 3.1 description of the
// integration API and serves it, together with a reference page rendered on
// the server from that same document, so the page works with no network.
package openapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"
)

//go:embed openapi.json
var specJSON string // a string, so no caller can change the embedded bytes

// Spec returns the OpenAPI document as served at GET /openapi.json. Each call
// returns a fresh copy.
func Spec() []byte {
	return []byte(specJSON)
}

// Operations lists every method and path of the document's paths (not its
// webhooks), in document order, so that the API's route table can be checked
// against it. Paths use the document's {name} parameter syntax, which is also
// net/http's pattern syntax.
func Operations() []struct{ Method, Path string } {
	doc, err := parse(Spec())
	if err != nil {
		// The document is embedded and its tests parse it; failing here means
		// the binary was built from a broken document.
		panic(fmt.Sprintf("openapi: embedded document: %v", err))
	}
	var out []struct{ Method, Path string }
	for _, p := range doc.Paths {
		for _, mo := range p.Value.operations() {
			out = append(out, struct{ Method, Path string }{mo.Method, p.Key})
		}
	}
	return out
}

// Handler serves GET /openapi.json (the document, application/json) and
// GET /docs (the HTML reference page). The document is parsed and the page
// rendered once, here. Mount it for exactly those two patterns.
func Handler() http.Handler {
	h, err := newHandler(Spec())
	if err != nil {
		panic(fmt.Sprintf("openapi: embedded document: %v", err))
	}
	return h
}

func newHandler(spec []byte) (http.Handler, error) {
	doc, err := parse(spec)
	if err != nil {
		return nil, err
	}
	page, err := renderPage(doc)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /openapi.json", staticContent(spec, "application/json", ""))
	// The page loads nothing from anywhere: the policy makes that a guarantee
	// rather than a habit.
	mux.Handle("GET /docs", staticContent(page, "text/html; charset=utf-8",
		"default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"))
	return mux, nil
}

// staticContent serves fixed bytes with an ETag, so clients revalidate
// cheaply and HEAD and conditional requests work as net/http implements them.
func staticContent(body []byte, contentType, csp string) http.Handler {
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", contentType)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", etag)
		h.Set("X-Content-Type-Options", "nosniff")
		if csp != "" {
			h.Set("Content-Security-Policy", csp)
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	})
}
