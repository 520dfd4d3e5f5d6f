package store_test

import (
	"reflect"
	"testing"

	"github.com/msgsvc/msgsvc/internal/store"
)

func TestPieces(t *testing.T) {
	tests := []struct {
		n, max int
		want   [][2]int
	}{
		{0, 256, nil},
		{1, 256, [][2]int{{0, 1}}},
		{37, 256, [][2]int{{0, 32}, {32, 36}, {36, 37}}},
		{600, 256, [][2]int{{0, 256}, {256, 512}, {512, 576}, {576, 592}, {592, 600}}},
		{128, 128, [][2]int{{0, 128}}},
	}
	for _, tc := range tests {
		if got := store.Pieces(tc.n, tc.max); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("pieces(%d, %d) = %v, want %v", tc.n, tc.max, got, tc.want)
		}
	}
}
