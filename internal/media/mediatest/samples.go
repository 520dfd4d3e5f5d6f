// Package mediatest builds tiny but well-formed files of every type the
// media package accepts, and a few it refuses, for tests.
package mediatest

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"unicode/utf16"
)

func pixel() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 200, G: 30, B: 90, A: 255})
	return img
}

// PNG is a 1×1 PNG.
func PNG() []byte {
	var b bytes.Buffer
	_ = png.Encode(&b, pixel())
	return b.Bytes()
}

// JPEG is a 1×1 JPEG.
func JPEG() []byte {
	var b bytes.Buffer
	_ = jpeg.Encode(&b, pixel(), nil)
	return b.Bytes()
}

// GIF is a 1×1 GIF.
func GIF() []byte {
	var b bytes.Buffer
	_ = gif.Encode(&b, pixel(), nil)
	return b.Bytes()
}

// ISO returns an ISO base media file: an ftyp box with the major and
// compatible brands, then an empty mdat box.
func ISO(major string, compatible ...string) []byte {
	var b bytes.Buffer
	size := 16 + 4*len(compatible)
	_ = binary.Write(&b, binary.BigEndian, uint32(size))
	b.WriteString("ftyp" + major)
	_ = binary.Write(&b, binary.BigEndian, uint32(0x200))
	for _, c := range compatible {
		b.WriteString(c)
	}
	_ = binary.Write(&b, binary.BigEndian, uint32(8))
	b.WriteString("mdat")
	return b.Bytes()
}

// MP4 is an MP4 file header.
func MP4() []byte { return ISO("isom", "isom", "iso2", "avc1", "mp41") }

// GPP is a 3GPP file header.
func GPP() []byte { return ISO("3gp4", "3gp4", "isom") }

// PDF is a minimal PDF.
func PDF() []byte {
	return []byte("%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n" +
		"2 0 obj <</Type /Pages /Kids [] /Count 0>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n")
}

// OOXML builds an Office Open XML package whose main part (at partName)
// has the given content type.
func OOXML(partName, contentType string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("[Content_Types].xml")
	_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
		`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
		`<Default Extension="xml" ContentType="application/xml"/>` +
		`<Override PartName="/` + partName + `" ContentType="` + contentType + `"/></Types>`))
	w, _ = zw.Create("_rels/.rels")
	_, _ = w.Write([]byte(`<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"/>`))
	w, _ = zw.Create(partName)
	_, _ = w.Write([]byte(`<?xml version="1.0"?><document/>`))
	_ = zw.Close()
	return b.Bytes()
}

// DOCX, XLSX and PPTX are minimal Office Open XML documents.
func DOCX() []byte {
	return OOXML("word/document.xml", "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml")
}

func XLSX() []byte {
	return OOXML("xl/workbook.xml", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml")
}

func PPTX() []byte {
	return OOXML("ppt/presentation.xml", "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml")
}

// DOCM is a macro-enabled Word document, which is refused.
func DOCM() []byte {
	return OOXML("word/document.xml", "application/vnd.ms-word.document.macroEnabled.main+xml")
}

// Zip is a plain ZIP archive.
func Zip() []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("notes.txt")
	_, _ = w.Write([]byte("hello"))
	_ = zw.Close()
	return b.Bytes()
}

// CFB builds an OLE2 compound file (512-byte sectors) whose directory
// holds a root entry and one stream per name, four entries per sector, the
// directory sectors chained through the FAT.
func CFB(streams ...string) []byte {
	const sector = 512
	const end, free, fatSect = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD
	names := append([]string{"Root Entry"}, streams...)
	dirSectors := (len(names) + 3) / 4
	h := make([]byte, sector)
	copy(h, []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1})
	le := binary.LittleEndian
	le.PutUint16(h[0x18:], 0x3E)
	le.PutUint16(h[0x1A:], 3)
	le.PutUint16(h[0x1C:], 0xFFFE)
	le.PutUint16(h[0x1E:], 9)
	le.PutUint16(h[0x20:], 6)
	le.PutUint32(h[0x2C:], 1) // one FAT sector: sector 0
	le.PutUint32(h[0x30:], 1) // the directory starts at sector 1
	le.PutUint32(h[0x38:], 4096)
	le.PutUint32(h[0x3C:], end)
	le.PutUint32(h[0x44:], end)
	for i := 0; i < 109; i++ {
		le.PutUint32(h[0x4C+4*i:], free)
	}
	le.PutUint32(h[0x4C:], 0)

	fat := make([]byte, sector)
	for i := 0; i < sector/4; i++ {
		le.PutUint32(fat[4*i:], free)
	}
	le.PutUint32(fat, fatSect)
	for i := 1; i <= dirSectors; i++ {
		next := uint32(i + 1)
		if i == dirSectors {
			next = end
		}
		le.PutUint32(fat[4*i:], next)
	}
	dir := make([]byte, dirSectors*sector)
	for i, n := range names {
		e := dir[i*128 : (i+1)*128]
		u := utf16.Encode([]rune(n))
		for j, c := range u {
			le.PutUint16(e[2*j:], c)
		}
		le.PutUint16(e[0x40:], uint16(2*len(u)+2))
		e[0x42] = 2 // stream
		if i == 0 {
			e[0x42] = 5 // root storage
		}
		le.PutUint32(e[0x44:], free)
		le.PutUint32(e[0x48:], free)
		le.PutUint32(e[0x4C:], free)
		le.PutUint32(e[0x74:], end)
	}
	out := append(h, fat...)
	return append(out, dir...)
}

// DOC, XLS and PPT are legacy Office files, told apart by their streams
// (placed after a few others, so that the directory spans two sectors).
func DOC() []byte { return CFB("\x01CompObj", "SummaryInformation", "1Table", "Data", "WordDocument") }
func XLS() []byte { return CFB("Workbook") }
func PPT() []byte { return CFB("Current User", "PowerPoint Document") }

// MSI is an OLE2 file that is no Office document.
func MSI() []byte { return CFB("SummaryInformation", "Property") }

// ELF is the start of a Linux executable.
func ELF() []byte {
	return append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 56)...)
}

// Padded returns prefix followed by zero bytes up to size bytes in all.
func Padded(prefix []byte, size int) []byte {
	b := make([]byte, size)
	copy(b, prefix)
	return b
}

// PNGOfSize is a well-formed 1×1 PNG of exactly size bytes: an ancillary
// chunk before IEND holds the padding (bytes after IEND are refused).
func PNGOfSize(size int) []byte {
	p := PNG()
	iend := p[len(p)-12:]
	n := size - len(p) - 12
	if n < 0 {
		n = 0
	}
	chunk := make([]byte, 12+n)
	binary.BigEndian.PutUint32(chunk, uint32(n))
	copy(chunk[4:], "zzPd")
	binary.BigEndian.PutUint32(chunk[8+n:], crc32.ChecksumIEEE(chunk[4:8+n]))
	out := append(append(bytes.Clone(p[:len(p)-12]), chunk...), iend...)
	return out
}
