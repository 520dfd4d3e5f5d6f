package api

import (
	"net/http"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
)

type limitWindow struct {
	Limit     int       `json:"limit"`
	Remaining int       `json:"remaining"`
	Reset     view.Time `json:"reset"`
}

type limitsResponse struct {
	Tier   string `json:"tier"`
	Limits struct {
		Tier    limitWindow `json:"tier"`
		Sending limitWindow `json:"sending"`
		Status  limitWindow `json:"status"`
		Media   limitWindow `json:"media"`
	} `json:"limits"`
}

// limits shows the account its own windows (GET /api/v1/integration/limits).
// Unlike the headers it shows every window literally: an unlimited one is
// Limit 0, Remaining 0. The request itself has already been counted against
// the tier window, so the figures include it.
func (s *Server) limits(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	l := c.Account.Limits
	types := map[string]int{typeSending: l.SendRPM, typeStatus: l.StatusRPM, typeMedia: l.MediaRPM}
	var u ratelimit.Usage
	if in, ok := s.cfg.Limiter.(ratelimit.Inspector); ok {
		var err error
		if u, err = in.Usage(r.Context(), c.Account.ID, l.TierRPM, types); err != nil {
			return err
		}
	} else {
		u = ratelimit.Unused(s.cfg.Now(), l.TierRPM, types)
	}
	var out limitsResponse
	out.Tier = c.Account.Tier
	out.Limits.Tier = toLimitWindow(u.Tier)
	out.Limits.Sending = toLimitWindow(u.Types[typeSending])
	out.Limits.Status = toLimitWindow(u.Types[typeStatus])
	out.Limits.Media = toLimitWindow(u.Types[typeMedia])
	writeJSON(w, http.StatusOK, out)
	return nil
}

func toLimitWindow(w ratelimit.Window) limitWindow {
	return limitWindow{Limit: w.Limit, Remaining: w.Remaining, Reset: view.Time(w.Reset)}
}
