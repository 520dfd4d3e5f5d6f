package media

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image/gif"
	"image/jpeg"
	"io"
)

// checkStructure reads a whole file of a sniffed type and refuses it when
// it is not what its first bytes claim: a PNG whose chunks do not add up,
// a JPEG without its image, a GIF without its trailer, a PDF without its
// end, an MP4 whose boxes overrun the file. (ZIP and OLE2 documents are
// read through their directories when sniffed.) Nothing is decompressed
// or decoded to pixels, so a small file cannot make it allocate much.
// Bytes after a complete image are tolerated, as decoders do.
func checkStructure(r io.ReaderAt, size int64, t Type) error {
	var problem string
	switch t {
	case PNG:
		problem = pngProblem(r, size)
	case JPEG:
		problem = jpegProblem(r, size)
	case GIF:
		problem = gifProblem(r, size)
	case PDF:
		problem = pdfProblem(r, size)
	case MP4, GPP:
		problem = isoProblem(r, size)
	}
	if problem != "" {
		return fmt.Errorf("%w: the content starts as %s but %s", ErrUnsupported, t.Name, problem)
	}
	return nil
}

// pngProblem walks the chunks from the signature to IEND, checking each
// one's length and CRC; IEND must end the file.
func pngProblem(r io.ReaderAt, size int64) string {
	off, first := int64(8), true
	var head [8]byte
	seenData := false
	for {
		if off+12 > size {
			return "ends before its IEND chunk"
		}
		if _, err := r.ReadAt(head[:], off); err != nil {
			return "cannot be read"
		}
		n, typ := int64(binary.BigEndian.Uint32(head[:4])), string(head[4:8])
		if n > size-off-12 {
			return fmt.Sprintf("has a %s chunk longer than the file", printable(typ))
		}
		if first && typ != "IHDR" {
			return "does not begin with its IHDR chunk"
		}
		first = false
		body := make([]byte, 4+n+4)
		if _, err := r.ReadAt(body, off+4); err != nil {
			return "cannot be read"
		}
		if crc32.ChecksumIEEE(body[:4+n]) != binary.BigEndian.Uint32(body[4+n:]) {
			return fmt.Sprintf("has a damaged %s chunk (CRC mismatch)", printable(typ))
		}
		seenData = seenData || typ == "IDAT"
		if typ == "IEND" {
			if !seenData {
				return "has no image data"
			}
			// Bytes after IEND are no part of the image: a file can smuggle
			// anything there (another file, a script) past a check of the
			// image alone.
			if end := off + 12 + n; end != size {
				return fmt.Sprintf("has %d bytes after its IEND chunk", size-end)
			}
			return ""
		}
		off += 12 + n
	}
}

func printable(s string) string {
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}

// jpegProblem reads the frame header and looks for the end-of-image mark.
func jpegProblem(r io.ReaderAt, size int64) string {
	if _, err := jpeg.DecodeConfig(io.NewSectionReader(r, 0, size)); err != nil {
		return "has no readable frame header"
	}
	if !contains(r, size, []byte{0xFF, 0xD9}) {
		return "has no end-of-image mark"
	}
	return ""
}

// gifProblem reads the screen descriptor and looks for the trailer.
func gifProblem(r io.ReaderAt, size int64) string {
	if _, err := gif.DecodeConfig(io.NewSectionReader(r, 0, size)); err != nil {
		return "has no readable screen descriptor"
	}
	if !contains(r, size, []byte{0x3B}) {
		return "has no trailer"
	}
	return ""
}

// pdfProblem looks for the end-of-file marker.
func pdfProblem(r io.ReaderAt, size int64) string {
	if !contains(r, size, []byte("%%EOF")) {
		return "has no %%EOF"
	}
	return ""
}

// isoProblem walks the top-level boxes of an ISO media file: ftyp first,
// each box at least its header long and within the file (a size of 0
// means "to the end of the file").
func isoProblem(r io.ReaderAt, size int64) string {
	var head [16]byte
	for off, i := int64(0), 0; off < size; i++ {
		if size-off < 8 {
			return "ends inside a box header"
		}
		if _, err := r.ReadAt(head[:8], off); err != nil {
			return "cannot be read"
		}
		n, typ := int64(binary.BigEndian.Uint32(head[:4])), string(head[4:8])
		if i == 0 && typ != "ftyp" {
			return "does not begin with its ftyp box"
		}
		switch n {
		case 0:
			return "" // the last box runs to the end of the file
		case 1:
			if size-off < 16 {
				return "ends inside a box header"
			}
			if _, err := r.ReadAt(head[8:16], off+8); err != nil {
				return "cannot be read"
			}
			n = int64(binary.BigEndian.Uint64(head[8:16]))
			if n < 16 {
				return fmt.Sprintf("has a %s box shorter than its header", printable(typ))
			}
		default:
			if n < 8 {
				return fmt.Sprintf("has a %s box shorter than its header", printable(typ))
			}
		}
		if n > size-off {
			return fmt.Sprintf("has a %s box that runs past the end of the file", printable(typ))
		}
		off += n
	}
	return ""
}

// contains reports whether the file holds needle, reading it in pieces.
func contains(r io.ReaderAt, size int64, needle []byte) bool {
	const piece = 64 << 10
	buf := make([]byte, piece+len(needle))
	for off := int64(0); off < size; off += piece {
		n, _ := r.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if bytes.Contains(buf[:n], needle) {
			return true
		}
	}
	return false
}
