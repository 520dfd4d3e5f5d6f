package providertest

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Messages makes a conformance harness's messages: each a copy of
// Template with the next id (msg_1, msg_2…), expiring in an hour.
type Messages struct {
	Template provider.Outbound
	seq      atomic.Int64
}

// NewMessages makes live messages on ch with the text "hello".
func NewMessages(ch domain.Channel) *Messages {
	return &Messages{Template: provider.Outbound{Channel: ch, Body: "hello", Env: domain.Live}}
}

// To is the next message, to the number to.
func (m *Messages) To(to string) provider.Outbound {
	o := m.Template
	o.ID, o.To, o.ExpiresAt = fmt.Sprintf("msg_%d", m.seq.Add(1)), to, time.Now().Add(time.Hour)
	return o
}

// Accept is the next message to the i-th ordinary number, which the
// platform takes (Instance.Accept).
func (m *Messages) Accept(i int) provider.Outbound { return m.To(fmt.Sprintf("4477009%05d", i)) }

// Quiet are the service's dependencies of an adapter under test: sink,
// and no log.
func Quiet(sink provider.Sink) provider.Deps {
	return provider.Deps{Sink: sink, Log: slog.New(slog.DiscardHandler)}
}
