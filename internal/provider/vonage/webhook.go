package vonage

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// receive takes Vonage's delivery receipts (StatusPath) and
// inbound SMS (InboundPath), as a POST form or POST JSON. Each must be
// signed (sig over the other parameters with the signature secret, by the
// configured method) with a timestamp within 5 minutes; anything else is
// refused with 401 and nothing is recorded.
func (a *Adapter) receive(w http.ResponseWriter, r *http.Request, body []byte) {
	params, err := readParams(r.Header.Get("Content-Type"), body)
	if err != nil {
		httpcall.Problem(w, http.StatusBadRequest, "VALIDATION_ERROR", "The callback is neither a form nor a JSON object.")
		return
	}
	if why := a.verify(params); why != "" {
		a.Call.Unsigned(w, r, why)
		return
	}
	a.Call.Counts.Callbacks.Add(1)
	switch {
	case strings.HasSuffix(r.URL.Path, "/status"):
		err = a.status(r, params)
	case strings.HasSuffix(r.URL.Path, "/inbound"):
		err = a.inbound(r, params)
	default:
		httpcall.Problem(w, http.StatusNotFound, "NOT_FOUND", "Vonage callbacks go to /providers/vonage/status or /inbound.")
		return
	}
	if err != nil {
		if errors.Is(err, errIncomplete) {
			httpcall.Problem(w, http.StatusBadRequest, "VALIDATION_ERROR", "The callback lacks messageId, msisdn or to.")
			return
		}
		a.Call.NotStored(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

var errIncomplete = errors.New("vonage: incomplete callback")

// readParams reads a form or a JSON object of scalars into one map.
func readParams(contentType string, body []byte) (map[string]string, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	out := map[string]string{}
	if mt == "application/json" {
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, err
		}
		for k, v := range obj {
			switch v := v.(type) {
			case string:
				out[k] = v
			case nil:
			case float64, bool:
				out[k] = fmt.Sprint(v)
			}
		}
		return out, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	for k := range form {
		out[k] = form.Get(k)
	}
	return out, nil
}

// verify says why a callback is refused, "" when it is signed and fresh.
func (a *Adapter) verify(p map[string]string) string {
	sig, ts := p["sig"], p["timestamp"]
	if sig == "" || ts == "" {
		return "The callback is not signed (sig or timestamp missing): turn on Vonage's signed webhooks."
	}
	want := Sign(p, a.cfg.SignatureSecret, a.cfg.SignatureMethod)
	if subtle.ConstantTimeCompare([]byte(strings.ToLower(sig)), []byte(want)) != 1 {
		return "sig does not match the parameters under the signature secret (" + a.cfg.SignatureMethod + ")."
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || !httpcall.Fresh(time.Unix(secs, 0), a.Call.Now()) {
		return "timestamp is more than 5 minutes from this node's clock: refused as a replay."
	}
	return ""
}

// Sign is a callback's sig as Vonage computes it: every parameter but sig,
// sorted by name, as &name=value with & and = in values replaced by _;
// md5hash appends the secret and takes the MD5, the other methods take
// the HMAC keyed with the secret. Lower-case hex.
func Sign(params map[string]string, secret, method string) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		if k != "sig" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	clean := strings.NewReplacer("&", "_", "=", "_")
	var b strings.Builder
	for _, k := range keys {
		b.WriteString("&" + k + "=" + clean.Replace(params[k]))
	}
	var h hash.Hash
	switch method {
	case "", "md5hash":
		h = md5.New()
		_, _ = io.WriteString(h, b.String()+secret)
		return hex.EncodeToString(h.Sum(nil))
	case "md5":
		h = hmac.New(md5.New, []byte(secret))
	case "sha1":
		h = hmac.New(sha1.New, []byte(secret))
	case "sha256":
		h = hmac.New(sha256.New, []byte(secret))
	default:
		h = hmac.New(sha512.New, []byte(secret))
	}
	_, _ = io.WriteString(h, b.String())
	return hex.EncodeToString(h.Sum(nil))
}

func (a *Adapter) status(r *http.Request, p map[string]string) error {
	id := p["messageId"]
	if id == "" {
		return errIncomplete
	}
	st, code, ok := statusOf(p["status"], p["err-code"])
	if !ok {
		return nil
	}
	rep := provider.Status{Ref: id, Status: st, ErrorCode: code, At: a.Call.Now().UTC()}
	if code != "" {
		rep.ErrorMessage = fmt.Sprintf("Vonage %s (err-code %s)", p["status"], p["err-code"])
	}
	return a.Sink.Statuses(r.Context(), a.cfg.Name, []provider.Status{rep})
}

// inbound records an SMS sent to the account's number. A long SMS comes
// in parts (concat-*), each recorded as it comes.
func (a *Adapter) inbound(r *http.Request, p map[string]string) error {
	if p["msisdn"] == "" || p["to"] == "" {
		return errIncomplete
	}
	return a.Sink.Inbound(r.Context(), a.cfg.Name, provider.Inbound{From: phone.Address(p["msisdn"]),
		To: phone.Address(p["to"]), Channel: domain.SMS, Body: p["text"], At: a.Call.Now().UTC(), Ref: p["messageId"]})
}
