package panel

import (
	"errors"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// The operator's side of senders: the pending requests of every account,
// approved or rejected from the operator page beside the limit requests.

type pendingSender struct {
	domain.Sender
	Account domain.Account
}

func (p *Panel) pendingSenders(r *http.Request, s *session, byID map[string]domain.Account) ([]pendingSender, error) {
	list, err := p.cfg.Manage.Senders(r.Context(), s.Actor, "")
	if err != nil {
		return nil, err
	}
	out := make([]pendingSender, 0, len(list))
	for _, sd := range list {
		out = append(out, pendingSender{Sender: sd, Account: byID[sd.AccountID]})
	}
	return out, nil
}

func (p *Panel) approveSender(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	_, err := p.cfg.Manage.ApproveSender(r.Context(), s.Actor, id)
	if errors.Is(err, manage.ErrSenderTaken) {
		p.showOperator(w, r, s, http.StatusConflict, &view{Errors: map[string]string{
			id + ".id": "This value is already approved for another account on this channel: reject the request."}})
		return
	}
	if fe, ok := fieldErrors(err, nil); ok {
		p.showOperator(w, r, s, http.StatusBadRequest, &view{Errors: map[string]string{id + ".id": fe["id"] + fe[""]}})
		return
	}
	p.finish(w, r, s, err, "/operator?done=senderApproved")
}

func (p *Panel) rejectSender(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	_, err := p.cfg.Manage.RejectSender(r.Context(), s.Actor, id, r.PostForm.Get("reason"))
	p.rejected(w, r, s, id, err, "senderRejected")
}
