package client

import "math"

// MicroCredits converts an amount as the API sends it (balance, credits,
// prices: a JSON number with at most 6 decimals, decoded into a float64)
// into whole micro-credits, the unit msgsvc keeps them in, for arithmetic
// that must be exact. Below a billion credits (15 significant digits) the conversion is
// lossless.
func MicroCredits(amount float64) int64 {
	return int64(math.Round(amount * 1e6))
}
