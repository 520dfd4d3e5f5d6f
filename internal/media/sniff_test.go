package media_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/media"
	"github.com/msgsvc/msgsvc/internal/media/mediatest"
)

func TestSniff(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		want    media.Type
		wantErr string // part of the refusal; empty when accepted
	}{
		{"png", mediatest.PNG(), media.PNG, ""},
		{"jpeg", mediatest.JPEG(), media.JPEG, ""},
		{"gif", mediatest.GIF(), media.GIF, ""},
		{"mp4", mediatest.MP4(), media.MP4, ""},
		{"mp4 brand mp42", mediatest.ISO("mp42", "mp42", "isom"), media.MP4, ""},
		{"mp4 unknown major, compatible isom", mediatest.ISO("xyz1", "isom", "avc1"), media.MP4, ""},
		{"3gpp", mediatest.GPP(), media.GPP, ""},
		{"3gpp unknown major, compatible 3gp5", mediatest.ISO("abcd", "3gp5"), media.GPP, ""},
		{"pdf", mediatest.PDF(), media.PDF, ""},
		{"docx", mediatest.DOCX(), media.DOCX, ""},
		{"xlsx", mediatest.XLSX(), media.XLSX, ""},
		{"pptx", mediatest.PPTX(), media.PPTX, ""},
		{"doc (directory over two sectors)", mediatest.DOC(), media.DOC, ""},
		{"xls", mediatest.XLS(), media.XLS, ""},
		{"xls, Excel 95", mediatest.CFB("Book"), media.XLS, ""},
		{"ppt", mediatest.PPT(), media.PPT, ""},

		{"elf", mediatest.ELF(), media.Type{}, "ELF executable"},
		{"windows exe", append([]byte("MZ\x90\x00"), make([]byte, 60)...), media.Type{}, "Windows executable"},
		{"plain text", []byte("just some text, not an image"), media.Type{}, "text/plain"},
		{"html", []byte("<!DOCTYPE html><html><body>hi</body></html>"), media.Type{}, "text/html"},
		{"webp", append([]byte("RIFF\x24\x00\x00\x00WEBPVP8 "), make([]byte, 32)...), media.Type{}, "image/webp"},
		{"quicktime", mediatest.ISO("qt  ", "qt  "), media.Type{}, "QuickTime"},
		{"m4a audio", mediatest.ISO("M4A ", "M4A ", "mp42", "isom"), media.Type{}, "audio"},
		{"heic image", mediatest.ISO("heic", "mif1", "heic"), media.Type{}, "HEIF"},
		{"avif with unknown major", mediatest.ISO("xyz1", "avif", "isom"), media.Type{}, "HEIF"},
		{"3gpp2", mediatest.ISO("3g2a", "3g2a"), media.Type{}, "3GPP2"},
		{"iso of unknown brands", mediatest.ISO("abcd", "efgh"), media.Type{}, `brand "abcd"`},
		{"truncated ftyp", []byte("\x00\x00\x00\x18ftypiso"), media.Type{}, "truncated"},
		{"ftyp box too small", []byte("\x00\x00\x00\x08ftypisom\x00\x00\x00\x00"), media.Type{}, "malformed"},
		{"docm (macros)", mediatest.DOCM(), media.Type{}, "macro"},
		{"plain zip", mediatest.Zip(), media.Type{}, "ZIP archive"},
		{"zip magic only", []byte("PK\x03\x04garbage"), media.Type{}, "damaged ZIP"},
		{"msi", mediatest.MSI(), media.Type{}, "not a DOC, XLS or PPT"},
		{"truncated cfb", mediatest.DOC()[:700], media.Type{}, "damaged OLE2"},
		{"cfb header only", mediatest.DOC()[:512], media.Type{}, "damaged OLE2"},
		{"cfb magic only", []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, media.Type{}, "damaged OLE2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := media.Sniff(bytes.NewReader(tc.data), int64(len(tc.data)))
			if tc.wantErr == "" {
				if err != nil || got != tc.want {
					t.Fatalf("Sniff = %v, %v; want %v", got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, media.ErrUnsupported) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Sniff = %v, %v; want an ErrUnsupported mentioning %q", got, err, tc.wantErr)
			}
		})
	}
}

// A corrupt compound file must be refused without a panic or a long walk,
// including a directory chain that loops.
func TestSniffCFBLoop(t *testing.T) {
	b := mediatest.CFB("Something", "Else", "More", "Again", "Other")
	// FAT entry for directory sector 2 points back at sector 1.
	copy(b[512+4*2:], []byte{1, 0, 0, 0})
	_, err := media.Sniff(bytes.NewReader(b), int64(len(b)))
	if !errors.Is(err, media.ErrUnsupported) {
		t.Fatalf("looping directory: %v", err)
	}
}

func FuzzSniff(f *testing.F) {
	for _, s := range [][]byte{mediatest.PNG(), mediatest.MP4(), mediatest.DOCX(), mediatest.DOC(), mediatest.PDF(), mediatest.ELF()} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := media.Sniff(bytes.NewReader(b), int64(len(b)))
		if err == nil {
			if _, ok := media.TypeOf(got.MIME); !ok {
				t.Fatalf("accepted an unlisted type %v", got)
			}
		}
	})
}
