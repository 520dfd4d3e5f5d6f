package manage

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/user"
)

// ReplyStore is what reading replies (recipients' messages to the
// account) needs from storage.
type ReplyStore interface {
	Replies(ctx context.Context, f domain.ReplyFilter) ([]domain.Inbound, error)
	RepliesTo(ctx context.Context, m domain.Message, limit int) ([]domain.Inbound, error)
}

// repliesShown bounds the replies a message's page shows.
const repliesShown = 50

// ReplyQuery filters an account's replies; every field is optional.
type ReplyQuery struct {
	Environment string // test or live; both when empty
	Phone       string // digits, country code first
	Cursor      string // Next of the previous page
	Limit       int    // 1 to 1000, default 50
}

// ReplyPage is one page of replies, newest first; Next is the cursor of
// the following page ("" on the last).
type ReplyPage struct {
	Replies []domain.Inbound
	Next    string
}

// Replies lists an account's replies, newest first. A reseller reading a
// child's sees them without their texts, as with messages.
func (s *Service) Replies(ctx context.Context, a Actor, accountID string, q ReplyQuery) (ReplyPage, error) {
	acct, below, err := s.reach(ctx, a, accountID, user.Viewer)
	if err != nil {
		return ReplyPage{}, err
	}
	f := domain.ReplyFilter{AccountID: acct.ID, Limit: 50}
	var p problems
	if q.Environment != "" {
		env, err := domain.ParseEnvironment(q.Environment)
		if err != nil {
			p.add("environment", "must be test or live")
		}
		f.Env = env
	}
	if q.Phone != "" {
		if strings.Trim(q.Phone, "0123456789") != "" || len(q.Phone) > 15 {
			p.add("phone", "must be digits only, country code first")
		}
		f.Phone = q.Phone
	}
	if q.Limit != 0 {
		if q.Limit < 1 || q.Limit > 1000 {
			p.add("limit", "must be a whole number from 1 to 1000")
		}
		f.Limit = q.Limit
	}
	if q.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil || !strings.HasPrefix(string(b), "inb_") {
			p.add("cursor", "is not a cursor this page returned")
		}
		f.Before = string(b)
	}
	if err := p.err("The search is not valid."); err != nil {
		return ReplyPage{}, err
	}
	limit := f.Limit
	f.Limit++
	list, err := s.st.Replies(ctx, f)
	if err != nil {
		return ReplyPage{}, err
	}
	if below {
		for i := range list {
			list[i].Body = ""
		}
	}
	page := ReplyPage{Replies: nonNil(list)}
	if len(list) > limit {
		page.Replies = list[:limit]
		page.Next = base64.RawURLEncoding.EncodeToString([]byte(list[limit-1].ID))
	}
	return page, nil
}
