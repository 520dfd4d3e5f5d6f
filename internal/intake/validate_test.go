package intake

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// fakeStore reads nothing: no recipient has a history.
type fakeStore struct{ acc domain.Account }

func (fakeStore) LastInbounds(context.Context, string, domain.Environment, domain.Channel, []string) (map[string]time.Time, error) {
	return nil, nil
}
func (fakeStore) OpenConversations(context.Context, string, domain.Environment, []string, time.Time, time.Time) (map[string]time.Time, error) {
	return nil, nil
}
func (fakeStore) ConversationsOn(context.Context, string, domain.Environment, time.Time) (int, error) {
	return 0, nil
}
func (fakeStore) RCSCapabilities(context.Context, domain.Environment, []string, time.Time) (map[string]bool, error) {
	return nil, nil
}
func (fakeStore) OptedOut(context.Context, string, domain.Environment, []string) (map[string]bool, error) {
	return nil, nil
}
func (f fakeStore) Account(context.Context, string) (domain.Account, error) { return f.acc, nil }

// A refused request names each field by domain path and code, the front's
// own problems where the core checks that field; a send that passes is
// written through the writer it was given.
func TestSendRefusalsNameDomainPaths(t *testing.T) {
	ctx := context.Background()
	acc := memoryAccount(10 * credit)
	tx := newFakeTx()
	tx.balances[acc.ID] = acc.Balance
	w := &fakeWriter{tx: tx}
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	svc := NewService(Config{Store: fakeStore{acc}, Writer: w, Now: func() time.Time { return now }})
	t.Cleanup(svc.Close)
	who := domain.Principal{Account: acc, Kind: domain.CredentialAPIKey, CredentialID: "key_1", Env: domain.Live}

	long := 100 * time.Hour
	_, err := svc.Send(ctx, who, domain.SendRequest{
		Channel:    domain.SMS,
		Recipients: []string{"5511999990010", "x", "+5511999990010"},
		Content:    domain.Content{Media: &domain.Media{URL: "https://cdn.example.com/a.png"}},
		Schedule:   now.Add(40 * 24 * time.Hour),
		Validity:   &long,
		UDH:        []byte{0x05, 0x00},
		Problems: []domain.FieldError{
			{Field: "scheduledAt", Path: "schedule", Code: domain.FieldMalformed, Message: "front"},
			{Field: "buttons[0].x", Path: "content.buttons[0].x", Code: domain.FieldUnknown, Message: "front"},
		},
	}, SendOptions{})
	var verr *domain.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("send: %v, want a validation error", err)
	}
	var got [][2]string
	for _, f := range verr.Fields {
		got = append(got, [2]string{f.Path, f.Code})
	}
	want := [][2]string{
		{"content.buttons[0].x", domain.FieldUnknown}, // the front's, first
		{"recipients[1]", domain.FieldInvalid},
		{"recipients[2]", domain.FieldDuplicate},
		{"text", domain.FieldRequired},
		{"content.media", domain.FieldUnavailable},
		{"udh", domain.FieldInvalid},
		{"validity", domain.FieldRange},
		{"schedule", domain.FieldMalformed}, // the front's, in place of the core's check
	}
	if !slices.Equal(got, want) {
		t.Fatalf("refused fields\n got %v\nwant %v", got, want)
	}

	out, err := svc.Send(ctx, who, domain.SendRequest{Channel: domain.SMS, Recipients: []string{"5511999990010"}, Text: "hi",
		UDH: []byte{0x05, 0x00, 0x03, 0x07, 0x02, 0x01}, Origin: domain.Origin{Front: domain.FrontSMPP,
			SMPP: &domain.SMPPOrigin{User: "smu_1"}}}, SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := out.Receipt.Messages[0].Message
	if len(w.tx.messages) != 1 || m.Content.UDH != "050003070201" || m.Content.SMPP.User != "smu_1" || m.Segments != 1 ||
		out.Receipt.Campaign.KeyID != "key_1" || !m.ExpiresAt.Equal(now.Add(MaxValidity)) {
		t.Fatalf("accepted: %+v", m)
	}
}
