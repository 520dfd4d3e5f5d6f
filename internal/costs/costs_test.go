package costs

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestLongestPrefixWins(t *testing.T) {
	tab, err := FromMap(map[string]float64{"44": 0.031, "447": 0.034, "4477": 0.05, "1": 0.0075})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		to     string
		cost   int64
		length int
		ok     bool
	}{
		{"447700900123", 50_000, 4, true},
		{"447600900123", 34_000, 3, true},
		{"442079460000", 31_000, 2, true},
		{"15550100", 7_500, 1, true},
		{"4915100000", 0, 0, false},
		{"4", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, c := range cases {
		cost, n, ok := tab.Lookup(c.to)
		if cost != c.cost || n != c.length || ok != c.ok {
			t.Errorf("Lookup(%q) = %d, %d, %v; want %d, %d, %v", c.to, cost, n, ok, c.cost, c.length, c.ok)
		}
	}
	var empty *Table
	if _, _, ok := empty.Lookup("44"); ok || empty.Len() != 0 {
		t.Fatal("a nil table matched")
	}
}

func TestReadCSV(t *testing.T) {
	tab, err := ReadCSV(strings.NewReader("prefix,cost\n# UK\n44,0.031\n+447, 0.034\n\n"))
	if err != nil || tab.Len() != 2 {
		t.Fatalf("read %d prefixes, %v", tab.Len(), err)
	}
	if c, _, _ := tab.Lookup("447911"); c != 34_000 {
		t.Fatalf("cost %d", c)
	}
	_, err = ReadCSV(strings.NewReader("44,0.031\n4a,1\n45\n46,-1\n44,0.2\n"))
	for _, want := range []string{"line 2", "line 3", "line 4", "line 5: prefix 44 is given twice"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %q", err, want)
		}
	}
}

func TestFormat(t *testing.T) {
	if got := Format(31_000); got != "0.031" {
		t.Fatal(got)
	}
	if c, err := ParseCost("0.0305"); err != nil || c != 30_500 {
		t.Fatal(c, err)
	}
}

// rateCard is a CSV of n distinct prefixes of 3 to 9 digits, as a large
// carrier's card of number ranges looks.
func rateCard(n int) (string, []string) {
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	var b strings.Builder
	b.WriteString("prefix,cost\n")
	var prefixes []string
	for len(prefixes) < n {
		p := fmt.Sprintf("%d%08d", 1+r.IntN(9), r.Int64N(1e8))[:3+r.IntN(7)]
		if seen[p] {
			continue
		}
		seen[p] = true
		prefixes = append(prefixes, p)
		fmt.Fprintf(&b, "%s,%.4f\n", p, r.Float64()/10)
	}
	return b.String(), prefixes
}

// BenchmarkLoad100k reads a rate card of 100,000 prefixes.
func BenchmarkLoad100k(b *testing.B) {
	card, _ := rateCard(100_000)
	b.SetBytes(int64(len(card)))
	for b.Loop() {
		if _, err := ReadCSV(strings.NewReader(card)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookup looks up 15-digit numbers in a card of 100,000 prefixes.
func BenchmarkLookup(b *testing.B) {
	card, prefixes := rateCard(100_000)
	tab, err := ReadCSV(strings.NewReader(card))
	if err != nil {
		b.Fatal(err)
	}
	numbers := make([]string, 1024)
	for i := range numbers {
		numbers[i] = (prefixes[i*97%len(prefixes)] + "123456789012345")[:15]
	}
	i := 0
	for b.Loop() {
		if _, _, ok := tab.Lookup(numbers[i&1023]); !ok {
			b.Fatal("no match")
		}
		i++
	}
}
