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

// Check applies the rules every rich channel shares, and its own.
func TestCheck(t *testing.T) {
	fieldtest.CheckShared(t, fieldtest.Shared{Text: MaxText, Buttons: MaxButtons, Title: MaxButtonTitle},
		func(text string, buttons []Button) []Problem { return Check(Message{Text: text, Buttons: buttons}) })
	c := fieldtest.C[Message]
	fieldtest.Run(t, Check, []fieldtest.Case[Message]{
		c("same title", Message{Text: "t", Buttons: []Button{{Type: "reply", Title: "A", Payload: "1"}, {Type: "reply", Title: "A", Payload: "2"}}}, "buttons[1].title"),
		c("payload over", Message{Text: "t", Buttons: []Button{{Type: "reply", Title: "A", Payload: strings.Repeat("p", MaxButtonPayload+1)}}}, "buttons[0].payload"),
		c("reply with url", Message{Text: "t", Buttons: []Button{{Type: "reply", Title: "A", Payload: "p", URL: "https://x.example"}}}, "buttons[0].url"),
		c("no type", Message{Text: "t", Buttons: []Button{{Title: "A", Payload: "p"}}}, "buttons[0].type"),
		c("one url button", Message{Text: "t", Buttons: []Button{{Type: "url", Title: "Go", URL: "https://x.example/a"}}}, ""),
		c("url not absolute", Message{Text: "t", Buttons: []Button{{Type: "url", Title: "Go", URL: "/a"}}}, "buttons[0].url"),
		c("url with a reply", Message{Text: "t", Buttons: []Button{{Type: "url", Title: "Go", URL: "https://x.example"}, {Type: "reply", Title: "B", Payload: "p"}}}, "buttons[0].type"),
		c("one call button", Message{Text: "t", Buttons: []Button{{Type: "call", Title: "Call", Phone: "14155552671"}}}, ""),
		c("call bad number", Message{Text: "t", Buttons: []Button{{Type: "call", Title: "Call", Phone: "+1 415"}}}, "buttons[0].phone"),
		c("full list", Message{Text: "t", List: list(Section{"a", rows(10, "a")}, Section{"b", rows(10, "b")}, Section{"c", rows(10, "c")})}, ""),
		c("4 sections", Message{Text: "t", List: list(Section{"a", rows(1, "a")}, Section{"b", rows(1, "b")}, Section{"c", rows(1, "c")}, Section{"d", rows(1, "d")})}, "list.sections"),
		c("no sections", Message{Text: "t", List: list()}, "list.sections"),
		c("11 rows", Message{Text: "t", List: list(Section{"a", rows(11, "a")})}, "list.sections[0].rows"),
		c("31 rows in all", Message{Text: "t", List: list(Section{"a", rows(11, "a")}, Section{"b", rows(10, "b")}, Section{"c", rows(10, "c")})}, "list.sections"),
		c("empty section", Message{Text: "t", List: list(Section{"a", nil})}, "list.sections[0].rows"),
		c("one untitled section", Message{Text: "t", List: list(Section{"", rows(2, "a")})}, ""),
		c("untitled among two", Message{Text: "t", List: list(Section{"a", rows(1, "a")}, Section{"", rows(1, "b")})}, "list.sections[1].title"),
		c("list button over", Message{Text: "t", List: &List{Button: strings.Repeat("b", MaxListButton+1), Sections: []Section{{"a", rows(1, "a")}}}}, "list.button"),
		c("row title over", Message{Text: "t", List: list(Section{"a", []Row{{ID: "1", Title: strings.Repeat("r", MaxRowTitle+1)}}})}, "list.sections[0].rows[0].title"),
		c("row description over", Message{Text: "t", List: list(Section{"a", []Row{{ID: "1", Title: "r", Description: strings.Repeat("d", MaxRowDescription+1)}}})}, "list.sections[0].rows[0].description"),
		c("row id over", Message{Text: "t", List: list(Section{"a", []Row{{ID: strings.Repeat("i", MaxRowID+1), Title: "r"}}})}, "list.sections[0].rows[0].id"),
		c("row id repeated across sections", Message{Text: "t", List: list(Section{"a", rows(3, "x")}, Section{"b", rows(3, "y")}, Section{"c", rows(2, "x")})}, "list.sections[2].rows[1].id"),
		c("buttons and list", Message{Text: "t", Buttons: replies(1), List: list(Section{"a", rows(1, "a")})}, "list"),
		c("media and list", Message{Text: "t", HasMedia: true, List: list(Section{"a", rows(1, "a")})}, "media"),
		c("media and buttons", Message{Text: "t", HasMedia: true, Buttons: replies(2)}, ""),
		c("template", Message{Template: &Template{Name: "order_shipped", Language: "pt_BR", Parameters: []string{"Ana", "1042"}}}, ""),
		c("template and text", Message{Text: "t", Template: &Template{Name: "a", Language: "en"}}, "message"),
		c("template and buttons", Message{Buttons: replies(1), Template: &Template{Name: "a", Language: "en"}}, "buttons"),
		c("template upper case", Message{Template: &Template{Name: "Order", Language: "en"}}, "template.name"),
		c("template language", Message{Template: &Template{Name: "a", Language: "english"}}, "template.language"),
		c("template tab", Message{Template: &Template{Name: "a", Language: "en", Parameters: []string{"a\tb"}}}, "template.parameters[0]"),
		c("template 5 spaces", Message{Template: &Template{Name: "a", Language: "en", Parameters: []string{"ok", "a     b"}}}, "template.parameters[1]"),
		c("template too many parameters", Message{Template: &Template{Name: "a", Language: "en", Parameters: make([]string, MaxTemplateParams+1)}}, "template.parameters"),
	})
}

func TestDailyLimit(t *testing.T) {
	for tier, want := range map[int]int{0: 1000, 1: 1000, 2: 10_000, 3: 100_000, 4: 0, 9: 1000} {
		if got := DailyLimit(tier); got != want {
			t.Errorf("tier %d: %d, want %d", tier, got, want)
		}
	}
}
