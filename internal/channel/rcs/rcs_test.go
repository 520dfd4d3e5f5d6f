package rcs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/channel/field/fieldtest"
)

var replies = fieldtest.Replies

func cards(n int) []Card {
	out := make([]Card, n)
	for i := range out {
		out[i] = Card{Title: fmt.Sprintf("Card %d", i)}
	}
	return out
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name  string
		m     Message
		field string // "" means valid
	}{
		{"text at limit", Message{Text: strings.Repeat("ü", MaxText)}, ""},
		{"text over", Message{Text: strings.Repeat("ü", MaxText+1)}, "message"},
		{"3 suggestions", Message{Text: "t", Buttons: replies(3)}, ""},
		{"4 suggestions", Message{Text: "t", Buttons: replies(4)}, "buttons"},
		{"no suggestions", Message{Text: "t", Buttons: []Button{}}, "buttons"},
		{"suggestion at limit", Message{Text: "t", Buttons: []Button{{Type: "reply", Title: strings.Repeat("s", MaxSuggestionText), Payload: "p"}}}, ""},
		{"suggestion over", Message{Text: "t", Buttons: []Button{{Type: "reply", Title: strings.Repeat("s", MaxSuggestionText+1), Payload: "p"}}}, "buttons[0].title"},
		{"postback over", Message{Text: "t", Buttons: []Button{{Type: "reply", Title: "s", Payload: strings.Repeat("p", MaxPostback+1)}}}, "buttons[0].payload"},
		{"url action", Message{Text: "t", Buttons: []Button{{Type: "url", Title: "Go", URL: "http://x.example/a"}}}, ""},
		{"url missing", Message{Text: "t", Buttons: []Button{{Type: "url", Title: "Go"}}}, "buttons[0].url"},
		{"dial action", Message{Text: "t", Buttons: []Button{{Type: "call", Title: "Call", Phone: "5511999990000"}}}, ""},
		{"dial with payload", Message{Text: "t", Buttons: []Button{{Type: "call", Title: "Call", Phone: "5511999990000", Payload: "x"}}}, "buttons[0].payload"},
		{"unknown type", Message{Text: "t", Buttons: []Button{{Type: "share", Title: "S"}}}, "buttons[0].type"},
		{"10 cards", Message{Text: "t", Cards: cards(10)}, ""},
		{"11 cards", Message{Text: "t", Cards: cards(11)}, "cards"},
		{"no cards", Message{Text: "t", Cards: []Card{}}, "cards"},
		{"empty card", Message{Text: "t", Cards: []Card{{}}}, "cards[0]"},
		{"media-only card", Message{Text: "t", Cards: []Card{{HasMedia: true}}}, ""},
		{"card title over", Message{Text: "t", Cards: []Card{{Title: strings.Repeat("t", MaxCardTitle+1)}}}, "cards[0].title"},
		{"card description over", Message{Text: "t", Cards: []Card{{Title: "a"}, {Description: strings.Repeat("d", MaxCardDescription+1)}}}, "cards[1].description"},
		{"4 card suggestions", Message{Text: "t", Cards: []Card{{Title: "a", Buttons: replies(MaxCardSuggestions)}}}, ""},
		{"5 card suggestions", Message{Text: "t", Cards: []Card{{Title: "a", Buttons: replies(MaxCardSuggestions + 1)}}}, "cards[0].buttons"},
		{"card suggestion title", Message{Text: "t", Cards: []Card{{Title: "a", Buttons: []Button{{Type: "reply", Payload: "p"}}}}}, "cards[0].buttons[0].title"},
		{"media and cards", Message{Text: "t", HasMedia: true, Cards: cards(2)}, "media"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { fieldtest.Want(t, Check(c.m), c.field) })
	}
}
