package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"maps"
	"slices"
	"strconv"
	"strings"
)

//go:embed docs.html.tmpl
var pageTemplate string

// The view types below are what the template sees: everything is decided
// here in Go, so the template only lays things out.

type pageView struct {
	Title, Version, Summary string
	Intro                   template.HTML
	Security                []securityView
	Errors                  []errorView
	// Shared are the error answers many operations share, shown once;
	// the operations link to them.
	Shared   []responseView
	Headers  []headerView
	Groups   []groupView
	Webhooks []operationView
	Schemas  []namedSchemaView
}

type securityView struct {
	Name, How   string
	Description template.HTML
}

type errorView struct {
	Code        string
	Status      int
	Description template.HTML
}

type groupView struct {
	Name, Anchor string
	Description  template.HTML
	Ops          []operationView
}

type operationView struct {
	Anchor, Method, Path, OperationID, Summary, Auth string
	Description                                      template.HTML
	Params                                           []paramView
	Body                                             *bodyView
	Responses                                        []responseView
}

type paramView struct {
	Name, In    string
	Required    bool
	Type        template.HTML
	Constraints string
	Description template.HTML
}

type bodyView struct {
	ContentType string
	Schema      blockView
	Examples    []exampleView
}

type responseView struct {
	// Anchor is set on a shared answer in the Errors section; Link on an
	// operation's answer that points there instead of repeating it.
	Anchor, Link string
	Status       string
	Class        string // "ok" or "err", for colour
	Open         bool
	Description  template.HTML
	Codes        []string
	Headers      []headerView
	Content      []bodyView
}

type headerView struct {
	Name        string
	Required    bool
	Type        template.HTML
	Description template.HTML
}

type exampleView struct {
	Name, Summary string
	Text          template.HTML
}

// blockView shows one schema: a link to it when it is named, and then its
// fields, variants, rules or enum, whichever apply.
type blockView struct {
	Type     template.HTML
	Expanded bool
	Fields   []fieldView
	Rules    []template.HTML
	Variants []template.HTML
	Enum     []string
}

type fieldView struct {
	Name        string
	Depth       int
	Required    bool
	Type        template.HTML
	Constraints string
	Description template.HTML
}

type namedSchemaView struct {
	Name, Anchor string
	Description  template.HTML
	Block        blockView
}

// maxFieldDepth bounds how far inline objects are unfolded into dotted rows.
const maxFieldDepth = 4

func renderPage(doc *document) ([]byte, error) {
	tmpl, err := template.New("docs").Funcs(template.FuncMap{
		"lower": strings.ToLower,
	}).Parse(pageTemplate)
	if err != nil {
		return nil, fmt.Errorf("parse docs template: %w", err)
	}
	view, err := buildPage(doc)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, view); err != nil {
		return nil, fmt.Errorf("render docs page: %w", err)
	}
	return dropBlankLines(buf.Bytes()), nil
}

// dropBlankLines removes the empty lines the template's actions leave,
// outside <pre> elements, where every line counts.
func dropBlankLines(page []byte) []byte {
	var out bytes.Buffer
	inPre := false
	for line := range bytes.Lines(page) {
		if bytes.Contains(line, []byte("<pre")) {
			inPre = true
		}
		if inPre || len(bytes.TrimSpace(line)) > 0 {
			out.Write(line)
		}
		if bytes.Contains(line, []byte("</pre>")) {
			inPre = false
		}
	}
	return out.Bytes()
}

func buildPage(doc *document) (*pageView, error) {
	r := &renderer{doc: doc, shared: map[*response]string{}, used: map[string]bool{}}
	for _, c := range doc.Components.Responses {
		r.shared[c.Value] = c.Key
	}
	v := &pageView{
		Title:   doc.Info.Title,
		Version: doc.Info.Version,
		Summary: doc.Info.Summary,
		Intro:   formatText(doc.Info.Description),
	}
	for _, s := range doc.Components.SecuritySchemes {
		v.Security = append(v.Security, securityView{
			Name: s.Key, How: schemeHow(s.Value), Description: formatText(s.Value.Description),
		})
	}
	if codes, ok := doc.Components.Schemas.get("ErrorCode"); ok {
		for _, c := range codes.ErrorCodes {
			v.Errors = append(v.Errors, errorView{Code: c.Code, Status: c.Status, Description: formatText(c.Description)})
		}
	}
	for _, h := range doc.Components.Headers {
		v.Headers = append(v.Headers, r.header(h.Key, h.Value))
	}

	groups := map[string]*groupView{}
	var order []string
	for _, t := range doc.Tags {
		groups[t.Name] = &groupView{Name: t.Name, Anchor: "tag-" + slug(t.Name), Description: formatText(t.Description)}
		order = append(order, t.Name)
	}
	for _, p := range doc.Paths {
		for _, mo := range p.Value.operations() {
			name := "Other"
			if len(mo.Op.Tags) > 0 {
				name = mo.Op.Tags[0]
			}
			g, ok := groups[name]
			if !ok {
				g = &groupView{Name: name, Anchor: "tag-" + slug(name)}
				groups[name] = g
				order = append(order, name)
			}
			op, err := r.operation(mo.Method, p.Key, mo.Op)
			if err != nil {
				return nil, err
			}
			g.Ops = append(g.Ops, op)
		}
	}
	for _, name := range order {
		// Tags that only describe webhooks have no paths of their own.
		if g := groups[name]; len(g.Ops) > 0 {
			v.Groups = append(v.Groups, *g)
		}
	}
	for _, w := range doc.Webhooks {
		for _, mo := range w.Value.operations() {
			op, err := r.operation(mo.Method, w.Key, mo.Op)
			if err != nil {
				return nil, err
			}
			op.Anchor = "webhook-" + slug(w.Key)
			v.Webhooks = append(v.Webhooks, op)
		}
	}
	for _, s := range doc.Components.Schemas {
		v.Schemas = append(v.Schemas, namedSchemaView{
			Name:        s.Key,
			Anchor:      "schema-" + s.Key,
			Description: formatText(s.Value.Description),
			Block:       r.block(s.Value, true),
		})
	}
	v.Shared = r.sharedViews
	return v, nil
}

type renderer struct {
	doc *document
	// shared names the components.responses entries, which the document
	// resolves in place: an operation's answer is shared when it is one
	// of these pointers.
	shared map[*response]string
	used   map[string]bool
	// sharedViews are the shared answers in the order first used.
	sharedViews []responseView
}

func (r *renderer) operation(method, path string, op *operation) (operationView, error) {
	v := operationView{
		Anchor:      "op-" + op.OperationID,
		Method:      method,
		Path:        path,
		OperationID: op.OperationID,
		Summary:     op.Summary,
		Description: formatText(op.Description),
		Auth:        r.auth(op),
	}
	for _, p := range op.Parameters {
		v.Params = append(v.Params, paramView{
			Name:        p.Name,
			In:          p.In,
			Required:    p.Required,
			Type:        r.typeHTML(p.Schema),
			Constraints: r.constraints(p.Schema),
			Description: formatText(p.Description),
		})
	}
	// Every request body of this API has exactly one media type.
	if rb := op.RequestBody; rb != nil && len(rb.Content) > 0 {
		c := rb.Content[0]
		b, err := r.body(c.Key, c.Value, true)
		if err != nil {
			return v, fmt.Errorf("%s %s request body: %w", method, path, err)
		}
		v.Body = &b
	}
	for _, e := range op.Responses {
		resp, err := r.response(e.Key, e.Value)
		if err != nil {
			return v, fmt.Errorf("%s %s response %s: %w", method, path, e.Key, err)
		}
		if name, ok := r.shared[e.Value]; ok && resp.Class == "err" {
			resp = r.link(name, resp)
		}
		v.Responses = append(v.Responses, resp)
	}
	return v, nil
}

// link records a shared error answer, to be shown once in full, and
// returns the short form an operation shows: its status and codes,
// pointing to the full one. Repeating every shared answer's
// examples under each operation made the page weigh most of a megabyte.
func (r *renderer) link(name string, full responseView) responseView {
	anchor := "response-" + name
	if !r.used[name] {
		r.used[name] = true
		full.Anchor = anchor
		r.sharedViews = append(r.sharedViews, full)
	}
	return responseView{Link: anchor, Status: full.Status, Class: full.Class, Codes: full.Codes}
}

func (r *renderer) response(status string, resp *response) (responseView, error) {
	v := responseView{
		Status:      status,
		Class:       "err",
		Description: formatText(resp.Description),
	}
	if strings.HasPrefix(status, "2") {
		v.Class, v.Open = "ok", true
	}
	for _, h := range resp.Headers {
		v.Headers = append(v.Headers, r.header(h.Key, h.Value))
	}
	for _, c := range resp.Content {
		// Problem documents all share one schema, explained once in the
		// Errors section; repeating its table under every error would bury
		// the examples. A named schema is explained once too, in Schemas,
		// and linked: unfolding it under every answer made the page weigh
		// most of a megabyte.
		expand := c.Key != "application/problem+json" && (c.Value.Schema == nil || c.Value.Schema.Ref == "")
		b, err := r.body(c.Key, c.Value, expand)
		if err != nil {
			return v, err
		}
		v.Content = append(v.Content, b)
		for _, ex := range c.Value.Examples {
			var p struct {
				Code string `json:"code"`
			}
			if json.Unmarshal(ex.Value.Value, &p) == nil && p.Code != "" && !slices.Contains(v.Codes, p.Code) {
				v.Codes = append(v.Codes, p.Code)
			}
		}
	}
	return v, nil
}

func (r *renderer) body(contentType string, mt *mediaType, expand bool) (bodyView, error) {
	v := bodyView{ContentType: contentType, Schema: r.block(mt.Schema, expand)}
	for _, ex := range mt.Examples {
		text, err := exampleText(ex.Value.Value)
		if err != nil {
			return v, fmt.Errorf("example %s: %w", ex.Key, err)
		}
		v.Examples = append(v.Examples, exampleView{Name: ex.Key, Summary: ex.Value.Summary, Text: preText(text)})
	}
	return v, nil
}

// preText escapes text for a <pre> element. Quotes need no escaping
// there, and JSON is full of them: html/template's &#34; for each made the
// examples half again as heavy.
func preText(s string) template.HTML {
	return template.HTML(strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s))
}

// exampleText pretty-prints a JSON example, keeping its key order; a bare
// string (a text/plain example) is shown as the text itself.
func exampleText(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return "", fmt.Errorf("indent: %w", err)
	}
	return buf.String(), nil
}

func (r *renderer) header(name string, h *header) headerView {
	return headerView{
		Name:        name,
		Required:    h.Required,
		Type:        r.typeHTML(h.Schema),
		Description: formatText(h.Description),
	}
}

func (r *renderer) auth(op *operation) string {
	reqs := r.doc.Security
	if op.Security != nil {
		reqs = *op.Security
	}
	var ways []string
	for _, req := range reqs {
		// Schemes within one requirement are all needed together.
		var all []string
		for _, name := range slices.Sorted(maps.Keys(req)) {
			if s, ok := r.doc.Components.SecuritySchemes.get(name); ok {
				all = append(all, schemeHow(s))
			}
		}
		if len(all) > 0 {
			ways = append(ways, strings.Join(all, " + "))
		}
	}
	if len(ways) == 0 {
		return "none"
	}
	return strings.Join(ways, " or ")
}

func schemeHow(s *securityScheme) string {
	switch {
	case s.Type == "apiKey":
		return s.Name + " " + s.In
	case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		return "Authorization: Bearer"
	default:
		return s.Type
	}
}

// block describes schema s. With expand set, a named schema is unfolded
// into its fields (or variants, rules, enum); otherwise only linked.
func (r *renderer) block(s *schema, expand bool) blockView {
	v := blockView{Type: r.typeHTML(s)}
	if s == nil || !expand {
		return v
	}
	t := s
	if s.Ref != "" {
		t = r.doc.schemaByRef(s.Ref)
	}
	v.Expanded = true
	v.Fields = r.fields(t, "", 0)
	for _, alt := range t.OneOf {
		if alt.Ref != "" {
			v.Variants = append(v.Variants, r.typeHTML(alt))
		}
	}
	if rule := requiredRule("Exactly one of", t.OneOf); rule != "" {
		v.Rules = append(v.Rules, rule)
	}
	if rule := requiredRule("At least one of", t.AnyOf); rule != "" {
		v.Rules = append(v.Rules, rule)
	}
	v.Rules = append(v.Rules, negatedRules(t.Not)...)
	for _, e := range t.Enum {
		v.Enum = append(v.Enum, jsonLiteral(e))
	}
	return v
}

// requiredRule turns alternatives that only differ in which field is
// required (how "to or recipients" is written) into one readable rule.
func requiredRule(lead string, alts []*schema) template.HTML {
	var names []string
	for _, a := range alts {
		if len(a.Required) != 1 || a.Ref != "" || len(a.Properties) > 0 {
			return ""
		}
		names = append(names, "<code>"+html.EscapeString(a.Required[0])+"</code>")
	}
	if len(names) == 0 {
		return ""
	}
	return template.HTML(lead + " " + strings.Join(names, ", ") + ".")
}

// negatedRules reads the rules that a schema states as what must not hold,
// the form that code generators take without inventing types for it:
// "not any of: both a and b; neither a nor b" reads "Exactly one of a, b",
// and a "neither" alone reads "At least one of".
func negatedRules(not *schema) []template.HTML {
	if not == nil {
		return nil
	}
	both := map[string]bool{}
	var groups [][]string
	for _, alt := range not.AnyOf {
		switch {
		case len(alt.Required) == 2 && alt.Not == nil:
			both[strings.Join(alt.Required, ",")] = true
		case alt.Not != nil && len(alt.Required) == 0:
			var names []string
			for _, a := range alt.Not.AnyOf {
				if len(a.Required) != 1 {
					return nil
				}
				names = append(names, a.Required[0])
			}
			groups = append(groups, names)
		}
	}
	var out []template.HTML
	for _, g := range groups {
		lead := "At least one of"
		if len(g) == 2 && both[strings.Join(g, ",")] {
			lead = "Exactly one of"
		}
		alts := make([]*schema, len(g))
		for i, name := range g {
			alts[i] = &schema{Required: []string{name}}
		}
		out = append(out, requiredRule(lead, alts))
	}
	return out
}

func (r *renderer) fields(s *schema, prefix string, depth int) []fieldView {
	if s == nil || depth >= maxFieldDepth {
		return nil
	}
	var out []fieldView
	for _, sub := range s.AllOf {
		t := sub
		if sub.Ref != "" {
			t = r.doc.schemaByRef(sub.Ref)
		}
		out = append(out, r.fields(t, prefix, depth)...)
	}
	for _, p := range s.Properties {
		prop := p.Value
		out = append(out, fieldView{
			Name:        prefix + p.Key,
			Depth:       depth,
			Required:    s.isRequired(p.Key),
			Type:        r.typeHTML(prop),
			Constraints: r.constraints(prop),
			Description: formatText(prop.Description),
		})
		switch {
		case len(prop.Properties) > 0:
			out = append(out, r.fields(prop, prefix+p.Key+".", depth+1)...)
		case prop.Items != nil && len(prop.Items.Properties) > 0:
			out = append(out, r.fields(prop.Items, prefix+p.Key+"[].", depth+1)...)
		}
	}
	return out
}

// typeHTML names the type of s, linking named schemas to their section.
func (r *renderer) typeHTML(s *schema) template.HTML {
	if s == nil {
		return ""
	}
	if s.Ref != "" {
		name := html.EscapeString(refName(s.Ref))
		return template.HTML(`<a href="#schema-` + name + `">` + name + `</a>`)
	}
	if s.ContentMediaType != "" {
		return "binary file"
	}
	var parts []string
	for _, t := range s.Type {
		switch {
		case t == "array" && s.Items != nil:
			parts = append(parts, "array of "+string(r.typeHTML(s.Items)))
		case t == "string" && s.Format != "" && s.Format != "password":
			parts = append(parts, "string ("+html.EscapeString(s.Format)+")")
		default:
			parts = append(parts, html.EscapeString(t))
		}
	}
	if len(parts) == 0 {
		for _, alt := range s.OneOf {
			parts = append(parts, string(r.typeHTML(alt)))
		}
	}
	return template.HTML(strings.Join(parts, " | "))
}

// constraints lists the validation keywords of s in words. For a reference
// to a plain value schema (a phone number, a channel) the target's
// constraints are shown too, since that is what the field must satisfy.
func (r *renderer) constraints(s *schema) string {
	if s == nil {
		return ""
	}
	var out []string
	if s.Ref != "" {
		if t := r.doc.schemaByRef(s.Ref); t != nil && len(t.Properties) == 0 && len(t.OneOf) == 0 {
			if c := r.constraints(t); c != "" {
				out = append(out, c)
			}
		}
	}
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			vals[i] = jsonLiteral(e)
		}
		out = append(out, "one of "+strings.Join(vals, ", "))
	}
	if len(s.EnumAnyCase) > 0 {
		out = append(out, "one of "+strings.Join(s.EnumAnyCase, ", ")+", in any letter case")
	}
	if len(s.Const) > 0 {
		out = append(out, "always "+jsonLiteral(s.Const))
	}
	out = append(out, rangeText(s.MinLength, s.MaxLength, "characters")...)
	out = append(out, rangeText(s.MinItems, s.MaxItems, "items")...)
	if s.Minimum != nil {
		out = append(out, "min "+strconv.FormatFloat(*s.Minimum, 'f', -1, 64))
	}
	if s.Maximum != nil {
		out = append(out, "max "+strconv.FormatFloat(*s.Maximum, 'f', -1, 64))
	}
	if s.Pattern != "" && len(s.EnumAnyCase) == 0 {
		out = append(out, "pattern "+s.Pattern)
	}
	if len(s.Default) > 0 {
		out = append(out, "default "+jsonLiteral(s.Default))
	}
	return strings.Join(out, "; ")
}

func rangeText(lo, hi *int, unit string) []string {
	switch {
	case lo != nil && hi != nil && *lo == *hi:
		return []string{fmt.Sprintf("exactly %d %s", *lo, unit)}
	case lo != nil && hi != nil:
		return []string{fmt.Sprintf("%d–%d %s", *lo, *hi, unit)}
	case lo != nil:
		return []string{fmt.Sprintf("at least %d %s", *lo, unit)}
	case hi != nil:
		return []string{fmt.Sprintf("at most %d %s", *hi, unit)}
	}
	return nil
}

// jsonLiteral shows a JSON value compactly: strings without quotes.
func jsonLiteral(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// formatText turns the document's plain descriptions into HTML: blank lines
// separate paragraphs and `backticks` mark code. Everything is escaped first,
// so no text from the document can inject markup.
func formatText(s string) template.HTML {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	paras := strings.Split(s, "\n\n")
	var b strings.Builder
	for _, p := range paras {
		switch {
		case isList(p):
			b.WriteString("<ul>")
			for _, line := range strings.Split(p, "\n") {
				b.WriteString("<li>" + codeSpans(strings.TrimPrefix(line, "- ")) + "</li>")
			}
			b.WriteString("</ul>")
		case len(paras) > 1:
			b.WriteString("<p>" + codeSpans(p) + "</p>")
		default:
			b.WriteString(codeSpans(p))
		}
	}
	return template.HTML(b.String())
}

// isList reports whether every line of a paragraph is a "- " item.
func isList(p string) bool {
	for _, line := range strings.Split(p, "\n") {
		if !strings.HasPrefix(line, "- ") {
			return false
		}
	}
	return true
}

func codeSpans(s string) string {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // unbalanced: leave the backticks alone
		return strings.ReplaceAll(html.EscapeString(s), "\n", "<br>")
	}
	var b strings.Builder
	for i, part := range parts {
		esc := strings.ReplaceAll(html.EscapeString(part), "\n", "<br>")
		if i%2 == 1 {
			b.WriteString("<code>" + esc + "</code>")
		} else {
			b.WriteString(esc)
		}
	}
	return b.String()
}

// slug makes an HTML id out of a tag or webhook name.
func slug(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
			b.WriteRune(c)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
