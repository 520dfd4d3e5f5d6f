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

// Check applies the rules every rich channel shares, and its own.
func TestCheck(t *testing.T) {
	fieldtest.CheckShared(t, fieldtest.Shared{Text: MaxText, Buttons: MaxSuggestions, Title: MaxSuggestionText},
		func(text string, buttons []Button) []Problem { return Check(Message{Text: text, Buttons: buttons}) })
	c := fieldtest.C[Message]
	fieldtest.Run(t, Check, []fieldtest.Case[Message]{
		c("postback over", Message{Text: "t", Buttons: []Button{{Type: "reply", Title: "s", Payload: strings.Repeat("p", MaxPostback+1)}}}, "buttons[0].payload"),
		c("url action", Message{Text: "t", Buttons: []Button{{Type: "url", Title: "Go", URL: "http://x.example/a"}}}, ""),
		c("url missing", Message{Text: "t", Buttons: []Button{{Type: "url", Title: "Go"}}}, "buttons[0].url"),
		c("dial action", Message{Text: "t", Buttons: []Button{{Type: "call", Title: "Call", Phone: "5511999990000"}}}, ""),
		c("dial with payload", Message{Text: "t", Buttons: []Button{{Type: "call", Title: "Call", Phone: "5511999990000", Payload: "x"}}}, "buttons[0].payload"),
		c("unknown type", Message{Text: "t", Buttons: []Button{{Type: "share", Title: "S"}}}, "buttons[0].type"),
		c("10 cards", Message{Text: "t", Cards: cards(10)}, ""),
		c("11 cards", Message{Text: "t", Cards: cards(11)}, "cards"),
		c("no cards", Message{Text: "t", Cards: []Card{}}, "cards"),
		c("empty card", Message{Text: "t", Cards: []Card{{}}}, "cards[0]"),
		c("media-only card", Message{Text: "t", Cards: []Card{{HasMedia: true}}}, ""),
		c("card title over", Message{Text: "t", Cards: []Card{{Title: strings.Repeat("t", MaxCardTitle+1)}}}, "cards[0].title"),
		c("card description over", Message{Text: "t", Cards: []Card{{Title: "a"}, {Description: strings.Repeat("d", MaxCardDescription+1)}}}, "cards[1].description"),
		c("4 card suggestions", Message{Text: "t", Cards: []Card{{Title: "a", Buttons: replies(MaxCardSuggestions)}}}, ""),
		c("5 card suggestions", Message{Text: "t", Cards: []Card{{Title: "a", Buttons: replies(MaxCardSuggestions + 1)}}}, "cards[0].buttons"),
		c("card suggestion title", Message{Text: "t", Cards: []Card{{Title: "a", Buttons: []Button{{Type: "reply", Payload: "p"}}}}}, "cards[0].buttons[0].title"),
		c("media and cards", Message{Text: "t", HasMedia: true, Cards: cards(2)}, "media"),
	})
}
