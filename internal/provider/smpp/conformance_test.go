package smpp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
)

const (
	throttledTo = "447700900998"
	invalidTo   = "447700900999"
)

func TestConformance(t *testing.T) {
	typ := smpp.Type()
	providertest.Run(t, providertest.Harness{Name: "smpp-conformance", Type: typ,
		New: func(t *testing.T, sink provider.Sink) providertest.Instance {
			smsc := smpptest.Start(t)
			smsc.Refuse(throttledTo, pdu.StatusThrottled)
			smsc.Refuse(invalidTo, pdu.StatusInvDstAdr)
			cfg := smpp.Config{Addr: smsc.Addr(), SystemID: "msgsvc", Password: "secret", Binds: 2,
				RequestTimeout: 3 * time.Second, ReconnectMin: time.Millisecond, ReconnectMax: 5 * time.Millisecond,
				RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond, SubmitTimeout: 2 * time.Second}
			a, err := typ.Build(context.Background(), "smpp-conformance", cfg, providertest.Quiet(sink))
			if err != nil {
				t.Fatal(err)
			}
			ms := providertest.NewMessages(domain.SMS)
			ms.Template.From = "MyShop"
			return providertest.Instance{Adapter: a, Accept: ms.Accept,
				Temporary: func() provider.Outbound { return ms.To(throttledTo) },
				Permanent: func() provider.Outbound { return ms.To(invalidTo) },
				Long: func() provider.Outbound {
					m := ms.To("447700900123")
					m.Body = strings.Repeat("a long text ", 30)
					return m
				},
			}
		}})
}
