package media

import (
	"bytes"
	"testing"

	"github.com/msgsvc/msgsvc/internal/media/mediatest"
)

// Reading the structure of any bytes ends in a type or a refusal, never a
// panic or an allocation the size of a lie in a header.
func FuzzStructure(f *testing.F) {
	for _, b := range [][]byte{mediatest.PNG(), mediatest.JPEG(), mediatest.GIF(), mediatest.PDF(), mediatest.MP4()} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		if typ, err := Sniff(r, int64(len(b))); err == nil {
			_ = checkStructure(r, int64(len(b)), typ)
		}
	})
}
