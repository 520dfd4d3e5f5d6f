// Package domain is msgsvc's vocabulary: the typed values that every other
// package speaks (statuses and the rule that they only move forward,
// channels, environments, a message's rich content, the message and
// campaign entities), the records around them (accounts and their price
// tables, keys, users, senders, limit requests, webhook events and their
// attempts, inbound messages, message parts, idempotency records, opt-outs,
// media files, message templates) and the errors the fronts render. It does
// no I/O and imports nothing of msgsvc, so storage, the message service, the
// API and the provider adapters can all depend on it without depending on
// each other; storage scans its rows into these types.
package domain
