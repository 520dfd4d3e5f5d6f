package rbm_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
	"github.com/msgsvc/msgsvc/internal/provider/rbm"
	"github.com/msgsvc/msgsvc/internal/provider/rbm/rbmtest"
)

const (
	conformanceAgent = "msgsvc-conformance-agent"
	conformanceToken = "client-token-conformance"
	noRCSTo          = "447700900999" // a phone the platform cannot reach over RCS
)

func TestConformance(t *testing.T) {
	typ := rbm.Type()
	providertest.Run(t, providertest.Harness{Name: "rbm-conformance", Type: typ,
		New: func(t *testing.T, sink provider.Sink) providertest.Instance {
			p := rbmtest.New(t, conformanceAgent)
			p.NotCapable(noRCSTo)
			cfg := rbm.Config{AgentID: conformanceAgent, Credentials: p.Credentials(), ClientToken: conformanceToken,
				APIURL: p.APIURL(), Attempts: 3, RetryMin: time.Millisecond, RetryMax: 4 * time.Millisecond}
			a, err := typ.Build(context.Background(), "rbm-conformance", cfg,
				provider.Deps{Sink: sink, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			var seq atomic.Int64
			msg := func(to string) provider.Outbound {
				return provider.Outbound{ID: fmt.Sprintf("msg_%d", seq.Add(1)), To: to, Channel: domain.RCS,
					Body: "hello", Env: domain.Live, ExpiresAt: time.Now().Add(time.Hour)}
			}
			return providertest.Instance{Adapter: a,
				Accept: func(i int) provider.Outbound { return msg(fmt.Sprintf("4477009%05d", i)) },
				Temporary: func() provider.Outbound {
					p.FailNext(http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusServiceUnavailable)
					return msg("447700900100")
				},
				Permanent: func() provider.Outbound { return msg(noRCSTo) },
				Report: func(t *testing.T, m provider.Outbound, r provider.Result) {
					n := rbmtest.Notify(conformanceToken, rbmtest.UserEvent(m.To, conformanceAgent, r.Ref, "DELIVERED"))
					req := httptest.NewRequest(http.MethodPost, "/providers/rbm/webhook", bytes.NewReader(n.Body))
					req.Header.Set("X-Goog-Signature", n.Signature)
					w := httptest.NewRecorder()
					rbm.Type().Receiver(a).ServeHTTP(w, req)
					if w.Code/100 != 2 {
						t.Fatalf("webhook answered %d: %s", w.Code, w.Body)
					}
				},
			}
		}})
}
