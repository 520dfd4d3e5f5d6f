package media

import (
	"encoding/binary"
	"io"
	"unicode/utf16"
)

// Legacy Office files (DOC, XLS, PPT) are OLE2 compound files: a small FAT
// file system in one file. The application is told by the streams in its
// directory, so sniffCFB walks just enough of the structure to list them.
// Every read is bounds-checked and every walk is bounded: the input is
// hostile.

var cfbMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

const (
	cfbEndOfChain  = 0xFFFFFFFE
	cfbMaxRegular  = 0xFFFFFFFA
	cfbHeaderFATs  = 109
	cfbDirEntry    = 128
	cfbMaxDirWalk  = 256 // directory sectors; real documents use a handful
	cfbMaxDIFATHop = 1024
)

// cfbStreams maps the stream that marks each application to its type.
var cfbStreams = map[string]Type{
	"WordDocument":        DOC,
	"Workbook":            XLS,
	"Book":                XLS, // Excel 5/95
	"PowerPoint Document": PPT,
}

type cfb struct {
	r          io.ReaderAt
	size       int64
	sectorSize int64
	fatSectors []uint32
}

func sniffCFB(r io.ReaderAt, size int64) (Type, error) {
	bad := unsupported("a damaged OLE2 compound file")
	var h [512]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return Type{}, bad
	}
	shift := binary.LittleEndian.Uint16(h[0x1E:])
	if shift != 9 && shift != 12 {
		return Type{}, bad
	}
	c := &cfb{r: r, size: size, sectorSize: 1 << shift}
	if err := c.readFATList(h[:]); err != nil {
		return Type{}, bad
	}
	names, err := c.directory(binary.LittleEndian.Uint32(h[0x30:]))
	if err != nil {
		return Type{}, bad
	}
	for _, n := range names {
		if t, ok := cfbStreams[n]; ok {
			return t, nil
		}
	}
	return Type{}, unsupported("an OLE2 compound file that is not a DOC, XLS or PPT")
}

// readFATList collects the sectors holding the FAT: the first 109 are
// listed in the header, the rest in a chain of DIFAT sectors.
func (c *cfb) readFATList(h []byte) error {
	n := binary.LittleEndian.Uint32(h[0x2C:])
	if int64(n) > c.size/c.sectorSize+1 {
		return io.ErrUnexpectedEOF
	}
	for i := 0; i < cfbHeaderFATs && uint32(len(c.fatSectors)) < n; i++ {
		c.fatSectors = append(c.fatSectors, binary.LittleEndian.Uint32(h[0x4C+4*i:]))
	}
	next := binary.LittleEndian.Uint32(h[0x44:])
	per := int(c.sectorSize/4) - 1
	buf := make([]byte, c.sectorSize)
	for hops := 0; uint32(len(c.fatSectors)) < n && next <= cfbMaxRegular; hops++ {
		if hops >= cfbMaxDIFATHop {
			return io.ErrUnexpectedEOF
		}
		if err := c.sector(next, buf); err != nil {
			return err
		}
		for i := 0; i < per && uint32(len(c.fatSectors)) < n; i++ {
			c.fatSectors = append(c.fatSectors, binary.LittleEndian.Uint32(buf[4*i:]))
		}
		next = binary.LittleEndian.Uint32(buf[4*per:])
	}
	return nil
}

// sector reads sector n into buf (sector 0 starts after the header).
func (c *cfb) sector(n uint32, buf []byte) error {
	if n > cfbMaxRegular {
		return io.ErrUnexpectedEOF
	}
	off := (int64(n) + 1) * c.sectorSize
	if off+c.sectorSize > c.size {
		return io.ErrUnexpectedEOF
	}
	_, err := c.r.ReadAt(buf, off)
	return err
}

// next follows the FAT from sector n.
func (c *cfb) next(n uint32) (uint32, error) {
	per := uint32(c.sectorSize / 4)
	idx := n / per
	if int(idx) >= len(c.fatSectors) {
		return 0, io.ErrUnexpectedEOF
	}
	var b [4]byte
	fatSector := c.fatSectors[idx]
	if fatSector > cfbMaxRegular {
		return 0, io.ErrUnexpectedEOF
	}
	off := (int64(fatSector)+1)*c.sectorSize + int64(n%per)*4
	if off+4 > c.size {
		return 0, io.ErrUnexpectedEOF
	}
	if _, err := c.r.ReadAt(b[:], off); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// directory lists the names of the storages and streams.
func (c *cfb) directory(first uint32) ([]string, error) {
	var names []string
	buf := make([]byte, c.sectorSize)
	seen := map[uint32]bool{}
	for s := first; s != cfbEndOfChain; {
		if seen[s] || len(seen) >= cfbMaxDirWalk {
			break // a loop, or a directory far larger than any document's
		}
		seen[s] = true
		if err := c.sector(s, buf); err != nil {
			return nil, err
		}
		for off := 0; off+cfbDirEntry <= len(buf); off += cfbDirEntry {
			e := buf[off : off+cfbDirEntry]
			typ := e[0x42]
			nameLen := int(binary.LittleEndian.Uint16(e[0x40:]))
			if (typ != 1 && typ != 2) || nameLen < 2 || nameLen > 64 || nameLen%2 != 0 {
				continue
			}
			u := make([]uint16, nameLen/2-1) // without the terminating NUL
			for i := range u {
				u[i] = binary.LittleEndian.Uint16(e[2*i:])
			}
			names = append(names, string(utf16.Decode(u)))
		}
		next, err := c.next(s)
		if err != nil {
			return nil, err
		}
		s = next
	}
	return names, nil
}
