// Package ledger prices messages. Credits are integer micro-credits
// everywhere inside msgsvc (1 credit = 1,000,000) so that sums are exact;
// only the API turns them into JSON numbers.
package ledger

import (
	"fmt"
	"math"
)

// Micro is the number of micro-credits in one credit.
const Micro = 1_000_000

// Credits turns micro-credits into the JSON number the API shows. Balances
// up to 2^53 micro-credits (9 billion credits) convert exactly enough to
// print back as the same decimal.
func Credits(micro int64) float64 {
	return math.Round(float64(micro)) / Micro
}

// FromCredits converts a decimal credit amount given by an operator, to
// micro-credits, refusing fractions below one micro-credit.
func FromCredits(v float64) (int64, error) {
	m := v * Micro
	if math.IsNaN(m) || math.IsInf(m, 0) || math.Abs(m) > 1<<53 {
		return 0, fmt.Errorf("amount %v out of range", v)
	}
	r := math.Round(m)
	if math.Abs(r-m) > 1e-6 {
		return 0, fmt.Errorf("amount %v has more than 6 decimal places", v)
	}
	return int64(r), nil
}
