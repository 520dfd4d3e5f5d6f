package providertest

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Messages makes a conformance harness's messages on one channel: each
// with the next id (msg_1, msg_2…), the text "hello", live, expiring in an
// hour.
type Messages struct {
	ch  domain.Channel
	seq atomic.Int64
}

// NewMessages makes messages on ch.
func NewMessages(ch domain.Channel) *Messages { return &Messages{ch: ch} }

// To is the next message, to the number to.
func (m *Messages) To(to string) provider.Outbound {
	return provider.Outbound{ID: fmt.Sprintf("msg_%d", m.seq.Add(1)), To: to, Channel: m.ch, Body: "hello",
		Env: domain.Live, ExpiresAt: time.Now().Add(time.Hour)}
}

// Accept is the next message to the i-th ordinary number, which the
// platform takes (Instance.Accept).
func (m *Messages) Accept(i int) provider.Outbound { return m.To(fmt.Sprintf("4477009%05d", i)) }
