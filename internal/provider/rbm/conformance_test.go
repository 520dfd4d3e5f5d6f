package rbm_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
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
			a, err := typ.Build(context.Background(), "rbm-conformance", cfg, providertest.Quiet(sink))
			if err != nil {
				t.Fatal(err)
			}
			ms := providertest.NewMessages(domain.RCS)
			return providertest.Instance{Adapter: a, Accept: ms.Accept,
				Temporary: func() provider.Outbound {
					p.FailNext(http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusServiceUnavailable)
					return ms.To("447700900100")
				},
				Permanent: func() provider.Outbound { return ms.To(noRCSTo) },
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
