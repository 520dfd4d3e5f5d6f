package domain

import "fmt"

// Refusals of the account tree. Each wraps ErrConflict: the request is
// well formed, but the tree as it stands does not allow it.
var (
	// ErrTreeTooDeep: the account would stand more than MaxDepth levels
	// below the operator (a child of an account at MaxDepth, or such an
	// account made a reseller).
	ErrTreeTooDeep = fmt.Errorf("account tree deeper than %d levels: %w", MaxDepth, ErrConflict)
	// ErrNotReseller: the parent named for a new child is not a reseller.
	ErrNotReseller = fmt.Errorf("account is not a reseller: %w", ErrConflict)
	// ErrHasChildren: a reseller with children cannot stop being one; its
	// children would be left under an account that may not have them.
	ErrHasChildren = fmt.Errorf("account has children: %w", ErrConflict)
	// ErrChildShort: taking credits back would take the child's balance
	// below zero. (The parent running short is ledger's
	// ErrInsufficientCredits, as a send's is.)
	ErrChildShort = fmt.Errorf("child balance too low: %w", ErrConflict)
)
