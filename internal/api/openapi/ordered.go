package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// entry is one key of a JSON object whose key order matters.
type entry[T any] struct {
	Key   string
	Value T
}

// ordered decodes a JSON object keeping its key order. The reference page
// follows the order the document was written in (fields, paths, examples),
// which a Go map would lose.
type ordered[T any] []entry[T]

func (o *ordered[T]) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("read object start: %w", err)
	}
	if tok == nil {
		*o = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("want a JSON object, got %v", tok)
	}
	var out ordered[T]
	for dec.More() {
		keyTok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("read key: %w", err)
		}
		key, _ := keyTok.(string) // object keys are always strings
		var v T
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		out = append(out, entry[T]{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("read object end: %w", err)
	}
	*o = out
	return nil
}

// get returns the value under key, if present.
func (o ordered[T]) get(key string) (T, bool) {
	for _, e := range o {
		if e.Key == key {
			return e.Value, true
		}
	}
	var zero T
	return zero, false
}
