package openapi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// parse decodes the document and replaces every parameter, response and
// header $ref by the component it names, so that the renderer never meets a
// reference it cannot follow. Schema references stay in place (the page links
// to named schemas instead of inlining them) but are checked to resolve.
func parse(b []byte) (*document, error) {
	var doc document
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("decode OpenAPI document: %w", err)
	}
	r := resolver{doc: &doc}
	for _, c := range doc.Components.Responses {
		if err := r.responseHeaders(c.Value); err != nil {
			return nil, fmt.Errorf("components.responses.%s: %w", c.Key, err)
		}
	}
	for _, c := range doc.Components.Schemas {
		if err := r.schema(c.Value); err != nil {
			return nil, fmt.Errorf("components.schemas.%s: %w", c.Key, err)
		}
	}
	for _, group := range []ordered[*pathItem]{doc.Paths, doc.Webhooks} {
		for _, p := range group {
			for _, mo := range p.Value.operations() {
				if err := r.operation(mo.Op); err != nil {
					return nil, fmt.Errorf("%s %s: %w", mo.Method, p.Key, err)
				}
			}
		}
	}
	return &doc, nil
}

type resolver struct {
	doc *document
}

func lookup[T any](set ordered[T], ref, prefix string) (T, error) {
	name, ok := strings.CutPrefix(ref, prefix)
	if ok {
		if v, found := set.get(name); found {
			return v, nil
		}
	}
	var zero T
	return zero, fmt.Errorf("unresolved $ref %q", ref)
}

func (r resolver) operation(op *operation) error {
	for i, p := range op.Parameters {
		if p.Ref != "" {
			c, err := lookup(r.doc.Components.Parameters, p.Ref, "#/components/parameters/")
			if err != nil {
				return err
			}
			op.Parameters[i] = c
		}
		if err := r.schema(op.Parameters[i].Schema); err != nil {
			return fmt.Errorf("parameter %s: %w", op.Parameters[i].Name, err)
		}
	}
	if op.RequestBody != nil {
		for _, c := range op.RequestBody.Content {
			if err := r.schema(c.Value.Schema); err != nil {
				return fmt.Errorf("request body: %w", err)
			}
		}
	}
	for i, e := range op.Responses {
		if e.Value.Ref != "" {
			c, err := lookup(r.doc.Components.Responses, e.Value.Ref, "#/components/responses/")
			if err != nil {
				return fmt.Errorf("response %s: %w", e.Key, err)
			}
			op.Responses[i].Value = c
		}
		if err := r.responseHeaders(op.Responses[i].Value); err != nil {
			return fmt.Errorf("response %s: %w", e.Key, err)
		}
		for _, c := range op.Responses[i].Value.Content {
			if err := r.schema(c.Value.Schema); err != nil {
				return fmt.Errorf("response %s: %w", e.Key, err)
			}
		}
	}
	return nil
}

func (r resolver) responseHeaders(resp *response) error {
	for i, h := range resp.Headers {
		if h.Value.Ref == "" {
			continue
		}
		c, err := lookup(r.doc.Components.Headers, h.Value.Ref, "#/components/headers/")
		if err != nil {
			return fmt.Errorf("header %s: %w", h.Key, err)
		}
		resp.Headers[i].Value = c
	}
	return nil
}

// schema checks that every schema reference under s names a component.
func (r resolver) schema(s *schema) error {
	if s == nil {
		return nil
	}
	if s.Ref != "" {
		if _, err := lookup(r.doc.Components.Schemas, s.Ref, "#/components/schemas/"); err != nil {
			return err
		}
	}
	for _, p := range s.Properties {
		if err := r.schema(p.Value); err != nil {
			return fmt.Errorf("%s: %w", p.Key, err)
		}
	}
	subs := append([]*schema{s.Items, s.Not}, s.OneOf...)
	subs = append(subs, s.AnyOf...)
	subs = append(subs, s.AllOf...)
	for _, sub := range subs {
		if err := r.schema(sub); err != nil {
			return err
		}
	}
	return nil
}

// schemaByRef returns the component a schema reference names (nil if none).
func (d *document) schemaByRef(ref string) *schema {
	s, _ := lookup(d.Components.Schemas, ref, "#/components/schemas/")
	return s
}

// refName is the component name at the end of a reference.
func refName(ref string) string {
	return ref[strings.LastIndexByte(ref, '/')+1:]
}
