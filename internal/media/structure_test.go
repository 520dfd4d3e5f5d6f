package media

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/media/mediatest"
)

// A file is typed by its first bytes, then read whole: what only starts
// like an accepted type is refused.
func TestStructureIsChecked(t *testing.T) {
	png, jpg, gifb, pdf, mp4 := mediatest.PNG(), mediatest.JPEG(), mediatest.GIF(), mediatest.PDF(), mediatest.MP4()
	flip := func(b []byte, i int) []byte {
		c := bytes.Clone(b)
		c[i] ^= 0xFF
		return c
	}
	good := map[string][]byte{"PNG": png, "JPEG": jpg, "GIF": gifb, "PDF": pdf, "MP4": mp4,
		"MP4 last box to the end": append(bytes.Clone(mp4), 0, 0, 0, 0, 'f', 'r', 'e', 'e', 1, 2)}
	for name, b := range good {
		if _, err := sniffAndCheck(b); err != nil {
			t.Errorf("%s refused: %v", name, err)
		}
	}
	bad := []struct {
		name string
		b    []byte
		want string
	}{
		{"PNG signature only", png[:8], "IEND"},
		{"PNG with bytes after IEND", append(bytes.Clone(png), 0, 0, 0), "after its IEND"},
		{"PNG with a file after IEND", append(bytes.Clone(png), []byte("<script>alert(1)</script>")...), "after its IEND"},
		{"PNG cut in half", png[:len(png)/2], "PNG"},
		{"PNG with a damaged chunk", flip(png, 20), "CRC"},
		{"PNG without IHDR", append(bytes.Clone(png[:8]), png[33:]...), "IHDR"},
		{"JPEG header only", jpg[:4], "frame header"},
		{"JPEG without its end", jpg[:len(jpg)-2], "end-of-image"},
		{"GIF without trailer", gifb[:len(gifb)-1], "trailer"},
		{"PDF without its end", []byte("%PDF-1.7\n1 0 obj\n"), "%%EOF"},
		{"MP4 cut short", mp4[:len(mp4)-1], "starts as MP4 but"},
		{"MP4 tiny box", append(bytes.Clone(mp4), 0, 0, 0, 4, 'b', 'a', 'd', '!'), "shorter than its header"},
	}
	for _, c := range bad {
		_, err := sniffAndCheck(c.b)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal mentioning %q", c.name, err, c.want)
		}
	}
}

func sniffAndCheck(b []byte) (Type, error) {
	r := bytes.NewReader(b)
	t, err := Sniff(r, int64(len(b)))
	if err != nil {
		return t, err
	}
	return t, checkStructure(r, int64(len(b)), t)
}
