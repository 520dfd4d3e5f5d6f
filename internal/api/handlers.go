package api

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
)

type balanceResponse struct {
	Balance     float64   `json:"balance"`
	Currency    string    `json:"currency"`
	LastUpdated view.Time `json:"last_updated"`
}

func (s *Server) balance(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	// The account was read with the key a moment ago; read again so the
	// balance is current even under a burst of sends.
	a, err := s.cfg.Store.Account(r.Context(), c.Account.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, balanceResponse{Balance: ledger.Credits(a.Balance), Currency: a.Currency,
		LastUpdated: view.Time(a.BalanceUpdatedAt)})
	return nil
}

const maxIdempotencyKey = 255

func idempotencyKey(r *http.Request) (string, error) {
	k := r.Header.Get("Idempotency-Key")
	if len(k) > maxIdempotencyKey {
		return "", fieldError("Idempotency-Key", "must be at most 255 characters")
	}
	return k, nil
}

// requestHash identifies a request for idempotency: same key, same hash
// means the same request.
func requestHash(r *http.Request, body []byte) string {
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.Path + "?" + r.URL.RawQuery + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Server) send(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	idem, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	dry, err := boolParam(r, "dryRun")
	if err != nil {
		return err
	}
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	var req sendWire
	if err := decodeJSON(body, &req); err != nil {
		return err
	}
	if dry && c.AuthVersion != 0 {
		// A dry run commits nothing, so nothing would check the cache's
		// answer: read the key and its account afresh.
		var ok bool
		if c, ok = s.reauth(w, r); !ok {
			return nil
		}
	}
	opt := intake.SendOptions{DryRun: dry}
	if idem != "" && !dry {
		opt.Idempotency = &intake.IdempotencyKey{Key: idem, RequestHash: requestHash(r, body),
			Response: func(rc intake.Receipt) (int, []byte, error) {
				b, err := jsonBody(view.OfReceipt(rc))
				return http.StatusAccepted, b, err
			}}
	}
	out, err := s.cfg.Sends.Send(r.Context(), c.Principal(), req.request(), opt)
	if err != nil && c.AuthVersion != 0 && (errors.Is(err, message.ErrStaleAuth) || toProblem(err).Status < 500) {
		// The caller came from the key cache, unchecked: the send found the
		// auth counter moved (ErrStaleAuth), or was refused on the strength
		// of account settings that may have changed since. Either way
		// nothing was written (a failure of our own, which may have left
		// the send committed, is not retried); read the key afresh and
		// send again.
		var ok bool
		if c, ok = s.reauth(w, r); !ok {
			return nil
		}
		out, err = s.cfg.Sends.Send(r.Context(), c.Principal(), req.request(), opt)
	}
	if err != nil {
		return restRefusal(err, req.To != "")
	}
	if out.Replay != nil {
		w.Header().Set("Idempotent-Replayed", "true")
		writeRaw(w, out.Replay.StatusCode, out.Replay.Response)
		return nil
	}
	status := http.StatusAccepted
	if dry {
		status = http.StatusOK
	}
	writeJSON(w, status, view.OfReceipt(out.Receipt))
	return nil
}

func boolParam(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fieldError(name, "must be true or false")
	}
	return b, nil
}

func (s *Server) getMessage(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	m, err := s.cfg.Messages.Get(r.Context(), c.Scope(), r.PathValue("messageId"))
	return answer(w, http.StatusOK, m, err, view.OfMessage)
}

func (s *Server) cancelMessage(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	m, err := s.cfg.Messages.Cancel(r.Context(), c.Scope(), r.PathValue("messageId"))
	return answer(w, http.StatusOK, m, err, view.OfMessage)
}

func (s *Server) getCampaign(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	limit, err := limitParam(r.URL.Query())
	if err != nil {
		return fieldError("limit", "must be a whole number from 1 to 1000")
	}
	after := ""
	if cur := r.URL.Query().Get("cursor"); cur != "" {
		b, err := base64.RawURLEncoding.DecodeString(cur)
		if err != nil || !strings.HasPrefix(string(b), "msg_") {
			return fieldError("cursor", "is not a cursor this API returned")
		}
		after = string(b)
	}
	p, err := s.cfg.Messages.Campaign(r.Context(), c.Scope(), r.PathValue("campaignId"), after, limit)
	if err != nil {
		return err
	}
	v := view.Campaign{CampaignID: p.Campaign.ID, Status: p.Status, Type: p.Campaign.Type, CreatedAt: view.Time(p.Campaign.CreatedAt),
		Total: p.Campaign.Total, Counts: p.Counts, Messages: view.Messages(p.Messages)}
	if p.Next != "" {
		enc := base64.RawURLEncoding.EncodeToString([]byte(p.Next))
		v.NextCursor = &enc
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) cancelCampaign(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	ms, err := s.cfg.Messages.CancelCampaign(r.Context(), c.Scope(), r.PathValue("campaignId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view.CampaignCancel{CampaignID: r.PathValue("campaignId"), Canceled: len(ms), Messages: view.Messages(ms)})
	return nil
}

type testReplyRequest struct {
	From    string `json:"from"`
	Message string `json:"message"`
	Channel string `json:"channel"`
}

func (s *Server) testReply(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	if !c.Test() {
		return problem("FORBIDDEN", "Test replies can only be injected with a test key (svc_test_).")
	}
	var req testReplyRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	var fields []domain.FieldError
	from, err := phone.Parse(req.From)
	if err != nil {
		fields = append(fields, domain.FieldError{Field: "from", Message: err.Error()})
	}
	if strings.TrimSpace(req.Message) == "" || len([]rune(req.Message)) > 1000 {
		fields = append(fields, domain.FieldError{Field: "message", Message: "is required, at most 1000 characters"})
	}
	ch := domain.SMS
	if req.Channel != "" {
		var err error
		if ch, err = domain.ParseChannel(req.Channel); err != nil || strings.TrimSpace(req.Channel) != req.Channel {
			fields = append(fields, domain.FieldError{Field: "channel", Message: "must be SMS, WHATSAPP or RCS"})
		}
	}
	if len(fields) > 0 {
		return validation("The reply is not valid.", fields...)
	}
	cid, err := s.cfg.Replies.Receive(r.Context(), "simulator", provider.Inbound{AccountID: c.Account.ID, Env: c.Key.Env,
		From: from.Digits, Channel: ch, Body: req.Message})
	if err != nil {
		return err
	}
	out := map[string]any{"accepted": true, "campaignId": nil}
	if cid != "" {
		out["campaignId"] = cid
	}
	writeJSON(w, http.StatusAccepted, out)
	return nil
}

// idempotent gives any POST the Idempotency-Key behaviour. Sends do it
// inside their own transaction; for the others the answer is remembered
// after the handler ran, which is enough because they are safe to repeat.
func (s *Server) idempotent(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request, c message.Caller) error {
		key, err := idempotencyKey(r)
		if err != nil || key == "" {
			if err != nil {
				return err
			}
			return h(w, r, c)
		}
		body, err := readBody(w, r)
		if err != nil {
			return err
		}
		hash := requestHash(r, body)
		if replayed, err := s.replay(w, r, c, key, hash); replayed || err != nil {
			return err
		}
		r.Body = http.NoBody
		rec := &captureWriter{ResponseWriter: w}
		r2 := r.Clone(r.Context())
		r2.Body = newBody(body)
		if err := h(rec, r2, c); err != nil {
			return err
		}
		if rec.status < 300 {
			return s.cfg.Store.SaveIdempotency(r.Context(), domain.Idempotency{KeyID: c.Key.ID, Key: key,
				RequestHash: hash, StatusCode: rec.status, Response: rec.body, CreatedAt: s.cfg.Now().UTC()})
		}
		return nil
	}
}

// replay answers a request whose Idempotency-Key was seen before: with the
// remembered response when the request is the same (replayed true), or
// with IDEMPOTENCY_CONFLICT when it differs. A new key replays nothing.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, c message.Caller, key, hash string) (bool, error) {
	prev, err := s.cfg.Store.Idempotency(r.Context(), c.Key.ID, key)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case prev.RequestHash != hash:
		return false, toProblem(domain.ErrIdempotencyConflict)
	}
	w.Header().Set("Idempotent-Replayed", "true")
	writeRaw(w, prev.StatusCode, prev.Response)
	return true, nil
}
