// Package pdu is the SMPP 3.4 wire format that both ends of msgsvc's SMPP
// speak: the client adapter to carriers' SMSCs (internal/provider/smpp) and
// the server for customers' ESMEs (internal/smppserver). It holds the PDUs
// and their strict codec (lengths are checked before anything is
// allocated, C-octet strings must end within their maximum size, TLV
// lengths must fit), the TLVs, command_status, message_state, and the text
// codings with their user data headers. Sessions, windows, receipts and
// retries belong to each end, not here.
//
// It is named pdu rather than smpp because both of its importers also see
// the provider package named smpp (the server's wiring in internal/app, the
// tests that drive an ESME against a carrier), and a second package of
// that name would need an alias wherever the two meet.
package pdu
