package webhook

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// answers are receivers' answers, common and odd, each followed by
// whatever else the test puts after it on the connection.
var answers = []string{
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nDate: Mon, 30 Nov 2026 10:00:00 GMT\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 204 No Content\r\n\r\n",
	"HTTP/1.1 200\r\nContent-Length: 3\r\n\r\nabc",
	"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 5\r\nConnection: close\r\n\r\noops!",
	"HTTP/1.1 410 Gone\r\nContent-Length: 4\r\nConnection: keep-alive, Close\r\n\r\ngone",
	"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 02\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nok",
	"HTTP/1.1 200 OK\r\n\r\nto the end",
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
	"HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n",
	"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nBad Name: a\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nX-Ctl: a\x01b\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
	"HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 20x OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length:   7  \r\n\r\n{\"a\":1}",
	"HTTP/1.1 200 OK\r\nContent-Length: 1500\r\n\r\n" + strings.Repeat("b", 1500),
	"HTTP/1.1 200 OK\r\nContent-Length: 9000\r\n\r\n" + strings.Repeat("c", 9000),
	"",
	"HTTP/1.1 200 OK\r\nContent-Len",
}

// reference is what net/http's reading makes of an answer.
func reference(data string) (a Answer, keep bool, err error) {
	return readAnswer(bufio.NewReaderSize(strings.NewReader(data), 4096))
}

// agree checks plainAnswer against net/http's reading of the same bytes:
// when it takes an answer, it reads it as net/http does; when it does not,
// it consumes nothing.
func agree(t *testing.T, data string) (taken bool) {
	t.Helper()
	br := bufio.NewReaderSize(strings.NewReader(data), 4096)
	a, keep, ok := plainAnswer(br)
	if !ok {
		if rest := br.Buffered(); rest != 0 && rest != min(len(data), 4096) {
			t.Fatalf("%q: not taken, but %d of %d buffered bytes consumed", data, min(len(data), 4096)-rest, min(len(data), 4096))
		}
		return false
	}
	want, wantKeep, err := reference(data)
	if err != nil {
		t.Fatalf("%q: taken as %d, but net/http refused it: %v", data, a.Status, err)
	}
	if a.Status != want.Status || !bytes.Equal(a.Head, want.Head) || keep != wantKeep {
		t.Fatalf("%q: taken as status %d, head %q, keep %v; net/http: %d, %q, %v",
			data, a.Status, a.Head, keep, want.Status, want.Head, wantKeep)
	}
	return true
}

func TestPlainAnswerReadsWhatNetHTTPReads(t *testing.T) {
	taken := 0
	for _, ans := range answers {
		for _, after := range []string{"", "HTTP/1.1 200 OK\r\n"} {
			if agree(t, ans+after) {
				taken++
			}
		}
	}
	// The common answers must take the fast path, or it saves nothing.
	for _, common := range []string{answers[0], answers[1], answers[4], answers[23], answers[24]} {
		if !agree(t, common) {
			t.Errorf("%q: left to net/http", common)
		}
	}
	if taken == 0 {
		t.Fatal("no answer took the fast path")
	}
}

func TestPlainAnswerLeavesAnErrorToNetHTTP(t *testing.T) {
	br := bufio.NewReader(strings.NewReader(""))
	if _, _, ok := plainAnswer(br); ok {
		t.Fatal("an empty connection read as an answer")
	}
	if _, _, err := readAnswer(br); err == nil {
		t.Fatal("net/http read an answer from an empty connection after the fast path looked")
	}
}

func FuzzPlainAnswer(f *testing.F) {
	for _, a := range answers {
		f.Add(a)
	}
	f.Fuzz(func(t *testing.T, data string) {
		agree(t, data)
	})
}

// BenchmarkAnswer reads the answer of a Go receiver that writes nothing:
// the fast path against net/http's reading.
func BenchmarkAnswer(b *testing.B) {
	const ans = "HTTP/1.1 200 OK\r\nDate: Mon, 30 Nov 2026 10:00:00 GMT\r\nContent-Length: 0\r\n\r\n"
	r := strings.NewReader(ans)
	br := bufio.NewReaderSize(r, 4096)
	for _, tc := range []struct {
		name string
		read func() (int, bool)
	}{
		{"plain", func() (int, bool) { a, keep, _ := plainAnswer(br); return a.Status, keep }},
		{"nethttp", func() (int, bool) { a, keep, _ := readAnswer(br); return a.Status, keep }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(ans)
				br.Reset(r)
				if st, keep := tc.read(); st != 200 || !keep {
					b.Fatalf("read %d, keep %v", st, keep)
				}
			}
		})
	}
}
