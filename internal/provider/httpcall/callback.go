package httpcall

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"
)

// MaxCallback bounds a callback's body; the providers' are far smaller.
const MaxCallback = 1 << 20

// MaxSkew is how far a signed callback's timestamp may be from our clock:
// an older one is refused as a replay.
const MaxSkew = 5 * time.Minute

// ReadBody reads a callback's body, answering the problem itself when it
// cannot (ok false).
func ReadBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxCallback))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			Problem(w, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "The callback is larger than 1 MiB.")
			return nil, false
		}
		Problem(w, http.StatusBadRequest, "VALIDATION_ERROR", "The callback body could not be read.")
		return nil, false
	}
	return body, true
}

// Fresh reports whether a callback signed at "at" is within MaxSkew of now.
func Fresh(at, now time.Time) bool {
	d := now.Sub(at)
	return d <= MaxSkew && d >= -MaxSkew
}

// Problem answers as the API does everywhere: RFC 9457 problem+json with
// a code of its catalogue and the request id the API's middleware set.
func Problem(w http.ResponseWriter, status int, code, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Type      string `json:"type"`
		Title     string `json:"title"`
		Status    int    `json:"status"`
		Code      string `json:"code"`
		Detail    string `json:"detail"`
		RequestID string `json:"requestId,omitempty"`
	}{"about:blank", http.StatusText(status), status, code, detail, w.Header().Get("X-Request-Id")})
}

// OnlyPost answers 405 to anything but POST (ok false).
func OnlyPost(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodPost {
		return true
	}
	w.Header().Set("Allow", "POST")
	Problem(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "This path takes POST.")
	return false
}

// Unsigned answers a callback whose signature is missing, wrong or stale.
func (c *Client) Unsigned(w http.ResponseWriter, r *http.Request, why string) {
	c.Counts.BadSignatures.Add(1)
	c.log.Warn(c.s.Provider+" callback refused: "+why, "provider", c.s.Name, "path", r.URL.Path, "remote", r.RemoteAddr)
	Problem(w, http.StatusUnauthorized, "INVALID_SIGNATURE", why)
}

// NotStored answers a callback the Sink could not store: the provider
// sends it again.
func (c *Client) NotStored(w http.ResponseWriter, err error) {
	c.log.Error(c.s.Provider+" callback not stored; the provider will send it again", "provider", c.s.Name, "err", err)
	Problem(w, http.StatusInternalServerError, "INTERNAL", "The callback could not be stored; send it again.")
}

// ReadCallback takes a callback's POST body, answering the problem itself
// when it cannot (ok false).
func ReadCallback(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	if !OnlyPost(w, r) {
		return nil, false
	}
	return ReadBody(w, r)
}
