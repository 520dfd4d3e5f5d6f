package routing

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/msgsvc/msgsvc/internal/costs"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// reader walks the file's nodes: the top level and each provider's name,
// type and breaker are routing's; a provider's block goes to its type's
// decoder, which fills the adapter's own configuration.
type reader struct {
	source string
	types  *provider.Registry
	// structural are unknown keys and wrong types: they are reported
	// alone, before any rule, as a typo explains the rest.
	structural []error
	problems   []error
}

func (r *reader) config(doc *yaml.Node) Config {
	var c Config
	if doc.Kind == yaml.ScalarNode && doc.Tag == "!!null" {
		return c
	}
	if doc.Kind != yaml.MappingNode {
		r.fail(fmt.Errorf("line %d: the file must be a mapping with providers and routes", doc.Line))
		return c
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		key, val := doc.Content[i], doc.Content[i+1]
		switch key.Value {
		case "providers":
			for _, item := range r.items(val) {
				c.Providers = append(c.Providers, r.provider(item, len(c.Providers)))
			}
		case "currency":
			r.fail(strictDecode(val, &c.Currency))
		case "routes":
			for _, item := range r.items(val) {
				rt := Route{line: item.Line}
				r.fail(strictDecode(item, &rt))
				c.Routes = append(c.Routes, rt)
			}
		default:
			r.fail(unknownKey(key, "routing.Config"))
		}
	}
	return c
}

func (r *reader) items(list *yaml.Node) []*yaml.Node {
	switch {
	case list.Kind == yaml.SequenceNode:
		return list.Content
	case list.Kind == yaml.ScalarNode && list.Tag == "!!null":
		return nil
	}
	r.fail(fmt.Errorf("line %d: must be a list", list.Line))
	return nil
}

func (r *reader) fail(err error) {
	if err != nil {
		r.structural = append(r.structural, Problem{Source: r.source, Msg: err.Error()})
	}
}

func (r *reader) problem(line int, key, format string, args ...any) {
	r.problems = append(r.problems, Problem{Source: r.source, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// provider reads the i-th provider: its name, type and breaker, and its
// type's block, decoded by that type.
func (r *reader) provider(item *yaml.Node, i int) Provider {
	p := Provider{line: item.Line}
	if item.Kind != yaml.MappingNode {
		r.fail(fmt.Errorf("line %d: a provider must be a mapping (name, type and its type's block)", item.Line))
		return p
	}
	blocks := map[string]*yaml.Node{}
	for j := 0; j+1 < len(item.Content); j += 2 {
		key, val := item.Content[j], item.Content[j+1]
		switch key.Value {
		case "name":
			r.fail(strictDecode(val, &p.Name))
		case "type":
			r.fail(strictDecode(val, &p.Type))
		case "breaker":
			r.fail(strictDecode(val, &p.Breaker))
		case "costs":
			p.Costs = r.costs(val, fmt.Sprintf("providers[%d].costs", i))
		default:
			if _, ok := r.types.Type(key.Value); !ok {
				r.fail(unknownKey(key, "routing.Provider"))
				continue
			}
			blocks[key.Value] = val
		}
	}
	key := fmt.Sprintf("providers[%d]", i)
	if len(blocks) > 1 {
		r.problem(p.line, key, "give only the block of its type")
	}
	t, ok := r.types.Type(p.Type)
	if !ok {
		r.problem(p.line, key+".type", "%q is not a provider type: %s", p.Type, strings.Join(r.types.Names(), ", "))
		return p
	}
	block := blocks[p.Type]
	if block == nil {
		r.problem(p.line, key+"."+p.Type, "is required for type %s", p.Type)
		return p
	}
	var decodeErr error
	settings, err := t.Decode(func(into any) error {
		decodeErr = strictDecode(block, into)
		return decodeErr
	})
	if decodeErr != nil {
		r.fail(decodeErr)
		return p
	}
	p.Settings = settings
	r.problems = append(r.problems, settingProblems(r.source, p.line, key+"."+p.Type, settings, err)...)
	return p
}

// settingProblems names each problem of an adapter's configuration by the
// key it was read from (prefix + the field's yaml key).
func settingProblems(source string, line int, prefix string, settings provider.Settings, err error) []error {
	var out []error
	for _, e := range leaves(err) {
		var fe *provider.FieldError
		if !errors.As(e, &fe) {
			out = append(out, Problem{Source: source, Line: line, Key: prefix, Msg: e.Error()})
			continue
		}
		if k := yamlKey(settings, fe.Field); k != "" {
			out = append(out, Problem{Source: source, Line: line, Key: prefix + "." + k, Msg: fe.Msg})
		} else {
			out = append(out, Problem{Source: source, Line: line, Key: prefix, Msg: fe.Field + " " + fe.Msg})
		}
	}
	return out
}

// leaves flattens joined errors.
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, leaves(e)...)
	}
	return out
}

// strictDecode fills into from n, refusing keys into's fields do not name.
func strictDecode(n *yaml.Node, into any) error {
	if n.Kind == yaml.MappingNode {
		if known, typ := yamlKeys(into); known != nil {
			for j := 0; j+1 < len(n.Content); j += 2 {
				if k := n.Content[j]; !known[k.Value] {
					return unknownKey(k, typ)
				}
			}
		}
	}
	if err := n.Decode(into); err != nil {
		return errors.New(yamlMessage(err))
	}
	return nil
}

func unknownKey(key *yaml.Node, typ string) error {
	return fmt.Errorf("line %d: field %s not found in type %s", key.Line, key.Value, typ)
}

// yamlKeys are the keys a struct (behind a pointer) takes, by their yaml
// tags; nil for anything else.
func yamlKeys(into any) (map[string]bool, string) {
	t := reflect.TypeOf(into)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, ""
	}
	known := map[string]bool{}
	addKeys(t, known)
	return known, t.String()
}

// addKeys adds the keys of struct type t, and those of the structs it
// embeds inline (settings several providers share), to known.
func addKeys(t reflect.Type, known map[string]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if _, opts, _ := strings.Cut(f.Tag.Get("yaml"), ","); opts == "inline" && f.Type.Kind() == reflect.Struct {
			addKeys(f.Type, known)
			continue
		}
		if k := fieldKey(f); k != "" {
			known[k] = true
		}
	}
}

// yamlKey is the key of a configuration's Go field, "" when the file does
// not set it.
func yamlKey(settings any, field string) string {
	t := reflect.TypeOf(settings)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return ""
	}
	f, ok := t.FieldByName(field)
	if !ok {
		return ""
	}
	return fieldKey(f)
}

func fieldKey(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return strings.ToLower(f.Name)
	}
	return name
}

// costs reads a provider's rate card: a CSV file's path (relative to the
// configuration file) or an inline map of prefix to cost.
func (r *reader) costs(n *yaml.Node, key string) *costs.Table {
	switch n.Kind {
	case yaml.ScalarNode:
		path := n.Value
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(r.source), path)
		}
		f, err := os.Open(path)
		if err != nil {
			r.problem(n.Line, key, "%v", err)
			return nil
		}
		defer f.Close()
		t, err := costs.ReadCSV(f)
		if err != nil {
			r.problem(n.Line, key, "%s: %v", n.Value, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		return t
	case yaml.MappingNode:
		var m map[string]float64
		if err := n.Decode(&m); err != nil {
			r.fail(errors.New(yamlMessage(err)))
			return nil
		}
		t, err := costs.FromMap(m)
		if err != nil {
			r.problem(n.Line, key, "%v", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		return t
	}
	r.fail(fmt.Errorf("line %d: costs must be a CSV file's path or a map of prefix to cost", n.Line))
	return nil
}
