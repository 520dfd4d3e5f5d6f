package twilio

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/twilio/sid"
	"github.com/msgsvc/msgsvc/internal/twilio/vocab"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

func (h *Handler) account(w http.ResponseWriter, r *http.Request, c caller) error {
	a, err := h.cfg.Accounts.Account(r.Context(), c.account.ID)
	if err != nil {
		return err
	}
	base := accountURI(c.accountSid)
	typ := "Full"
	if c.env == domain.Test {
		typ = "Trial"
	}
	writeJSON(w, http.StatusOK, accountResource{
		// The token is never shown again: it was shown once, when made.
		DateCreated:     date(a.CreatedAt),
		DateUpdated:     date(a.CreatedAt),
		FriendlyName:    a.Name,
		OwnerAccountSid: c.accountSid,
		Sid:             c.accountSid,
		Status:          "active",
		Type:            typ,
		URI:             base + ".json",
		SubresourceURIs: map[string]string{
			"balance":                base + "/Balance.json",
			"messages":               base + "/Messages.json",
			"incoming_phone_numbers": base + "/IncomingPhoneNumbers.json",
		},
	})
	return nil
}

// balance reads the account afresh: the cached one does not follow sends.
func (h *Handler) balance(w http.ResponseWriter, r *http.Request, c caller) error {
	a, err := h.cfg.Accounts.Account(r.Context(), c.account.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, balanceResource{AccountSid: c.accountSid, Balance: decimal(a.Balance), Currency: a.Currency})
	return nil
}

// number is one of the account's approved SMS numbers with what this
// front keeps of it.
type number struct {
	phone string // the approved sender's value: digits, country code first
	set   domain.TwilioNumber
}

// numbers lists the account's approved SMS senders that are numbers, as
// the account is now, with their SmsUrl.
func (h *Handler) numbers(r *http.Request, c caller) ([]number, error) {
	a, err := h.cfg.Accounts.Account(r.Context(), c.account.ID)
	if err != nil {
		return nil, err
	}
	set, err := h.cfg.Numbers.TwilioNumbers(r.Context(), a.ID)
	if err != nil {
		return nil, err
	}
	byPhone := map[string]domain.TwilioNumber{}
	for _, n := range set {
		byPhone[strings.TrimPrefix(n.Phone, "+")] = n
	}
	var out []number
	for _, v := range a.Senders[domain.SMS].Values {
		if v == "" || strings.Trim(v, "0123456789") != "" {
			continue // a sender ID is not a phone number
		}
		out = append(out, number{phone: v, set: byPhone[v]})
	}
	slices.SortFunc(out, func(x, y number) int { return strings.Compare(x.phone, y.phone) })
	return out, nil
}

func (h *Handler) ofNumber(c caller, n number) numberResource {
	pn := sid.ForNumber(c.account.ID, n.phone)
	method := n.set.SmsMethod
	if method == "" {
		method = http.MethodPost
	}
	out := numberResource{
		AccountSid:   c.accountSid,
		APIVersion:   vocab.APIVersion,
		Capabilities: capabilities{SMS: true},
		DateCreated:  date(n.set.UpdatedAt),
		DateUpdated:  date(n.set.UpdatedAt),
		FriendlyName: "+" + n.phone,
		PhoneNumber:  "+" + n.phone,
		Sid:          pn,
		SmsMethod:    method,
		Status:       "in-use",
		URI:          accountURI(c.accountSid) + "/IncomingPhoneNumbers/" + pn + ".json",
	}
	if n.set.SmsURL != "" {
		u := n.set.SmsURL
		out.SmsURL = &u
	}
	return out
}

func (h *Handler) listNumbers(w http.ResponseWriter, r *http.Request, c caller) error {
	q := r.URL.Query()
	lq, err := h.readListQuery(url.Values{"PageSize": q["PageSize"], "Page": q["Page"]})
	if err != nil {
		return err
	}
	ns, err := h.numbers(r, c)
	if err != nil {
		return err
	}
	if want := q.Get("PhoneNumber"); want != "" {
		ns = slices.DeleteFunc(ns, func(n number) bool { return n.phone != senderOf(want) })
	}
	start := min(lq.page*lq.pageSize, len(ns))
	end := min(start+lq.pageSize, len(ns))
	out := numberPage{IncomingPhoneNumbers: make([]numberResource, 0, end-start)}
	for _, n := range ns[start:end] {
		out.IncomingPhoneNumbers = append(out.IncomingPhoneNumbers, h.ofNumber(c, n))
	}
	path := accountURI(c.accountSid) + "/IncomingPhoneNumbers.json"
	out.page = pageOf(path, q, lq.page, lq.pageSize, end-start)
	if end < len(ns) {
		next := pageURI(path, q, lq.page+1, lq.pageSize, "")
		out.NextPageURI = &next
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// findNumber is the caller's number with a PN SID; another account's SID
// is not found (the SID is derived from the account and the number).
func (h *Handler) findNumber(r *http.Request, c caller, pn string) (number, error) {
	if !sid.Valid(sid.Number, pn) {
		return number{}, errNotFound
	}
	ns, err := h.numbers(r, c)
	if err != nil {
		return number{}, err
	}
	for _, n := range ns {
		if strings.EqualFold(sid.ForNumber(c.account.ID, n.phone), pn) {
			return n, nil
		}
	}
	return number{}, errNotFound
}

func (h *Handler) fetchNumber(w http.ResponseWriter, r *http.Request, c caller, pn string) error {
	n, err := h.findNumber(r, c, pn)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, h.ofNumber(c, n))
	return nil
}

// updateNumber sets where replies to the number are posted (SmsUrl,
// SmsMethod); the other parameters are Twilio's voice and routing
// settings, which msgsvc does not have, and are ignored.
func (h *Handler) updateNumber(w http.ResponseWriter, r *http.Request, c caller, pn string) error {
	form, err := readForm(w, r)
	if err != nil {
		return err
	}
	n, err := h.findNumber(r, c, pn)
	if err != nil {
		return err
	}
	next := n.set
	next.AccountID, next.Phone = c.account.ID, n.phone
	if next.SmsMethod == "" {
		next.SmsMethod = http.MethodPost
	}
	if v, ok := form["SmsUrl"]; ok {
		u := strings.TrimSpace(v[0])
		if u != "" {
			if err := webhook.ValidateCallbackURL(u, h.cfg.AllowPrivate); err != nil {
				return badRequest(codeInvalidURL, "SmsUrl %s is not a valid URL: %v", u, err)
			}
		}
		next.SmsURL = u
	}
	if v := form.Get("SmsMethod"); v != "" {
		m := strings.ToUpper(v)
		if m != http.MethodPost && m != http.MethodGet {
			return badRequest(codeInvalidParameter, "SmsMethod must be GET or POST.")
		}
		next.SmsMethod = m
	}
	next.UpdatedAt = h.cfg.Now().UTC()
	if err := h.cfg.Numbers.SetTwilioNumber(r.Context(), next); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, h.ofNumber(c, number{phone: n.phone, set: next}))
	return nil
}
