// Package openapi holds the hand-written OpenAPI 3.1 description of the
// integration API and serves it, together with a reference page rendered on
// the server from that same document, so the page works with no network.
package openapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/provider"
)

//go:embed openapi.json
var specJSON string // a string, so no caller can change the embedded bytes

// Spec returns the OpenAPI document as served at GET /openapi.json: the
// hand-written document, its paths followed by the webhook routes of the
// provider types as each type describes them (Type.OpenAPI), in the order
// of types. Each call returns a fresh copy.
func Spec(types []provider.Type) []byte {
	b, err := withProviders(specJSON, types)
	if err != nil {
		// The registry refuses a type whose description does not parse,
		// and the document is embedded and tested: failing here means the
		// binary was built broken.
		panic(fmt.Sprintf("openapi: %v", err))
	}
	return b
}

// withProviders appends each type's path items to the paths of doc. The
// text is spliced rather than decoded and encoded again, so that the
// document keeps the hand-written layout and every byte of each item.
func withProviders(doc string, types []provider.Type) ([]byte, error) {
	var items []string
	for _, t := range types {
		var paths ordered[json.RawMessage]
		if len(t.OpenAPI) == 0 {
			continue
		}
		if err := json.Unmarshal(t.OpenAPI, &paths); err != nil {
			return nil, fmt.Errorf("provider type %s: %w", t.Name, err)
		}
		for _, p := range paths {
			key, err := json.Marshal(p.Key)
			if err != nil {
				return nil, fmt.Errorf("provider type %s: %w", t.Name, err)
			}
			// A type's items are written one level shallower than the
			// document's paths.
			items = append(items, "    "+string(key)+": "+strings.ReplaceAll(string(p.Value), "\n", "\n  "))
		}
	}
	end, err := pathsEnd(doc)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(doc[:end])
	for _, it := range items {
		b.WriteString(",\n")
		b.WriteString(it)
	}
	b.WriteString(doc[end:])
	return []byte(b.String()), nil
}

// pathsEnd is the offset in doc just after the last value of its paths
// object (where another path item would follow a comma).
func pathsEnd(doc string) (int, error) {
	dec := json.NewDecoder(strings.NewReader(doc))
	if _, err := dec.Token(); err != nil {
		return 0, fmt.Errorf("decode OpenAPI document: %w", err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, fmt.Errorf("decode OpenAPI document: %w", err)
		}
		if key != "paths" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, fmt.Errorf("decode OpenAPI document: %w", err)
			}
			continue
		}
		if _, err := dec.Token(); err != nil {
			return 0, fmt.Errorf("decode OpenAPI document: paths: %w", err)
		}
		end := -1
		for dec.More() {
			var item json.RawMessage
			if _, err := dec.Token(); err != nil {
				return 0, fmt.Errorf("decode OpenAPI document: paths: %w", err)
			}
			if err := dec.Decode(&item); err != nil {
				return 0, fmt.Errorf("decode OpenAPI document: paths: %w", err)
			}
			end = int(dec.InputOffset())
		}
		if end < 0 {
			return 0, errors.New("the OpenAPI document has no paths to follow")
		}
		return end, nil
	}
	return 0, errors.New("the OpenAPI document has no paths")
}

// Operations lists every method and path of the document's paths (not its
// webhooks) with the routes of types, in document order, so that the API's
// route table can be checked against it. Paths use the document's {name}
// parameter syntax, which is also net/http's pattern syntax.
func Operations(types []provider.Type) []struct{ Method, Path string } {
	doc, err := parse(Spec(types))
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

// Handler serves GET /openapi.json (the document with the routes of types,
// application/json) and GET /docs (the HTML reference page). The document
// is parsed and the page rendered once, when either is first asked for: a
// node starts without paying for a page few of them ever serve (about a
// fifth of a second under the race detector, in every test that starts a
// node). Mount it for exactly those two patterns.
func Handler(types []provider.Type) http.Handler {
	build := sync.OnceValue(func() http.Handler {
		h, err := newHandler(Spec(types))
		if err != nil {
			// The document is embedded and its tests render it; failing here
			// means the binary was built from a broken document.
			panic(fmt.Sprintf("openapi: embedded document: %v", err))
		}
		return h
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { build().ServeHTTP(w, r) })
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
