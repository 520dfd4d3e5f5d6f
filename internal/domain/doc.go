// Package domain is msgsvc's vocabulary: the typed values that every other
// package speaks (statuses and the rule that they only move forward,
// channels, environments, a message's rich content, the message and
// campaign entities). It does no I/O and imports nothing of msgsvc, so
// storage, the message service, the API and the provider adapters can all
// depend on it without depending on each other.
package domain
