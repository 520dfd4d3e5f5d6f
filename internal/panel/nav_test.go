package panel

import (
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// flat writes a navigation as "Label" and "Group[Label Label]", with the
// current entry starred.
func flat(nodes []navNode) string {
	var out []string
	for _, n := range nodes {
		s := n.Label
		if n.Current {
			s += "*"
		}
		if n.Group != "" {
			var items []string
			for _, it := range n.Items {
				item := it.Label
				if it.Current {
					item += "*"
				}
				items = append(items, item)
			}
			s += "[" + strings.Join(items, " ") + "]"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// The navigation shows what the role reaches, groups the settings and the
// operators' pages into menus, marks the page (and its menu), and keeps an
// operator's chosen account in every account page's link.
func TestNavigation(t *testing.T) {
	acct := &domain.Account{ID: "acc_1", Name: "Acme"}
	for _, c := range []struct {
		name, role, account, nav string
		current                  *domain.Account
		want                     string
	}{
		{"a viewer", "viewer", "", "replies", acct,
			"Overview Send Messages Replies* Balance Prices Settings[API keys Security Senders Compliance Alerts Limits] Your login"},
		{"a developer", "developer", "", "smpp", acct,
			"Overview Send Messages Replies Balance Prices Settings*[API keys Twilio SMPP* Security Senders Compliance Alerts Limits] Your login"},
		{"an owner", "owner", "", "overview", acct,
			"Overview* Send Messages Replies Balance Prices Settings[API keys Twilio SMPP Security Senders Compliance Alerts Limits Users] Your login"},
		{"an operator without an account", "operator", "", "operator", nil, "All accounts* All messages Routes Plans Rate cards Margins Fraud Your login"},
		{"an operator in an account", "operator", "acc_1", "routes", acct,
			"Overview Send Messages Replies Balance Prices Settings[API keys Twilio SMPP Security Senders Compliance Alerts Limits Users] Operator*[All accounts All messages Routes* Plans Rate cards Margins Fraud] Your login"},
	} {
		v := &view{Nav: c.nav, S: &session{Actor: manage.Actor{Role: c.role}, Account: c.account, Current: c.current}}
		nodes := v.Navigation()
		if got := flat(nodes); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
		for _, n := range nodes {
			for _, it := range append([]navNode{n}, n.Items...) {
				if it.Href == "" {
					continue
				}
				linked := strings.Contains(it.Href, "account=acc_1")
				if want := c.account != "" && n.Group != "operator" && !strings.HasPrefix(it.Href, "/operator") && it.Href != "/account"; linked != want {
					t.Errorf("%s: link %s carries the account: %v", c.name, it.Href, linked)
				}
			}
		}
	}
	if (&view{}).Navigation() != nil {
		t.Error("a page without a session has a navigation")
	}
}
