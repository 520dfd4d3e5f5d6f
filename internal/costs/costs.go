// Package costs holds what a provider pays per destination: a rate card of
// digit prefixes, the longest matching prefix of a number winning. A
// lookup walks one node per digit of the number, so it costs the same
// with ten prefixes as with a million.
package costs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Micro is one unit of currency in micro-units, the unit of every cost.
const Micro = 1_000_000

// Table is a digit trie of costs in micro-units. The zero value is empty;
// a Table is not changed after it is built, so lookups need no lock.
type Table struct {
	nodes []node
	n     int
}

type node struct {
	next [10]int32 // index of the child per digit, 0 = none (the root is never a child)
	cost int64
	set  bool
}

// Len is the number of prefixes.
func (t *Table) Len() int {
	if t == nil {
		return 0
	}
	return t.n
}

// Lookup returns the cost of the longest prefix of digits, and how long
// that prefix is (0 and false when none matches).
func (t *Table) Lookup(digits string) (cost int64, length int, ok bool) {
	if t == nil || len(t.nodes) == 0 {
		return 0, 0, false
	}
	at := int32(0)
	for i := 0; i < len(digits); i++ {
		d := digits[i] - '0'
		if d > 9 {
			break
		}
		at = t.nodes[at].next[d]
		if at == 0 {
			break
		}
		if nd := &t.nodes[at]; nd.set {
			cost, length, ok = nd.cost, i+1, true
		}
	}
	return cost, length, ok
}

// Add sets the cost of a prefix; a prefix given twice is an error.
func (t *Table) Add(prefix string, cost int64) error {
	if !isDigits(prefix) {
		return fmt.Errorf("prefix %q: must be 1 to 15 digits", prefix)
	}
	if cost < 0 {
		return fmt.Errorf("prefix %s: the cost must not be negative", prefix)
	}
	if len(t.nodes) == 0 {
		t.nodes = append(t.nodes, node{})
	}
	at := int32(0)
	for i := 0; i < len(prefix); i++ {
		d := prefix[i] - '0'
		next := t.nodes[at].next[d]
		if next == 0 {
			next = int32(len(t.nodes))
			t.nodes = append(t.nodes, node{})
			t.nodes[at].next[d] = next
		}
		at = next
	}
	if t.nodes[at].set {
		return fmt.Errorf("prefix %s is given twice", prefix)
	}
	t.nodes[at].cost, t.nodes[at].set = cost, true
	t.n++
	return nil
}

func isDigits(s string) bool {
	if len(s) == 0 || len(s) > 15 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ParseCost reads a decimal amount of currency ("0.031") as micro-units.
func ParseCost(s string) (int64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e9 {
		return 0, fmt.Errorf("cost %q: must be a non-negative decimal amount", s)
	}
	return int64(math.Round(v * Micro)), nil
}

// FromMap builds a table from prefix → cost in currency units.
func FromMap(m map[string]float64) (*Table, error) {
	t := &Table{}
	var errs []error
	for p, c := range m {
		if c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
			errs = append(errs, fmt.Errorf("prefix %s: the cost must be a non-negative amount", p))
			continue
		}
		if err := t.Add(p, int64(math.Round(c*Micro))); err != nil {
			errs = append(errs, err)
		}
	}
	return t, errors.Join(errs...)
}

// ReadCSV reads a rate card: one "prefix,cost" per line; a first line
// "prefix,cost", empty lines and lines starting with # are skipped. A
// leading + on a prefix is allowed. Errors name the line.
func ReadCSV(r io.Reader) (*Table, error) {
	t := &Table{nodes: make([]node, 1, 1024)}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	var errs []error
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' || (line == 1 && strings.EqualFold(strings.ReplaceAll(text, " ", ""), "prefix,cost")) {
			continue
		}
		prefix, cost, ok := strings.Cut(text, ",")
		if !ok {
			errs = append(errs, fmt.Errorf("line %d: want prefix,cost", line))
			continue
		}
		c, err := ParseCost(cost)
		if err == nil {
			err = t.Add(strings.TrimPrefix(strings.TrimSpace(prefix), "+"), c)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", line, err))
		}
		if len(errs) >= 10 {
			errs = append(errs, errors.New("stopped after 10 errors"))
			break
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	return t, errors.Join(errs...)
}

// Format writes micro-units as a decimal amount ("0.031").
func Format(micro int64) string {
	return strconv.FormatFloat(float64(micro)/Micro, 'f', -1, 64)
}
