package campaign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
)

func spool(t *testing.T, csv string) *Spool {
	t.Helper()
	s, err := Read(context.Background(), strings.NewReader(csv), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func rows(t *testing.T, s *Spool, n int) [][]SpooledRow {
	t.Helper()
	var out [][]SpooledRow
	err := s.Each(context.Background(), n, func(c Chunk) error {
		out = append(out, append([]SpooledRow(nil), c...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A file's rows come back in chunks with their lines, the "to" column
// found in any case and place, blank lines skipped, short rows padded and
// a row with too many cells kept with its problem.
func TestSpoolRowsAndLines(t *testing.T) {
	s := spool(t, "\ufeffName,TO\nAna,5511999990001\n\n\"Bruno, Jr\",5511999990002\nCarla\nDan,5511999990004,extra\n")
	if s.Rows() != 4 || fmt.Sprint(s.Variables()) != "[Name]" {
		t.Fatalf("%d rows, variables %v", s.Rows(), s.Variables())
	}
	got := rows(t, s, 3)
	if len(got) != 2 || len(got[0]) != 3 || len(got[1]) != 1 {
		t.Fatalf("chunks %v", got)
	}
	b := got[0][1]
	if b.Line != 4 || b.To != "5511999990002" || b.Vars["Name"] != "Bruno, Jr" || b.Problem != "" {
		t.Fatalf("row %+v", b)
	}
	if c := got[0][2]; c.Line != 5 || c.To != "" || c.Vars["Name"] != "Carla" {
		t.Fatalf("short row %+v", c)
	}
	if d := got[1][0]; d.Line != 6 || !strings.Contains(d.Problem, "3 cells") {
		t.Fatalf("long row %+v", d)
	}
	// The rows can be read again, the same.
	if again := rows(t, s, 3); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Fatal("a second read differs")
	}
}

func TestSpoolRefusals(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]struct {
		csv, want string
	}{
		"no to":       {"phone,name\n1,2\n", `no "to" column`},
		"empty":       {"", "is empty"},
		"twice":       {"to,To\n1,2\n", "twice"},
		"bad name":    {"to,first name\n1,2\n", "letters, digits"},
		"bad quoting": {"to,name\n5511999990001,\"Ana\n", "line 2"},
	} {
		_, err := Read(ctx, strings.NewReader(c.csv), t.TempDir())
		v, ok := domain.IsValidation(err)
		if !ok || v.Fields[0].Field != "file" || !strings.Contains(v.Error(), c.want) {
			t.Errorf("%s: %v, want a file error saying %q", name, err, c.want)
		}
	}
	var b strings.Builder
	b.WriteString("to\n")
	for i := 0; i <= MaxRows; i++ {
		fmt.Fprintf(&b, "%d\n", 5511900000000+i)
	}
	if _, err := Read(ctx, strings.NewReader(b.String()), t.TempDir()); !errors.Is(err, ErrTooManyRows) {
		t.Fatalf("%d rows: %v, want ErrTooManyRows", MaxRows+1, err)
	}
	big := io.MultiReader(strings.NewReader("to,name\n"), strings.NewReader(strings.Repeat("5511999990001,"+strings.Repeat("x", 1000)+"\n", MaxBytes/1000+10)))
	if _, err := Read(ctx, big, t.TempDir()); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("an upload over %d bytes: %v, want ErrTooLarge", MaxBytes, err)
	}
}

func TestTemplateFill(t *testing.T) {
	tm, err := ParseTemplate("Hi {{ name }}, {{City}} awaits {{to}}.", []string{"name", "city"})
	if err != nil {
		t.Fatal(err)
	}
	got := tm.Fill(Row{To: "5511999990001", Vars: map[string]string{"name": "Ana", "city": "Rio"}})
	if got != "Hi Ana, Rio awaits 5511999990001." || fmt.Sprint(tm.Names()) != "[name city to]" {
		t.Fatalf("filled %q, names %v", got, tm.Names())
	}
	for _, bad := range []string{"Hi {{first}}", "Hi {{name"} {
		if _, err := ParseTemplate(bad, []string{"name"}); err == nil {
			t.Errorf("%q was accepted", bad)
		} else if v, ok := domain.IsValidation(err); !ok || v.Fields[0].Field != "text" {
			t.Errorf("%q: %v, want a text error", bad, err)
		}
	}
}
