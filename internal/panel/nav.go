package panel

import "github.com/msgsvc/msgsvc/internal/user"

// The navigation is a list, so that a new page is one line here. Entries
// of a group share one menu (a <details> element: it opens without
// script), which keeps the operator's many pages on one row at desktop
// widths.

// navEntry is one page in the navigation.
type navEntry struct {
	// Key is the page's view.Nav.
	Key   string
	Label string
	Path  string
	// Group is the menu the entry is in ("" for the top row).
	Group string
	// Role is the least role that sees the entry (user.Operator for the
	// operators' pages).
	Role string
	// Account: the page is about one account, so it is shown only while
	// one is open and its link carries an operator's ?account=.
	Account bool
	// Reseller: shown only while the open account is a reseller.
	Reseller bool
}

// navGroups are the menus, in the order of their first entry.
var navGroups = map[string]string{"settings": "Settings", "operator": "Operator"}

// navEntries are the pages, in the order shown.
var navEntries = []navEntry{
	{Key: "overview", Label: "Overview", Path: "/", Role: user.Viewer, Account: true},
	{Key: "send", Label: "Send", Path: "/send", Role: user.Viewer, Account: true},
	{Key: "messages", Label: "Messages", Path: "/messages", Role: user.Viewer, Account: true},
	{Key: "replies", Label: "Replies", Path: "/replies", Role: user.Viewer, Account: true},
	{Key: "balance", Label: "Balance", Path: "/balance", Role: user.Viewer, Account: true},
	{Key: "prices", Label: "Prices", Path: "/prices", Role: user.Viewer, Account: true},
	{Key: "keys", Label: "API keys", Path: "/settings/keys", Group: "settings", Role: user.Viewer, Account: true},
	{Key: "twilio", Label: "Twilio", Path: "/settings/twilio", Group: "settings", Role: user.Developer, Account: true},
	{Key: "smpp", Label: "SMPP", Path: "/settings/smpp", Group: "settings", Role: user.Developer, Account: true},
	{Key: "security", Label: "Security", Path: "/settings/security", Group: "settings", Role: user.Viewer, Account: true},
	{Key: "senders", Label: "Senders", Path: "/settings/senders", Group: "settings", Role: user.Viewer, Account: true},
	{Key: "compliance", Label: "Compliance", Path: "/settings/compliance", Group: "settings", Role: user.Viewer, Account: true},
	{Key: "alerts", Label: "Alerts", Path: "/settings/alerts", Group: "settings", Role: user.Viewer, Account: true},
	{Key: "limits", Label: "Limits", Path: "/settings/limits", Group: "settings", Role: user.Viewer, Account: true},
	{Key: "users", Label: "Users", Path: "/settings/users", Group: "settings", Role: user.Owner, Account: true},
	{Key: "customers", Label: "Customers", Path: "/customers", Role: user.Admin, Account: true, Reseller: true},
	{Key: "operator", Label: "All accounts", Path: "/operator", Group: "operator", Role: user.Operator},
	{Key: "search", Label: "All messages", Path: "/messages", Group: "operator", Role: user.Operator},
	{Key: "routes", Label: "Routes", Path: "/operator/routes", Group: "operator", Role: user.Operator},
	{Key: "plans", Label: "Plans", Path: "/operator/plans", Group: "operator", Role: user.Operator},
	{Key: "ratecards", Label: "Rate cards", Path: "/operator/rate-cards", Group: "operator", Role: user.Operator},
	{Key: "margins", Label: "Margins", Path: "/operator/margins", Group: "operator", Role: user.Operator},
	{Key: "fraud", Label: "Fraud", Path: "/operator/fraud", Group: "operator", Role: user.Operator},
	{Key: "account", Label: "Your login", Path: "/account", Role: user.Viewer},
}

// navNode is what the layout draws: a link, or a menu of links.
type navNode struct {
	Label   string
	Href    string
	Current bool
	// Group is the menu's key; Items its links ("" and nil for a link).
	Group string
	Items []navNode
	// Here is the label of the menu's current page, shown beside the
	// menu's name ("" when the page is elsewhere).
	Here string
}

// Navigation is the signed-in user's navigation for this page: only the
// entries their role reaches, and those about an account only while one
// is open.
func (v *view) Navigation() []navNode {
	if v.S == nil {
		return nil
	}
	var out []navNode
	at := map[string]int{}
	for _, e := range navEntries {
		if !v.S.Actor.Can(e.Role) || e.Account && v.S.Current == nil || e.Reseller && (v.S.Current == nil || !v.S.Current.Reseller) {
			continue
		}
		href := e.Path
		if e.Account {
			href = v.S.link(e.Path)
		}
		n := navNode{Label: e.Label, Href: href, Current: e.Key == v.Nav}
		// Without an account open an operator has a handful of pages:
		// they fit on the row without menus.
		if e.Group == "" || v.S.Current == nil {
			out = append(out, n)
			continue
		}
		i, ok := at[e.Group]
		if !ok {
			i = len(out)
			at[e.Group] = i
			out = append(out, navNode{Label: navGroups[e.Group], Group: e.Group})
		}
		out[i].Items = append(out[i].Items, n)
		if n.Current {
			out[i].Current, out[i].Here = true, n.Label
		}
	}
	return out
}
