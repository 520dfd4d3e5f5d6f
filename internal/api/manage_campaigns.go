package api

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/api/view"
	"github.com/msgsvc/msgsvc/internal/campaign"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/sending"
)

// Sending is the panel's sending, also served as the management API: the
// send form, campaigns from a file, their progress and cancel.
type Sending interface {
	SendMessage(ctx context.Context, a manage.Actor, accountID string, in sending.NewMessage) (intake.Outcome, error)
	SendFileCampaign(ctx context.Context, a manage.Actor, accountID string, in sending.NewFileCampaign) (intake.FileOutcome, error)
	Campaign(ctx context.Context, a manage.Actor, accountID, campaignID, cursor string, limit int) (sending.CampaignView, error)
	CancelCampaign(ctx context.Context, a manage.Actor, accountID, campaignID string) ([]domain.Message, error)
}

func (s *Server) manageCampaignRoutes(base string) {
	s.managed("POST "+base+"/campaigns", s.uploadCampaign)
	s.managed("GET "+base+"/campaigns/{id}", s.manageCampaign)
	s.managed("POST "+base+"/campaigns/{id}/cancel", s.manageCancelCampaign)
	s.managed("POST "+base+"/messages", s.manageSend)
}

var errCampaignNotMultipart = problem("UNSUPPORTED_MEDIA_TYPE",
	`Send the campaign as multipart/form-data: the CSV in the field "file", the template in "text".`)

// uploadCampaign streams a campaign's CSV to disk as it arrives and sends
// it (or, with dryRun, prices it). It keeps the Idempotency-Key promise
// itself, the file's SHA-256 and the fields standing for the body.
func (s *Server) uploadCampaign(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	if s.cfg.Sending == nil {
		return errNotFound
	}
	idem, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return errCampaignNotMultipart
	}
	if r.ContentLength > campaign.MaxUpload {
		return campaignTooLarge(campaign.ErrTooLarge)
	}
	campaign.Extend(w)
	body := http.MaxBytesReader(w, r.Body, campaign.MaxUpload)
	up, err := campaign.ReadUpload(r.Context(), multipart.NewReader(body, params["boundary"]), "")
	if err != nil {
		return campaignTooLarge(err)
	}
	defer up.Close()
	in, err := fileCampaignForm(up, r.URL.Query().Get("dryRun"))
	if err != nil {
		return err
	}
	in.IdempotencyKey = idem
	out, err := s.cfg.Sending.SendFileCampaign(r.Context(), a, acct(r), in)
	if err != nil {
		return err
	}
	if out.Replay != nil {
		w.Header().Set("Idempotent-Replayed", "true")
		writeRaw(w, out.Replay.StatusCode, out.Replay.Response)
		return nil
	}
	status := http.StatusAccepted
	if out.Receipt.DryRun {
		status = http.StatusOK
	}
	writeJSON(w, status, sending.ReceiptOf(out.Receipt))
	return nil
}

// fileCampaignForm reads the form's fields; dryRun may also be a query
// parameter.
func fileCampaignForm(up *campaign.Upload, queryDry string) (sending.NewFileCampaign, error) {
	f := up.Fields
	for name := range f {
		switch name {
		case "text", "type", "from", "environment", "scheduledAt", "dryRun", "account":
		default:
			return sending.NewFileCampaign{}, fieldError(name, "is not a field of a campaign upload (file, text, type, from, environment, scheduledAt, dryRun)")
		}
	}
	in := sending.NewFileCampaign{File: up.File, Text: f["text"], Type: f["type"], From: f["from"], Environment: f["environment"],
		ScheduledAt: f["scheduledAt"]}
	for _, v := range []string{f["dryRun"], queryDry} {
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return in, fieldError("dryRun", "must be true or false")
		}
		in.DryRun = in.DryRun || b
	}
	return in, nil
}

// campaignTooLarge names an upload's limits as problems.
func campaignTooLarge(err error) error {
	switch {
	case errors.Is(err, campaign.ErrTooManyRows):
		return problem("PAYLOAD_TOO_LARGE", fmt.Sprintf("The file names more than %d recipients; split it into several campaigns.", campaign.MaxRows))
	case errors.Is(err, campaign.ErrTooLarge):
		detail := fmt.Sprintf("The upload is larger than %d MB.", campaign.MaxBytes>>20)
		if msg := err.Error(); strings.Contains(msg, "field") {
			detail = "The " + strings.TrimPrefix(msg, campaign.ErrTooLarge.Error()+": ") + "."
		}
		return problem("PAYLOAD_TOO_LARGE", detail)
	}
	return err
}

func (s *Server) manageCampaign(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	if s.cfg.Sending == nil {
		return errNotFound
	}
	limit, err := limitParam(r.URL.Query())
	if err != nil {
		return fieldError("limit", "must be a whole number from 1 to 1000")
	}
	after := ""
	if cur := r.URL.Query().Get("cursor"); cur != "" {
		b, err := base64.RawURLEncoding.DecodeString(cur)
		if err != nil || !strings.HasPrefix(string(b), "msg_") {
			return fieldError("cursor", "is not a cursor this API returned")
		}
		after = string(b)
	}
	p, err := s.cfg.Sending.Campaign(r.Context(), a, acct(r), r.PathValue("id"), after, limit)
	if err != nil {
		return err
	}
	v := struct {
		view.Campaign
		Environment domain.Environment `json:"environment"`
	}{Campaign: view.Campaign{CampaignID: p.Campaign.ID, Status: p.Status, Type: p.Campaign.Type, CreatedAt: view.Time(p.Campaign.CreatedAt),
		Total: p.Campaign.Total, Counts: p.Counts, Messages: view.Messages(p.Messages)}, Environment: p.Campaign.Env}
	if p.Next != "" {
		enc := base64.RawURLEncoding.EncodeToString([]byte(p.Next))
		v.NextCursor = &enc
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) manageCancelCampaign(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	if s.cfg.Sending == nil {
		return errNotFound
	}
	ms, err := s.cfg.Sending.CancelCampaign(r.Context(), a, acct(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view.CampaignCancel{CampaignID: r.PathValue("id"), Canceled: len(ms), Messages: view.Messages(ms)})
	return nil
}

// manageSend is the panel's send form as JSON.
func (s *Server) manageSend(w http.ResponseWriter, r *http.Request, a manage.Actor) error {
	if s.cfg.Sending == nil {
		return errNotFound
	}
	var req struct {
		To          string `json:"to"`
		Type        string `json:"type"`
		From        string `json:"from"`
		Message     string `json:"message"`
		Environment string `json:"environment"`
		ScheduledAt string `json:"scheduledAt"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	out, err := s.cfg.Sending.SendMessage(r.Context(), a, acct(r), sending.NewMessage{To: req.To, Type: req.Type, From: req.From,
		Text: req.Message, Environment: req.Environment, ScheduledAt: req.ScheduledAt})
	if err != nil {
		return renameText(err)
	}
	writeJSON(w, http.StatusAccepted, view.OfReceipt(out.Receipt))
	return nil
}

// renameText names the text "message", as the JSON body does.
func renameText(err error) error {
	v, ok := domain.IsValidation(err)
	if !ok {
		return err
	}
	for i := range v.Fields {
		if v.Fields[i].Field == "text" {
			v.Fields[i].Field = "message"
		}
	}
	return v
}
