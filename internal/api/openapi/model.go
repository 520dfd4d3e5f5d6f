package openapi

import (
	"encoding/json"
	"fmt"
	"slices"
)

// The types below cover the part of OpenAPI 3.1 that this document uses and
// the reference page shows; anything else in the JSON is ignored by them.

type document struct {
	OpenAPI    string                `json:"openapi"`
	Info       info                  `json:"info"`
	Tags       []tag                 `json:"tags"`
	Security   []map[string][]string `json:"security"`
	Paths      ordered[*pathItem]    `json:"paths"`
	Webhooks   ordered[*pathItem]    `json:"webhooks"`
	Components components            `json:"components"`
}

type info struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Summary     string `json:"summary"`
	Description string `json:"description"`
}

type tag struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type components struct {
	SecuritySchemes ordered[*securityScheme] `json:"securitySchemes"`
	Parameters      ordered[*parameter]      `json:"parameters"`
	Headers         ordered[*header]         `json:"headers"`
	Responses       ordered[*response]       `json:"responses"`
	Schemas         ordered[*schema]         `json:"schemas"`
}

type securityScheme struct {
	Type         string `json:"type"`
	In           string `json:"in"`
	Name         string `json:"name"`
	Scheme       string `json:"scheme"`
	BearerFormat string `json:"bearerFormat"`
	Description  string `json:"description"`
}

type pathItem struct {
	Get    *operation `json:"get"`
	Put    *operation `json:"put"`
	Post   *operation `json:"post"`
	Patch  *operation `json:"patch"`
	Delete *operation `json:"delete"`
}

// methodOperation is one operation of a path item with its HTTP method.
type methodOperation struct {
	Method string
	Op     *operation
}

// operations lists the item's operations in a fixed method order.
func (p *pathItem) operations() []methodOperation {
	var out []methodOperation
	for _, m := range []methodOperation{
		{"GET", p.Get}, {"POST", p.Post}, {"PUT", p.Put}, {"PATCH", p.Patch}, {"DELETE", p.Delete},
	} {
		if m.Op != nil {
			out = append(out, m)
		}
	}
	return out
}

type operation struct {
	OperationID string                 `json:"operationId"`
	Summary     string                 `json:"summary"`
	Description string                 `json:"description"`
	Tags        []string               `json:"tags"`
	Security    *[]map[string][]string `json:"security"` // nil: the document's default
	Parameters  []*parameter           `json:"parameters"`
	RequestBody *requestBody           `json:"requestBody"`
	Responses   ordered[*response]     `json:"responses"`
}

type parameter struct {
	Ref         string          `json:"$ref"`
	Name        string          `json:"name"`
	In          string          `json:"in"`
	Description string          `json:"description"`
	Required    bool            `json:"required"`
	Schema      *schema         `json:"schema"`
	Example     json.RawMessage `json:"example"`
}

type requestBody struct {
	Description string              `json:"description"`
	Required    bool                `json:"required"`
	Content     ordered[*mediaType] `json:"content"`
}

type response struct {
	Ref         string              `json:"$ref"`
	Description string              `json:"description"`
	Headers     ordered[*header]    `json:"headers"`
	Content     ordered[*mediaType] `json:"content"`
}

type header struct {
	Ref         string          `json:"$ref"`
	Description string          `json:"description"`
	Required    bool            `json:"required"`
	Schema      *schema         `json:"schema"`
	Example     json.RawMessage `json:"example"`
}

type mediaType struct {
	Schema   *schema           `json:"schema"`
	Examples ordered[*example] `json:"examples"`
}

type example struct {
	Summary string          `json:"summary"`
	Value   json.RawMessage `json:"value"`
}

type schema struct {
	Ref              string            `json:"$ref"`
	Type             schemaType        `json:"type"`
	Format           string            `json:"format"`
	Description      string            `json:"description"`
	Enum             []json.RawMessage `json:"enum"`
	Const            json.RawMessage   `json:"const"`
	Default          json.RawMessage   `json:"default"`
	Properties       ordered[*schema]  `json:"properties"`
	Required         []string          `json:"required"`
	Items            *schema           `json:"items"`
	OneOf            []*schema         `json:"oneOf"`
	AnyOf            []*schema         `json:"anyOf"`
	AllOf            []*schema         `json:"allOf"`
	Not              *schema           `json:"not"`
	MinLength        *int              `json:"minLength"`
	MaxLength        *int              `json:"maxLength"`
	Pattern          string            `json:"pattern"`
	Minimum          *float64          `json:"minimum"`
	Maximum          *float64          `json:"maximum"`
	MinItems         *int              `json:"minItems"`
	MaxItems         *int              `json:"maxItems"`
	MinProperties    *int              `json:"minProperties"`
	ContentMediaType string            `json:"contentMediaType"`
	ErrorCodes       []errorCode       `json:"x-error-codes"`
	// EnumAnyCase lists the values a request may name in any letter case:
	// a plain enum could not accept "sms" for SMS, so such fields carry a
	// pattern for validators and this list for people.
	EnumAnyCase []string `json:"x-enum-any-case"`
}

// errorCode is one row of the x-error-codes extension of the ErrorCode
// schema: the enum alone cannot say which HTTP status goes with a code.
type errorCode struct {
	Code        string `json:"code"`
	Status      int    `json:"status"`
	Description string `json:"description"`
}

// schemaType is JSON Schema's "type", which 3.1 allows as a string or a list
// (["string", "null"] replaces 3.0's nullable).
type schemaType []string

func (t *schemaType) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*t = schemaType{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("schema type: %w", err)
	}
	*t = many
	return nil
}

func (s *schema) isRequired(name string) bool {
	return slices.Contains(s.Required, name)
}
