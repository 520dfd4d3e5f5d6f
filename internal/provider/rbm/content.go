package rbm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// The AgentMessage of phones.agentMessages.create, as much of it as we
// send. AgentContentMessage is a union: text, a rich card, or a file, each
// with optional suggestions.
type agentMessage struct {
	ContentMessage contentMessage `json:"contentMessage"`
	ExpireTime     string         `json:"expireTime,omitempty"`
}

type contentMessage struct {
	Text        string       `json:"text,omitempty"`
	RichCard    *richCard    `json:"richCard,omitempty"`
	Suggestions []suggestion `json:"suggestions,omitempty"`
}

type richCard struct {
	StandaloneCard *standaloneCard `json:"standaloneCard,omitempty"`
	CarouselCard   *carouselCard   `json:"carouselCard,omitempty"`
}

type standaloneCard struct {
	CardOrientation string      `json:"cardOrientation"`
	CardContent     cardContent `json:"cardContent"`
}

type carouselCard struct {
	CardWidth    string        `json:"cardWidth"`
	CardContents []cardContent `json:"cardContents"`
}

type cardContent struct {
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	Media       *cardMedia   `json:"media,omitempty"`
	Suggestions []suggestion `json:"suggestions,omitempty"`
}

// cardMedia is a file in a card: one of ours, uploaded to the platform
// (uploadedRbmFile), or a public URL the platform fetches (contentInfo).
type cardMedia struct {
	Height          string        `json:"height"`
	UploadedRbmFile *uploadedFile `json:"uploadedRbmFile,omitempty"`
	ContentInfo     *contentInfo  `json:"contentInfo,omitempty"`
}

type uploadedFile struct {
	FileName string `json:"fileName"`
}

type contentInfo struct {
	FileURL string `json:"fileUrl"`
}

type suggestion struct {
	Reply  *suggestedReply  `json:"reply,omitempty"`
	Action *suggestedAction `json:"action,omitempty"`
}

type suggestedReply struct {
	Text         string `json:"text"`
	PostbackData string `json:"postbackData"`
}

type suggestedAction struct {
	Text          string         `json:"text"`
	PostbackData  string         `json:"postbackData"`
	OpenURLAction *openURLAction `json:"openUrlAction,omitempty"`
	DialAction    *dialAction    `json:"dialAction,omitempty"`
}

type openURLAction struct {
	URL string `json:"url"`
}

type dialAction struct {
	PhoneNumber string `json:"phoneNumber"`
}

// agentMessage renders a message in RBM's shape:
//
//   - text alone: a text message, buttons as suggestion chips;
//   - text and media: a vertical standalone card, the text as its
//     description, the buttons as the card's suggestions (RBM cannot
//     put text and a file in one message otherwise);
//   - one card: a standalone card; two to ten: a carousel (RBM's carousel
//     takes 2 to 10). The message text is not sent with cards: a card
//     message has no text of its own, and each card carries its title and
//     description. The message's buttons become chips under the cards.
//
// expireTime is the end of the message's validity: the platform takes an
// undelivered message back by itself then.
func (a *Adapter) agentMessage(ctx context.Context, o provider.Outbound) ([]byte, *provider.Error) {
	media := func(m *domain.Media) (*cardMedia, *provider.Error) {
		if m == nil {
			return nil, nil
		}
		return a.mediaOf(ctx, o.AccountID, a.agent(o), *m)
	}
	var msg agentMessage
	c := o.Content
	switch {
	case len(c.Cards) > 0:
		cards := make([]cardContent, len(c.Cards))
		for i, card := range c.Cards {
			m, perr := media(card.Media)
			if perr != nil {
				return nil, perr
			}
			cards[i] = cardContent{Title: card.Title, Description: card.Description, Media: m, Suggestions: suggestions(card.Buttons)}
		}
		msg.ContentMessage.RichCard = &richCard{CarouselCard: &carouselCard{CardWidth: "MEDIUM", CardContents: cards}}
		if len(cards) == 1 {
			msg.ContentMessage.RichCard = &richCard{StandaloneCard: &standaloneCard{CardOrientation: "VERTICAL", CardContent: cards[0]}}
		}
		msg.ContentMessage.Suggestions = suggestions(c.Buttons)
	case c.Media != nil:
		m, perr := media(c.Media)
		if perr != nil {
			return nil, perr
		}
		msg.ContentMessage.RichCard = &richCard{StandaloneCard: &standaloneCard{CardOrientation: "VERTICAL",
			CardContent: cardContent{Description: o.Body, Media: m, Suggestions: suggestions(c.Buttons)}}}
	default:
		msg.ContentMessage = contentMessage{Text: o.Body, Suggestions: suggestions(c.Buttons)}
	}
	if !o.ExpiresAt.IsZero() {
		msg.ExpireTime = domain.FormatTime(o.ExpiresAt)
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, permanent(domain.CodeRejected, "encode message: %v", err)
	}
	return b, nil
}

// suggestions turns buttons into RBM suggestions: a reply button into a
// suggested reply whose postback is its payload (it comes back in the
// user's answer), a url button into an open-URL action, a call button
// into a dial action. Actions need a postback too; theirs names the
// button ("url:0"), and a tap on them is not a reply.
func suggestions(bs []domain.Button) []suggestion {
	if len(bs) == 0 {
		return nil
	}
	out := make([]suggestion, len(bs))
	for i, b := range bs {
		switch b.Type {
		case domain.URLButton:
			out[i].Action = &suggestedAction{Text: b.Title, PostbackData: fmt.Sprintf("url:%d", i), OpenURLAction: &openURLAction{URL: b.URL}}
		case domain.CallButton:
			out[i].Action = &suggestedAction{Text: b.Title, PostbackData: fmt.Sprintf("call:%d", i),
				DialAction: &dialAction{PhoneNumber: "+" + strings.TrimPrefix(b.Phone, "+")}}
		default:
			out[i].Reply = &suggestedReply{Text: b.Title, PostbackData: b.Payload}
		}
	}
	return out
}
