package smpp_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
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
			a, err := typ.Build(context.Background(), "smpp-conformance", cfg,
				provider.Deps{Sink: sink, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			var seq atomic.Int64
			msg := func(to, body string) provider.Outbound {
				return provider.Outbound{ID: fmt.Sprintf("msg_%d", seq.Add(1)), To: to, Channel: domain.SMS,
					From: "MyShop", Body: body, Env: domain.Live, ExpiresAt: time.Now().Add(time.Hour)}
			}
			return providertest.Instance{Adapter: a,
				Accept:    func(i int) provider.Outbound { return msg(fmt.Sprintf("4477009%05d", i), "hello") },
				Temporary: func() provider.Outbound { return msg(throttledTo, "hello") },
				Permanent: func() provider.Outbound { return msg(invalidTo, "hello") },
				Long:      func() provider.Outbound { return msg("447700900123", strings.Repeat("a long text ", 30)) },
			}
		}})
}
