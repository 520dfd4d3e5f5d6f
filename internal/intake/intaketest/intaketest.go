// Package intaketest sends through the core the way the tests of the jobs
// after intake (dispatch, tracking, reads) need: a Draft in the REST
// front's terms, read into the typed request, and an intake service over a
// real store. It is for tests only.
package intaketest

import (
	"context"
	"encoding/hex"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/lease"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/txn"
)

// Draft is a send as the tests write it; Request reads it into the core's
// request.
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

// Request is the draft as the core's typed request.
func (d Draft) Request() domain.SendRequest {
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

// Config is what a test's sends are built from.
type Config struct {
	Store *store.Store
	// View, when set, is the send's transaction as the sends see it (a
	// test that counts rows wraps the store's); nil is the store's own.
	View                  func(tx *store.Tx) intake.SendTx
	Picker                intake.Picker
	Now                   func() time.Time
	AllowPrivateCallbacks bool
	Wake                  func()
	Dispatch              lease.Handoff[domain.Message]
}

// Sends is intake's service over the test's store.
type Sends struct{ *intake.Service }

// New starts the sends; Close stops them.
func New(c Config) Sends {
	view := c.View
	if view == nil {
		view = func(tx *store.Tx) intake.SendTx { return tx }
	}
	ic := intake.Config{Store: c.Store, Writer: txn.As(c.Store, view), Picker: c.Picker,
		Now: c.Now, AllowPrivateCallbacks: c.AllowPrivateCallbacks, Wake: c.Wake}
	if c.Dispatch != nil {
		ic.Dispatch = c.Dispatch
	}
	return Sends{intake.NewService(ic)}
}

// Principal is who sends: message.Caller is one.
type Principal interface{ Principal() domain.Principal }

// Send sends d as p.
func (s Sends) Send(ctx context.Context, p Principal, d Draft, opt intake.SendOptions) (intake.Outcome, error) {
	return s.Service.Send(ctx, p.Principal(), d.Request(), opt)
}
