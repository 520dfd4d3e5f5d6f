// Package smpp is msgsvc's SMS provider over SMPP 3.4: a client (ESME) that
// keeps one or more bind_transceiver sessions to an SMSC, submits messages
// with submit_sm, and takes delivery receipts and replies from deliver_sm
// (docs/providers.md).
//
// Layout: the wire format (PDUs, their strict codec, TLVs, command_status,
// text codings and user data headers) is package pdu, which the SMPP server
// for customers' ESMEs shares; session.go is one connection (window, sequence numbers,
// enquire_link); client.go keeps the binds up; submit.go sends messages and
// retries; errors.go maps command_status to our error codes; receipt.go,
// inbound.go and reassembly.go handle deliver_sm; health.go reports state.
//
// # Text
//
// Text goes out as sms.Split cuts it: GSM 03.38 with data_coding 0 when
// every character is in the default alphabet (extension characters as ESC +
// code), UCS-2 (UTF-16BE) with data_coding 8 otherwise. A text of several
// parts is several submit_sm, each with esm_class 0x40 and a UDH holding the
// concatenation IE with one 8-bit reference per message and the part's
// number (see pdu.EncodeText for why not the 16-bit form).
//
// # GSM packing: unpacked by default
//
// SMPP 3.4 calls data_coding 0 the "SMSC default alphabet" and short_message
// a string of octets; it does not say that septets are packed, and in
// practice SMSCs (and gateways such as Kannel) expect one GSM 03.38 code per
// octet and pack for the air interface themselves. Packing is an option
// (Config.GSMPacking = Packed: eight septets in seven octets, with fill bits
// after a UDH, TS 23.038 §6.1.2.1) for the SMSCs configured that way.
//
// The independent peer settles the default: the SMSC simulator in
// shared/peers/smsc-sim is built on node-smpp 0.5.1, whose message filter
// (lib/defs.js, filters.message.decode) reads data_coding 0 with its default
// 'ASCII' encoding, i.e. gsmCoder.decode: every octet is an index into the
// GSM 03.38 table, and ESC + code into the extension table. That is the
// unpacked form; packed octets come out as garbage there. The peer test
// checks it end to end: the simulator echoes the first 20 characters it
// decoded in each receipt's text, and those must equal what was sent.
//
// # Submitting
//
// Submit pipelines messages through the binds (round-robin), each bind
// holding at most Config.Window requests awaiting a response, spaced by
// the Config.TPS cap. Transient failures are retried with exponential
// backoff and jitter within the caller's deadline; a request whose
// connection dropped before its response is sent again on another bind or
// after the reconnect, one that got a response never is. Permanent refusals
// are mapped by statusError. Result.Parts lists the SMSC's id of every
// part; Result.Ref is the first.
//
// # Receipts and replies
//
// A deliver_sm with the receipt message type is parsed (receipted_message_id
// and message_state TLVs first, the receipt text otherwise) and its final
// status handed to the Sink, per part, under the part's id. Other deliver_sm
// are replies: decoded by data_coding, reassembled when concatenated, and
// handed to Sink.Inbound. deliver_sm_resp goes out only after the Sink
// returned: ESME_ROK when it stored the report, ESME_RX_T_APPN (so that the
// SMSC retries) when it failed.
//
// Network timing (RequestTimeout, enquire_link, dial) runs on real time;
// the TPS cap, backoff, timestamps and reassembly expiry run on the
// injected Clock.
package smpp
