package message

import (
	"context"
	"encoding/hex"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/txn"
)

// Draft is a send as these tests write it, in the REST front's terms;
// request reads it into the core's request.
type Draft struct {
	To          string
	Recipients  []string
	Text        string
	From        string
	Type        string
	CallbackURL string
	Fallback    *FallbackRequest
	UDH         string // hex; one that is not hex reads as an empty header, which the core refuses
}

// FallbackRequest is a Draft's fallback.
type FallbackRequest struct {
	Type    string
	Message *string
}

// SendOptions are the send's options.
type SendOptions = intake.SendOptions

func (d Draft) request() domain.SendRequest {
	r := domain.SendRequest{Recipients: d.Recipients, Text: d.Text, Sender: d.From, CallbackURL: d.CallbackURL,
		Origin: domain.Origin{Front: domain.FrontREST}}
	if d.To != "" {
		r.Recipients = []string{d.To}
	}
	if d.Type != "" {
		c, err := domain.ParseChannel(d.Type)
		if err != nil {
			c = domain.Channel(d.Type)
		}
		r.Channel = c
	}
	if fb := d.Fallback; fb != nil {
		r.Fallback = &domain.FallbackRequest{Channel: domain.Channel(strings.ToUpper(fb.Type)), Text: fb.Message}
	}
	if d.UDH != "" {
		udh, err := hex.DecodeString(d.UDH)
		if err != nil {
			udh = []byte{}
		}
		r.UDH = udh
	}
	return r
}

// sendConfig is what these tests build their send and read services from.
type sendConfig struct {
	Store interface {
		Store
		intake.Store
	}
	Picker                intake.Picker
	Now                   func() time.Time
	AllowPrivateCallbacks bool
	Wake                  func()
	Dispatch              Handoff[domain.Message]
}

// services are intake's send and this package's reads over one store.
type services struct {
	sends *intake.Service
	*Service
}

func newServices(c sendConfig) services {
	ic := intake.Config{Store: c.Store, Writer: txn.As(c.Store, func(tx Tx) intake.SendTx { return tx }), Picker: c.Picker,
		Now: c.Now, AllowPrivateCallbacks: c.AllowPrivateCallbacks, Wake: c.Wake}
	if c.Dispatch != nil {
		ic.Dispatch = c.Dispatch
	}
	return services{sends: intake.NewService(ic), Service: NewService(Config{Store: c.Store, Now: c.Now})}
}

// Send sends d as the caller.
func (s services) Send(ctx context.Context, c Caller, d Draft, opt SendOptions) (intake.Outcome, error) {
	return s.sends.Send(ctx, c.Principal(), d.request(), opt)
}

// Close stops the sends.
func (s services) Close() { s.sends.Close() }

func creditAccount(ctx context.Context, st *store.Store, accountID string, amount int64, kind ledger.Kind, note string) (int64, error) {
	var balance int64
	err := st.Write(ctx, func(tx *store.Tx) error {
		var err error
		balance, err = ledger.Credit(ctx, tx, accountID, amount, kind, note, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		return err
	})
	return balance, err
}
