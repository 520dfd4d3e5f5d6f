package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// maxJSONBody bounds JSON request bodies: a full 1000-recipient batch with
// a long text is far below it.
const maxJSONBody = 1 << 20

var errTooLarge = problem("PAYLOAD_TOO_LARGE", "The request body is larger than 1 MiB.")

// readBody reads a JSON request body within the size limit.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return nil, problem("UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json.")
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, errTooLarge
	}
	if err != nil {
		return nil, validation("The request body could not be read.")
	}
	return body, nil
}

// decodeJSON parses body strictly: unknown fields and wrong types are
// reported with the field's name, so a typo never passes silently.
func decodeJSON(body []byte, v any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return validation("The request body is empty; send a JSON object.")
	}
	if err := checkStrict(body); err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			field := te.Field
			if field == "" {
				return validation("The request body must be a JSON object.")
			}
			return fieldError(field, fmt.Sprintf("must be a %s", jsonKind(te.Type.Kind().String())))
		case errors.As(err, &se):
			return validation(fmt.Sprintf("The request body is not valid JSON (at byte %d).", se.Offset))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return fieldError(name, "is not a known field")
		}
		return validation("The request body is not valid JSON.")
	}
	if dec.More() {
		return validation("The request body must hold a single JSON object.")
	}
	return nil
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "string"
	case "slice", "array":
		return "array"
	case "struct", "map":
		return "object"
	case "bool":
		return "boolean"
	}
	return "number"
}
