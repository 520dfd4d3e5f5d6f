package whatsapp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/channel/field/fieldtest"
)

var replies = fieldtest.Replies

func rows(n int, prefix string) []Row {
	out := make([]Row, n)
	for i := range out {
		out[i] = Row{ID: fmt.Sprintf("%s%d", prefix, i), Title: "r"}
	}
	return out
}

func list(sections ...Section) *List { return &List{Button: "Pick", Sections: sections} }

func TestCheck(t *testing.T) {
	cases := []struct {
		name  string
		m     Message
		field string // "" means valid
	}{
		{"text at limit", Message{Text: strings.Repeat("ã", MaxText)}, ""},
		{"text over", Message{Text: strings.Repeat("ã", MaxText+1)}, "message"},
		{"3 buttons", Message{Text: "t", Buttons: replies(3)}, ""},
		{"4 buttons", Message{Text: "t", Buttons: replies(4)}, "buttons"},
		{"no buttons", Message{Text: "t", Buttons: []Button{}}, "buttons"},
		{"title at limit", Message{Text: "t", Buttons: []Button{{Type: "reply", Title: strings.Repeat("é", MaxButtonTitle), Payload: "p"}}}, ""},
		{"title over", Message{Text: "t", Buttons: []Button{{Type: "reply", Title: strings.Repeat("é", MaxButtonTitle+1), Payload: "p"}}}, "buttons[0].title"},
		{"blank title", Message{Text: "t", Buttons: []Button{{Type: "reply", Title: " ", Payload: "p"}}}, "buttons[0].title"},
		{"same title", Message{Text: "t", Buttons: []Button{{Type: "reply", Title: "A", Payload: "1"}, {Type: "reply", Title: "A", Payload: "2"}}}, "buttons[1].title"},
		{"payload over", Message{Text: "t", Buttons: []Button{{Type: "reply", Title: "A", Payload: strings.Repeat("p", MaxButtonPayload+1)}}}, "buttons[0].payload"},
		{"reply with url", Message{Text: "t", Buttons: []Button{{Type: "reply", Title: "A", Payload: "p", URL: "https://x.example"}}}, "buttons[0].url"},
		{"no type", Message{Text: "t", Buttons: []Button{{Title: "A", Payload: "p"}}}, "buttons[0].type"},
		{"one url button", Message{Text: "t", Buttons: []Button{{Type: "url", Title: "Go", URL: "https://x.example/a"}}}, ""},
		{"url not absolute", Message{Text: "t", Buttons: []Button{{Type: "url", Title: "Go", URL: "/a"}}}, "buttons[0].url"},
		{"url with a reply", Message{Text: "t", Buttons: []Button{{Type: "url", Title: "Go", URL: "https://x.example"}, {Type: "reply", Title: "B", Payload: "p"}}}, "buttons[0].type"},
		{"one call button", Message{Text: "t", Buttons: []Button{{Type: "call", Title: "Call", Phone: "14155552671"}}}, ""},
		{"call bad number", Message{Text: "t", Buttons: []Button{{Type: "call", Title: "Call", Phone: "+1 415"}}}, "buttons[0].phone"},
		{"full list", Message{Text: "t", List: list(Section{"a", rows(10, "a")}, Section{"b", rows(10, "b")}, Section{"c", rows(10, "c")})}, ""},
		{"4 sections", Message{Text: "t", List: list(Section{"a", rows(1, "a")}, Section{"b", rows(1, "b")}, Section{"c", rows(1, "c")}, Section{"d", rows(1, "d")})}, "list.sections"},
		{"no sections", Message{Text: "t", List: list()}, "list.sections"},
		{"11 rows", Message{Text: "t", List: list(Section{"a", rows(11, "a")})}, "list.sections[0].rows"},
		{"31 rows in all", Message{Text: "t", List: list(Section{"a", rows(11, "a")}, Section{"b", rows(10, "b")}, Section{"c", rows(10, "c")})}, "list.sections"},
		{"empty section", Message{Text: "t", List: list(Section{"a", nil})}, "list.sections[0].rows"},
		{"one untitled section", Message{Text: "t", List: list(Section{"", rows(2, "a")})}, ""},
		{"untitled among two", Message{Text: "t", List: list(Section{"a", rows(1, "a")}, Section{"", rows(1, "b")})}, "list.sections[1].title"},
		{"list button over", Message{Text: "t", List: &List{Button: strings.Repeat("b", MaxListButton+1), Sections: []Section{{"a", rows(1, "a")}}}}, "list.button"},
		{"row title over", Message{Text: "t", List: list(Section{"a", []Row{{ID: "1", Title: strings.Repeat("r", MaxRowTitle+1)}}})}, "list.sections[0].rows[0].title"},
		{"row description over", Message{Text: "t", List: list(Section{"a", []Row{{ID: "1", Title: "r", Description: strings.Repeat("d", MaxRowDescription+1)}}})}, "list.sections[0].rows[0].description"},
		{"row id over", Message{Text: "t", List: list(Section{"a", []Row{{ID: strings.Repeat("i", MaxRowID+1), Title: "r"}}})}, "list.sections[0].rows[0].id"},
		{"row id repeated across sections", Message{Text: "t", List: list(Section{"a", rows(3, "x")}, Section{"b", rows(3, "y")}, Section{"c", rows(2, "x")})}, "list.sections[2].rows[1].id"},
		{"buttons and list", Message{Text: "t", Buttons: replies(1), List: list(Section{"a", rows(1, "a")})}, "list"},
		{"media and list", Message{Text: "t", HasMedia: true, List: list(Section{"a", rows(1, "a")})}, "media"},
		{"media and buttons", Message{Text: "t", HasMedia: true, Buttons: replies(2)}, ""},
		{"template", Message{Template: &Template{Name: "order_shipped", Language: "pt_BR", Parameters: []string{"Ana", "1042"}}}, ""},
		{"template and text", Message{Text: "t", Template: &Template{Name: "a", Language: "en"}}, "message"},
		{"template and buttons", Message{Buttons: replies(1), Template: &Template{Name: "a", Language: "en"}}, "buttons"},
		{"template upper case", Message{Template: &Template{Name: "Order", Language: "en"}}, "template.name"},
		{"template language", Message{Template: &Template{Name: "a", Language: "english"}}, "template.language"},
		{"template tab", Message{Template: &Template{Name: "a", Language: "en", Parameters: []string{"a\tb"}}}, "template.parameters[0]"},
		{"template 5 spaces", Message{Template: &Template{Name: "a", Language: "en", Parameters: []string{"ok", "a     b"}}}, "template.parameters[1]"},
		{"template too many parameters", Message{Template: &Template{Name: "a", Language: "en", Parameters: make([]string, MaxTemplateParams+1)}}, "template.parameters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { fieldtest.Want(t, Check(c.m), c.field) })
	}
}

func TestDailyLimit(t *testing.T) {
	for tier, want := range map[int]int{0: 1000, 1: 1000, 2: 10_000, 3: 100_000, 4: 0, 9: 1000} {
		if got := DailyLimit(tier); got != want {
			t.Errorf("tier %d: %d, want %d", tier, got, want)
		}
	}
}
