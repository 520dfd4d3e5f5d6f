package media

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Sniff recognises an accepted type from the content of a file of size
// bytes. Only the bytes decide: a name or a declared type is never asked
// for. Content of any other type gives an error wrapping ErrUnsupported.
func Sniff(r io.ReaderAt, size int64) (Type, error) {
	head := make([]byte, min(size, maxHeadLength))
	if n, err := r.ReadAt(head, 0); n < len(head) {
		return Type{}, fmt.Errorf("read file: %w", err)
	}
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return JPEG, nil
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return PNG, nil
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return GIF, nil
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return PDF, nil
	case len(head) >= 8 && string(head[4:8]) == "ftyp":
		return sniffFtyp(head)
	case bytes.HasPrefix(head, cfbMagic):
		return sniffCFB(r, size)
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return sniffOOXML(r, size)
	}
	return Type{}, unsupported(looksLike(head))
}

func unsupported(what string) error {
	var names []string
	for _, t := range Types() {
		names = append(names, t.Name)
	}
	return fmt.Errorf("%w: the content is %s; accepted are %s", ErrUnsupported, what, strings.Join(names, ", "))
}

// looksLike names unrecognised content for the error message.
func looksLike(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return "an ELF executable"
	case bytes.HasPrefix(head, []byte("MZ")):
		return "a Windows executable"
	}
	ct := http.DetectContentType(head)
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	if ct == "application/octet-stream" {
		return "of an unknown type"
	}
	return "detected as " + ct
}

// sniffFtyp reads the ftyp box that opens ISO base media files (MP4, 3GPP,
// but also QuickTime, M4A audio, HEIC and AVIF images). The major brand
// decides; a file with an unfamiliar major brand is accepted when it
// declares compatibility with a video brand we know.
func sniffFtyp(head []byte) (Type, error) {
	if len(head) < 16 {
		return Type{}, unsupported("a truncated ISO media file")
	}
	boxSize := int(binary.BigEndian.Uint32(head[:4]))
	if boxSize < 16 {
		return Type{}, unsupported("an ISO media file with a malformed ftyp box")
	}
	brands := []string{string(head[8:12])}
	for i := 16; i+4 <= min(boxSize, len(head)); i += 4 {
		brands = append(brands, string(head[i:i+4]))
	}
	if t, ok, why := brandType(brands[0]); ok || why != "" {
		if !ok {
			return Type{}, unsupported(why)
		}
		return t, nil
	}
	for _, b := range brands[1:] {
		if _, _, why := brandType(b); why != "" {
			return Type{}, unsupported(why)
		}
	}
	for _, b := range brands[1:] {
		if t, ok, _ := brandType(b); ok {
			return t, nil
		}
	}
	return Type{}, unsupported(fmt.Sprintf("an ISO media file of brand %q", brands[0]))
}

// brandType maps an ftyp brand to an accepted type (ok), to a reason for
// refusing it (why), or to neither when the brand says nothing.
func brandType(b string) (t Type, ok bool, why string) {
	switch {
	case strings.HasPrefix(b, "3g2"):
		return Type{}, false, "3GPP2 video"
	case strings.HasPrefix(b, "3gp"), strings.HasPrefix(b, "3ge"), strings.HasPrefix(b, "3gg"),
		strings.HasPrefix(b, "3gr"), strings.HasPrefix(b, "3gs"):
		return GPP, true, ""
	}
	switch b {
	case "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "iso8", "iso9", "mp41", "mp42", "avc1", "mmp4",
		"dash", "M4V ", "M4VP", "M4VH", "MSNV":
		return MP4, true, ""
	case "qt  ":
		return Type{}, false, "QuickTime video"
	case "M4A ", "M4B ", "M4P ", "F4A ":
		return Type{}, false, "MPEG-4 audio"
	case "heic", "heix", "heim", "heis", "hevc", "mif1", "msf1", "avif", "avis":
		return Type{}, false, "a HEIF/AVIF image"
	}
	return Type{}, false, ""
}

// Office Open XML (DOCX, XLSX, PPTX) is a ZIP whose [Content_Types].xml
// declares the main part's type. Macro-enabled variants declare different
// types and are refused with the rest.
var ooxmlMain = map[string]Type{
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml":   DOCX,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml":         XLSX,
	"application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml": PPTX,
}

// maxContentTypesXML bounds how much of [Content_Types].xml is inflated,
// so that a small compressed entry cannot expand without limit.
const maxContentTypesXML = 256 << 10

func sniffOOXML(r io.ReaderAt, size int64) (Type, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return Type{}, unsupported("a damaged ZIP archive")
	}
	parts := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		parts[f.Name] = f
	}
	ctFile := parts["[Content_Types].xml"]
	if ctFile == nil {
		return Type{}, unsupported("a ZIP archive")
	}
	rc, err := ctFile.Open()
	if err != nil {
		return Type{}, unsupported("a damaged ZIP archive")
	}
	defer rc.Close()
	var types struct {
		Overrides []struct {
			PartName    string `xml:"PartName,attr"`
			ContentType string `xml:"ContentType,attr"`
		} `xml:"Override"`
	}
	if err := xml.NewDecoder(io.LimitReader(rc, maxContentTypesXML)).Decode(&types); err != nil {
		return Type{}, unsupported("a ZIP archive with an unreadable [Content_Types].xml")
	}
	for _, o := range types.Overrides {
		t, ok := ooxmlMain[o.ContentType]
		if !ok {
			continue
		}
		if parts[strings.TrimPrefix(o.PartName, "/")] == nil {
			return Type{}, unsupported("an Office document whose main part is missing")
		}
		return t, nil
	}
	return Type{}, unsupported("a ZIP archive that is not a DOCX, XLSX or PPTX (macro-enabled documents are not accepted)")
}
