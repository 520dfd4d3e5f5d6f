package rbmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"
	"unicode/utf8"
)

// The AgentMessage resource as the RBM reference documents it. Decoding is
// strict: an unknown field is an error, as the platform's is.
type agentMessage struct {
	ContentMessage     *contentMessage `json:"contentMessage"`
	ExpireTime         string          `json:"expireTime"`
	TTL                string          `json:"ttl"`
	MessageTrafficType string          `json:"messageTrafficType"`
}

type contentMessage struct {
	Text            *string          `json:"text"`
	FileName        *string          `json:"fileName"`
	UploadedRbmFile *uploadedRbmFile `json:"uploadedRbmFile"`
	RichCard        *richCard        `json:"richCard"`
	ContentInfo     *contentInfo     `json:"contentInfo"`
	Suggestions     []suggestion     `json:"suggestions"`
}

type uploadedRbmFile struct {
	FileName      string `json:"fileName"`
	ThumbnailName string `json:"thumbnailName"`
}

type contentInfo struct {
	FileURL      string `json:"fileUrl"`
	ThumbnailURL string `json:"thumbnailUrl"`
	ForceRefresh bool   `json:"forceRefresh"`
}

type richCard struct {
	StandaloneCard *struct {
		CardOrientation         string       `json:"cardOrientation"`
		ThumbnailImageAlignment string       `json:"thumbnailImageAlignment"`
		CardContent             *cardContent `json:"cardContent"`
	} `json:"standaloneCard"`
	CarouselCard *struct {
		CardWidth    string        `json:"cardWidth"`
		CardContents []cardContent `json:"cardContents"`
	} `json:"carouselCard"`
}

type cardContent struct {
	Title       string       `json:"title"`
	Description string       `json:"description"`
	Media       *media       `json:"media"`
	Suggestions []suggestion `json:"suggestions"`
}

type media struct {
	Height          string           `json:"height"`
	FileURL         string           `json:"fileUrl"`
	UploadedRbmFile *uploadedRbmFile `json:"uploadedRbmFile"`
	ContentInfo     *contentInfo     `json:"contentInfo"`
}

type suggestion struct {
	Reply  *reply  `json:"reply"`
	Action *action `json:"action"`
}

type reply struct {
	Text         string `json:"text"`
	PostbackData string `json:"postbackData"`
}

type action struct {
	Text          string `json:"text"`
	PostbackData  string `json:"postbackData"`
	FallbackURL   string `json:"fallbackUrl"`
	OpenURLAction *struct {
		URL string `json:"url"`
	} `json:"openUrlAction"`
	DialAction *struct {
		PhoneNumber string `json:"phoneNumber"`
	} `json:"dialAction"`
}

// checkAgentMessage applies the documented rules: one kind of content,
// text up to 3072 characters, at most 11 suggestions (4 on a card) with
// texts up to 25 characters, a carousel of 2 to 10 cards, media with a
// height and one source, uploaded files that exist, a valid expireTime.
func checkAgentMessage(body []byte, files map[string]File) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var m agentMessage
	if err := dec.Decode(&m); err != nil {
		return err
	}
	if m.ContentMessage == nil {
		return errors.New("contentMessage is required")
	}
	if m.ExpireTime != "" && m.TTL != "" {
		return errors.New("expireTime and ttl are exclusive")
	}
	if m.ExpireTime != "" {
		if _, err := time.Parse(time.RFC3339Nano, m.ExpireTime); err != nil {
			return fmt.Errorf("expireTime %q is not a timestamp", m.ExpireTime)
		}
	}
	c := m.ContentMessage
	kinds := 0
	for _, set := range []bool{c.Text != nil, c.FileName != nil, c.UploadedRbmFile != nil, c.RichCard != nil, c.ContentInfo != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return fmt.Errorf("contentMessage must have exactly one of text, fileName, uploadedRbmFile, richCard, contentInfo (has %d)", kinds)
	}
	if c.Text != nil && (*c.Text == "" || utf8.RuneCountInString(*c.Text) > 3072) {
		return errors.New("text must be 1 to 3072 characters")
	}
	if c.UploadedRbmFile != nil && files[c.UploadedRbmFile.FileName].Name == "" {
		return fmt.Errorf("no uploaded file %q", c.UploadedRbmFile.FileName)
	}
	if err := checkSuggestions(c.Suggestions, 11); err != nil {
		return err
	}
	if c.RichCard != nil {
		return checkRichCard(c.RichCard, files)
	}
	return nil
}

func checkRichCard(rc *richCard, files map[string]File) error {
	switch {
	case (rc.StandaloneCard == nil) == (rc.CarouselCard == nil):
		return errors.New("richCard must have exactly one of standaloneCard, carouselCard")
	case rc.StandaloneCard != nil:
		s := rc.StandaloneCard
		if s.CardOrientation != "VERTICAL" && s.CardOrientation != "HORIZONTAL" {
			return fmt.Errorf("cardOrientation %q", s.CardOrientation)
		}
		if s.CardOrientation == "HORIZONTAL" && s.ThumbnailImageAlignment == "" {
			return errors.New("thumbnailImageAlignment is required for a horizontal card")
		}
		if s.CardContent == nil {
			return errors.New("cardContent is required")
		}
		return checkCard(*s.CardContent, files)
	}
	cc := rc.CarouselCard
	if cc.CardWidth != "SMALL" && cc.CardWidth != "MEDIUM" {
		return fmt.Errorf("cardWidth %q", cc.CardWidth)
	}
	if len(cc.CardContents) < 2 || len(cc.CardContents) > 10 {
		return fmt.Errorf("a carousel has 2 to 10 cards, not %d", len(cc.CardContents))
	}
	for i, card := range cc.CardContents {
		if err := checkCard(card, files); err != nil {
			return fmt.Errorf("card %d: %w", i, err)
		}
	}
	return nil
}

func checkCard(c cardContent, files map[string]File) error {
	if c.Title == "" && c.Description == "" && c.Media == nil {
		return errors.New("a card needs a title, a description or media")
	}
	if utf8.RuneCountInString(c.Title) > 200 || utf8.RuneCountInString(c.Description) > 2000 {
		return errors.New("title over 200 or description over 2000 characters")
	}
	if m := c.Media; m != nil {
		if m.Height != "SHORT" && m.Height != "MEDIUM" && m.Height != "TALL" {
			return fmt.Errorf("media height %q", m.Height)
		}
		sources := 0
		for _, set := range []bool{m.FileURL != "", m.UploadedRbmFile != nil, m.ContentInfo != nil} {
			if set {
				sources++
			}
		}
		switch {
		case sources != 1:
			return errors.New("media must have exactly one of fileUrl, uploadedRbmFile, contentInfo")
		case m.UploadedRbmFile != nil && files[m.UploadedRbmFile.FileName].Name == "":
			return fmt.Errorf("no uploaded file %q", m.UploadedRbmFile.FileName)
		case m.ContentInfo != nil && !absoluteURL(m.ContentInfo.FileURL):
			return fmt.Errorf("contentInfo.fileUrl %q", m.ContentInfo.FileURL)
		}
	}
	return checkSuggestions(c.Suggestions, 4)
}

func checkSuggestions(ss []suggestion, limit int) error {
	if len(ss) > limit {
		return fmt.Errorf("at most %d suggestions here, got %d", limit, len(ss))
	}
	for i, s := range ss {
		if (s.Reply == nil) == (s.Action == nil) {
			return fmt.Errorf("suggestion %d must be exactly one of reply, action", i)
		}
		text, postback := "", ""
		if s.Reply != nil {
			text, postback = s.Reply.Text, s.Reply.PostbackData
		} else {
			a := s.Action
			text, postback = a.Text, a.PostbackData
			switch {
			case (a.OpenURLAction == nil) == (a.DialAction == nil):
				return fmt.Errorf("action %d must be exactly one of openUrlAction, dialAction", i)
			case a.OpenURLAction != nil && !absoluteURL(a.OpenURLAction.URL):
				return fmt.Errorf("action %d: url %q", i, a.OpenURLAction.URL)
			case a.DialAction != nil && !validPhone(a.DialAction.PhoneNumber):
				return fmt.Errorf("action %d: phoneNumber %q is not E.164", i, a.DialAction.PhoneNumber)
			}
		}
		if text == "" || utf8.RuneCountInString(text) > 25 {
			return fmt.Errorf("suggestion %d: text must be 1 to 25 characters", i)
		}
		if postback == "" || len(postback) > 2048 {
			return fmt.Errorf("suggestion %d: postbackData must be 1 to 2048 characters", i)
		}
	}
	return nil
}

func absoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}
