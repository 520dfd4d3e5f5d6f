// Package builtin lists the provider types this build runs, once: the
// service's registry is made from it, and the tests that hold the API's
// routes to its published document take the same list, so that a new
// adapter's webhook routes are served, documented and checked together.
package builtin

import (
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/rbm"
	"github.com/msgsvc/msgsvc/internal/provider/smpp"
	"github.com/msgsvc/msgsvc/internal/provider/telnyx"
	"github.com/msgsvc/msgsvc/internal/provider/twilio"
	"github.com/msgsvc/msgsvc/internal/provider/vonage"
	"github.com/msgsvc/msgsvc/internal/provider/whatsapp"
)

// Types are the adapter types of this build, in the order the file's
// environment shortcuts are read and their webhook routes published.
// Adding an adapter is adding its package and its entry here.
func Types() []provider.Type {
	return []provider.Type{smpp.Type(), whatsapp.Type(), rbm.Type(), twilio.Type(), telnyx.Type(), vonage.Type()}
}

// Registry registers Types.
func Registry() (*provider.Registry, error) { return provider.NewRegistry(Types()...) }
