package template_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
	"github.com/msgsvc/msgsvc/internal/template"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func TestPlaceholders(t *testing.T) {
	tests := []struct {
		body    string
		want    int
		wantErr string
	}{
		{"No placeholders.", 0, ""},
		{"Hi {{1}}", 1, ""},
		{"Hello {{1}}, welcome to {{2}}!", 2, ""},
		{"{{2}} then {{1}}, and {{1}} again", 2, ""},
		{"Braces { } and {x} are text", 0, ""},
		{"Skips {{1}} {{3}}", 0, "{{2}} is missing"},
		{"Starts at {{2}}", 0, "{{1}} is missing"},
		{"Zero {{0}}", 0, "{{0}} is not a placeholder"},
		{"Leading zero {{01}}", 0, "{{01}} is not a placeholder"},
		{"Named {{name}}", 0, "{{name}} is not a placeholder"},
		{"Spaced {{ 1 }}", 0, "{{ 1 }} is not a placeholder"},
		{"Empty {{}}", 0, "{{}} is not a placeholder"},
	}
	for _, tc := range tests {
		n, err := template.Placeholders(tc.body)
		if tc.wantErr == "" && (err != nil || n != tc.want) {
			t.Errorf("Placeholders(%q) = %d, %v; want %d", tc.body, n, err, tc.want)
		}
		if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("Placeholders(%q) = %d, %v; want error with %q", tc.body, n, err, tc.wantErr)
		}
	}
}

func TestRender(t *testing.T) {
	welcome := template.Template{Name: "welcome", Language: "en", Body: "Hello {{1}}, welcome to {{2}}!"}
	twice := template.Template{Name: "twice", Language: "en", Body: "{{1}} and {{1}}"}
	plain := template.Template{Name: "plain", Language: "en", Body: "No parameters."}
	tests := []struct {
		name    string
		tpl     template.Template
		params  []string
		want    string
		wantErr string
	}{
		{"two", welcome, []string{"Ana", "Acme"}, "Hello Ana, welcome to Acme!", ""},
		{"repeated placeholder", twice, []string{"x"}, "x and x", ""},
		{"none", plain, nil, "No parameters.", ""},
		{"value with braces is not expanded", welcome, []string{"{{2}}", "Acme"}, "Hello {{2}}, welcome to Acme!", ""},
		{"too few", welcome, []string{"Ana"}, "", "welcome (en) expects 2 parameters, 1 given"},
		{"too many", welcome, []string{"Ana", "Acme", "extra"}, "", "expects 2 parameters, 3 given"},
		{"none expected", plain, []string{"x"}, "", "expects 0 parameters, 1 given"},
		{"empty value", welcome, []string{"Ana", " "}, "", "parameter 2 is empty"},
		{"newline", welcome, []string{"A\nna", "Acme"}, "", "parameter 1 contains a newline"},
		{"tab", welcome, []string{"Ana", "Ac\tme"}, "", "parameter 2 contains a newline or tab"},
		{"five spaces", welcome, []string{"Ana     B", "Acme"}, "", "more than four spaces"},
		{"four spaces are fine", welcome, []string{"Ana    B", "Acme"}, "Hello Ana    B, welcome to Acme!", ""},
	}
	for _, tc := range tests {
		got, err := template.Render(tc.tpl, tc.params)
		if tc.wantErr == "" && (err != nil || got != tc.want) {
			t.Errorf("%s: Render = %q, %v; want %q", tc.name, got, err, tc.want)
		}
		if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: Render = %q, %v; want error with %q", tc.name, got, err, tc.wantErr)
		}
	}
}

func TestService(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		ctx := context.Background()
		acc, other := newAccount(t, st), newAccount(t, st)
		svc := template.New(st, func() time.Time { return t0 })

		creates := []struct {
			name    string
			in      template.NewTemplate
			wantErr string
			want    template.Template
		}{
			{"labels derived", template.NewTemplate{Name: "welcome", Language: "en", Category: "utility", Body: "Hello {{1}}, welcome to {{2}}!"},
				"", template.Template{Name: "welcome", Language: "en", Category: "UTILITY", Status: "APPROVED",
					Body: "Hello {{1}}, welcome to {{2}}!", Parameters: []string{"{{1}}", "{{2}}"}, CreatedAt: t0}},
			{"labels given, pending", template.NewTemplate{Name: "winter_sale", Language: "pt_BR", Category: "MARKETING", Status: "pending",
				Body: "Olá {{1}}!", Parameters: []string{"customer name"}},
				"", template.Template{Name: "winter_sale", Language: "pt_BR", Category: "MARKETING", Status: "PENDING",
					Body: "Olá {{1}}!", Parameters: []string{"customer name"}, CreatedAt: t0}},
			{"no placeholders", template.NewTemplate{Name: "code", Language: "fil", Category: "AUTHENTICATION", Body: "Static."},
				"", template.Template{Name: "code", Language: "fil", Category: "AUTHENTICATION", Status: "APPROVED",
					Body: "Static.", Parameters: []string{}, CreatedAt: t0}},
			{"same name other language", template.NewTemplate{Name: "welcome", Language: "es", Category: "UTILITY", Body: "Hola {{1}}"},
				"", template.Template{Name: "welcome", Language: "es", Category: "UTILITY", Status: "APPROVED",
					Body: "Hola {{1}}", Parameters: []string{"{{1}}"}, CreatedAt: t0}},
			{"duplicate", template.NewTemplate{Name: "welcome", Language: "en", Category: "UTILITY", Body: "Hi"}, "exists", template.Template{}},
			{"bad name", template.NewTemplate{Name: "Welcome!", Language: "en", Category: "UTILITY", Body: "Hi"}, "name", template.Template{}},
			{"bad language", template.NewTemplate{Name: "x", Language: "english", Category: "UTILITY", Body: "Hi"}, "language", template.Template{}},
			{"bad category", template.NewTemplate{Name: "x", Language: "en", Category: "PROMO", Body: "Hi"}, "category", template.Template{}},
			{"bad status", template.NewTemplate{Name: "x", Language: "en", Category: "UTILITY", Status: "OK", Body: "Hi"}, "status", template.Template{}},
			{"empty body", template.NewTemplate{Name: "x", Language: "en", Category: "UTILITY", Body: " "}, "body", template.Template{}},
			{"gap in placeholders", template.NewTemplate{Name: "x", Language: "en", Category: "UTILITY", Body: "{{2}}"}, "{{1}} is missing", template.Template{}},
			{"label count", template.NewTemplate{Name: "x", Language: "en", Category: "UTILITY", Body: "{{1}} {{2}}",
				Parameters: []string{"one"}}, "2 placeholders but 1 labels", template.Template{}},
		}
		for _, tc := range creates {
			got, err := svc.Create(ctx, acc, tc.in)
			if tc.wantErr == "" && (err != nil || !reflect.DeepEqual(got, tc.want)) {
				t.Errorf("%s: Create = %+v, %v; want %+v", tc.name, got, err, tc.want)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("%s: Create = %v, want error with %q", tc.name, err, tc.wantErr)
			}
		}
		if _, err := svc.Create(ctx, acc, template.NewTemplate{Name: "welcome", Language: "en", Category: "UTILITY", Body: "Hi"}); !errors.Is(err, template.ErrExists) {
			t.Errorf("duplicate: %v is not ErrExists", err)
		}

		list, err := svc.List(ctx, acc)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tpl := range list {
			names = append(names, tpl.Name+"/"+tpl.Language)
		}
		if want := []string{"code/fil", "welcome/en", "welcome/es", "winter_sale/pt_BR"}; !reflect.DeepEqual(names, want) {
			t.Errorf("List = %v, want %v", names, want)
		}
		if list, err := svc.List(ctx, other); err != nil || len(list) != 0 {
			t.Errorf("other account's List = %v, %v", list, err)
		}

		found, err := svc.Find(ctx, acc, "welcome", "en")
		if err != nil || found.Body != "Hello {{1}}, welcome to {{2}}!" || found.Sendable() != nil {
			t.Errorf("Find = %+v, %v", found, err)
		}
		pending, _ := svc.Find(ctx, acc, "winter_sale", "pt_BR")
		if err := pending.Sendable(); err == nil || !strings.Contains(err.Error(), "PENDING") {
			t.Errorf("pending Sendable = %v", err)
		}
		for _, miss := range [][3]string{{acc, "welcome", "fr"}, {acc, "nope", "en"}, {other, "welcome", "en"}} {
			_, err := svc.Find(ctx, miss[0], miss[1], miss[2])
			if !errors.Is(err, template.ErrNotFound) || !errors.Is(err, domain.ErrNotFound) {
				t.Errorf("Find %v = %v, want ErrNotFound", miss, err)
			}
		}
	})
}

func newAccount(t *testing.T, st *store.Store) string { return storetest.NewAccount(t, st, t0) }
