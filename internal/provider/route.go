package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// WebhookRoute is one path on which a type's platform calls back (status
// reports, replies, a verification handshake): Method /providers/<type>/Path
// on the public address. The service serves every route of every registered
// type, configured or not, so that the public surface does not depend on
// the configuration; a call is answered by the adapter of that type the
// node runs at the time.
type WebhookRoute struct {
	Method string // "GET", "POST"
	Path   string // under /providers/<type>/, e.g. "status"
	// handler is the route's receiver on an adapter of the type, nil for an
	// adapter of another kind.
	handler func(Adapter) http.Handler
}

// Receive makes a WebhookRoute answered by h on the type's own adapter,
// of Go type A (the adapter's concrete type, or an interface of its
// package that the adapter and its test harnesses share).
func Receive[A any](method, path string, h func(A) http.Handler) WebhookRoute {
	return WebhookRoute{Method: method, Path: path, handler: func(a Adapter) http.Handler {
		if own, ok := a.(A); ok {
			return h(own)
		}
		return nil
	}}
}

// ReceiveAll makes a route for each of paths, all taking method and
// answered by h (one receiver that tells the paths apart).
func ReceiveAll[A any](method string, h func(A) http.Handler, paths ...string) []WebhookRoute {
	out := make([]WebhookRoute, len(paths))
	for i, p := range paths {
		out[i] = Receive(method, p, h)
	}
	return out
}

// Handler is the route's receiver on a, nil when a is not an adapter of
// the route's type.
func (r WebhookRoute) Handler(a Adapter) http.Handler {
	if r.handler == nil || a == nil {
		return nil
	}
	return r.handler(a)
}

// PathOf is the public path of one of the type's routes.
func (t Type) PathOf(r WebhookRoute) string { return "/providers/" + t.Name + "/" + r.Path }

// Receiver serves every webhook route of the type on adapter a, at their
// public paths: what the API mounts, for one adapter (adapter tests post
// to it).
func (t Type) Receiver(a Adapter) http.Handler {
	mux := http.NewServeMux()
	for _, r := range t.Webhooks {
		if h := r.Handler(a); h != nil {
			mux.Handle(r.Method+" "+t.PathOf(r), h)
		}
	}
	return mux
}

// checkRoutes holds a type's routes and their OpenAPI description to each
// other: every route is a path item's operation, every operation a route,
// so that what is served and what is published cannot drift apart.
func (t Type) checkRoutes() error {
	if len(t.Webhooks) == 0 && len(t.OpenAPI) == 0 {
		return nil
	}
	var items map[string]map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(t.OpenAPI))
	if err := dec.Decode(&items); err != nil {
		return fmt.Errorf("provider type %q: its routes' OpenAPI path items: %w", t.Name, err)
	}
	var documented []string
	for path, ops := range items {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	var served []string
	for _, r := range t.Webhooks {
		if r.handler == nil || r.Method != strings.ToUpper(r.Method) || r.Path == "" || strings.HasPrefix(r.Path, "/") {
			return fmt.Errorf("provider type %q: route %s %q not made by Receive, or its path not relative", t.Name, r.Method, r.Path)
		}
		served = append(served, r.Method+" "+t.PathOf(r))
	}
	slices.Sort(documented)
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		return fmt.Errorf("provider type %q: routes %v, but its OpenAPI path items describe %v", t.Name, served, documented)
	}
	return nil
}
