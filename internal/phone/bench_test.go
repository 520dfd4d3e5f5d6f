package phone

import (
	"strconv"
	"testing"
)

// distinctNumbers are valid numbers, all different, so that no cache can
// answer: the benchmarks measure the validation itself.
func distinctNumbers(n int) []string {
	out := make([]string, 0, n)
	for i := 0; len(out) < n; i++ {
		out = append(out,
			strconv.Itoa(5511999990000+i),
			strconv.Itoa(447911123456+i),
			strconv.Itoa(14155550100+i))
	}
	return out[:n]
}

// BenchmarkReference is the cost before the calling-code table.
func BenchmarkReference(b *testing.B) {
	benchmark(b, referenceParse)
}

func BenchmarkParse(b *testing.B) {
	benchmark(b, parse)
}

func BenchmarkCallingCodes(b *testing.B) {
	benchmark(b, newCallingCodes().parse)
}

func benchmark(b *testing.B, parse func(string) (Number, error)) {
	nums := distinctNumbers(3000)
	for _, s := range nums {
		if _, err := parse(s); err != nil {
			b.Fatalf("%s: %v", s, err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := parse(nums[i%len(nums)]); err != nil {
			b.Fatal(err)
		}
	}
}
