package app

import (
	"net/http"

	"github.com/msgsvc/msgsvc/internal/api"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
	"github.com/msgsvc/msgsvc/internal/twilio"
)

// twilioFront makes the Twilio-compatible API over the same core as the
// native API: its sends, reads, changes, limiter and allow-lists. Its
// credentials are cached while the auth counter stands, as API keys are.
func (s *Server) twilioFront(limiter ratelimit.Limiter, guard twilio.AuthGuard) http.Handler {
	cfg, st := s.cfg, s.store
	return twilio.New(twilio.Config{Credentials: st, Version: s.authCounter(0).Get,
		Accounts: st, Numbers: st, Sender: s.sends, Messages: s.messages, Eraser: s.tracker,
		Redaction: s.redactor.Redaction(), Limiter: limiter, Guard: guard, ClientAddr: api.Proxies(cfg.TrustedProxies).ClientAddr,
		AllowPrivate: cfg.WebhookAllowPrivate, Now: s.now, Log: s.log})
}
