package panel

import (
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

// view is what every page template gets.
type view struct {
	Title string
	// Nav names the navigation entry of the page.
	Nav string
	// S is the signed-in session (nil on the login page).
	S *session
	// Notice confirms the action that led here.
	Notice string
	// Errors are form problems by input name; Form the values to show again.
	Errors map[string]string
	Form   map[string]string
	Data   any
}

// Err is the error of one input ("" when none).
func (v *view) Err(name string) string { return v.Errors[name] }

// Val is the value to show again in an input after a refused form.
func (v *view) Val(name string) string { return v.Form[name] }

// Input is the view for a shared form input whose id is id.
func (v *view) Input(id string) input { return input{ID: id, view: v} }

// input is a form input of a page: its id, and the page's view for its
// error and the value to show again.
type input struct {
	ID string
	*view
}

// Reject is the view for an operator's rejection form: the path it posts
// to, the id of what it rejects (its errors are keyed "<id>.reason") and
// the prefix of its input's id.
func (v *view) Reject(action, id, prefix string) rejectForm {
	return rejectForm{Action: action, ID: id, Prefix: prefix, view: v}
}

type rejectForm struct {
	Action, ID, Prefix string
	*view
}

// Can reports whether the signed-in user's role reaches role.
func (v *view) Can(role string) bool { return v.S != nil && v.S.Actor.Can(role) }

// Link is a panel path for the account the pages show.
func (v *view) Link(p string) string { return v.S.link(p) }

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"day": func(t time.Time) string { return t.UTC().Format("2006-01-02") },
	// short is a time in a phone's compact row (UTC, as everywhere).
	"short": func(t time.Time) string { return t.UTC().Format("Jan 2 15:04") },
	"stamp": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"num":   thousands,
	"ago":   ago,
	"credits": func(micro int64) string {
		return strconv.FormatFloat(ledger.Credits(micro), 'f', -1, 64)
	},
	"signed": func(micro int64) string {
		s := strconv.FormatFloat(ledger.Credits(micro), 'f', -1, 64)
		if micro > 0 {
			s = "+" + s
		}
		return s
	},
	"count": func(n *int) string {
		if n == nil {
			return "—"
		}
		return strconv.Itoa(*n)
	},
	"rpm": func(n int) string {
		if n == 0 {
			return "unlimited"
		}
		return strconv.Itoa(n) + "/min"
	},
	"lower": strings.ToLower,
	"list":  func(s ...string) []string { return s },
	"tuple": func(v ...any) []any { return v },
	"label": func(f string) string { return limitLabels[f] },
	"ms":    func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + " ms" },
	// The routes page: amounts of money, ratios and shares.
	"amount":   func(micro int64) string { return strconv.FormatFloat(ledger.Credits(micro), 'f', -1, 64) },
	"subtract": func(a, b int64) int64 { return a - b },
	"ratio": func(v float64, known bool) string {
		if !known {
			return "—"
		}
		return strconv.FormatFloat(v*100, 'f', 1, 64) + " %"
	},
	"share": func(n, of int64) string {
		if of == 0 {
			return "—"
		}
		return strconv.FormatFloat(float64(n)*100/float64(of), 'f', 1, 64) + " %"
	},
	"deref": func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	},
	"percent": func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " %" },
	// The fraud page: when a held message is rejected unless decided, and
	// the start of its text.
	"expires": func(t time.Time) time.Time { return t.Add(domain.HoldFor) },
	"excerpt": func(s string) string {
		if r := []rune(s); len(r) > 60 {
			return string(r[:59]) + "…"
		}
		return s
	},
	"subtractInt": func(a, b int) int { return a - b },
	// planRate shows one rate a plan's stored table names, in credits
	// ("—" when it leaves it to the default).
	"planRate": func(raw, dest, rate string) string {
		sh, err := domain.ParseSheet(raw)
		if err != nil {
			return "—"
		}
		r := sh.Home
		if dest == "abroad" {
			r = sh.Abroad
		}
		v, ok := r[rate]
		if !ok {
			return "—"
		}
		return strconv.FormatFloat(ledger.Credits(v), 'f', -1, 64)
	},
	"planCountries": func(raw string) int {
		sh, _ := domain.ParseSheet(raw)
		return len(sh.Countries)
	},
	// marginPct is a margin as a share of what was paid.
	"marginPct": func(price, cost int64) string {
		if price == 0 {
			return "—"
		}
		return strconv.FormatFloat(float64(price-cost)*100/float64(price), 'f', 1, 64) + " %"
	},
	"int64": func(n int) int64 { return int64(n) },
}

// limitLabels name the limits in the operator's approval form.
var limitLabels = map[string]string{"tierRpm": "All requests/min", "sendRpm": "Sending/min", "statusRpm": "Status/min",
	"mediaRpm": "Media/min"}

// parsePages makes one template set per page: the layout plus the page.
func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("base").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return nil, fmt.Errorf("panel template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// thousands writes a whole number with thousands separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// ago says how long ago t was, roughly.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute") + " ago"
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour") + " ago"
	}
	return plural(int(d/(24*time.Hour)), "day") + " ago"
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// humanDuration writes a session lifetime as people say it ("12 hours").
func humanDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return plural(int(d/time.Hour), "hour")
	case d%time.Minute == 0:
		return plural(int(d/time.Minute), "minute")
	}
	return d.String()
}

// notices are the confirmations a redirect after an action names (?done=).
var notices = map[string]string{
	"revoked":         "The key was revoked. Its next request is refused, on every node.",
	"allowlist":       "The IP allow-list was saved. It applies to the next request.",
	"sender":          "The sender was requested: an operator approves or rejects it.",
	"senderApproved":  "The sender was approved.",
	"senderRejected":  "The sender request was rejected; the account sees the reason.",
	"removed":         "The sender was withdrawn.",
	"requested":       "Your request was sent to the operators. Its status shows below.",
	"redeliver":       "The webhook was queued again, with the same webhook-id.",
	"approved":        "The request was approved. The account's new limits apply to its next request.",
	"rejected":        "The request was rejected; the account sees the reason.",
	"topup":           "The credits were added; the ledger line names you.",
	"password":        "Your password was changed. Your other sessions were logged out.",
	"userRemoved":     "The user was removed and logged out.",
	"optedOut":        "The number was opted out: sends to it are refused from now on.",
	"alreadyOptedOut": "The number was opted out already; its first record stays.",
	"optedIn":         "The number was opted back in: sends to it are accepted again.",
	"compliance":      "The compliance settings were saved.",
	"alerts":          "The account webhook and the alerts were saved. They apply to the next send.",
	"smppRemoved":     "The SMPP user was removed and its binds closed.",
	"customerCreated": "The customer was created with a zero balance. Top it up below; then it can have users and keys of its own.",
	"prices":          "The customer's prices were saved. They apply to its next send.",
	"billing":         "The customer's billing was saved. It applies to its messages from now on.",
	"transferIn":      "The credits were moved to the customer. Both ledgers show the transfer.",
	"transferBack":    "The credits were taken back from the customer. Both ledgers show the transfer.",
	"suspended":       "The customer was suspended, with every account below it. Its queued and scheduled messages are held, not lost.",
	"resumed":         "The customer was resumed. Its held messages go out now.",
	"twilioRemoved":   "The Twilio credential was removed (an account SID with its API keys). Its next request is refused, on every node.",
	"heldReleased":    "The message was released: it goes out now, charged as usual.",
	"heldRejected":    "The message was rejected: it failed with FRAUD_SUSPECTED and was refunded in full.",
}

// shownEnv is the environment a page shows: live unless ?environment=test.
func shownEnv(r *http.Request) domain.Environment {
	if r.URL.Query().Get("environment") == "test" {
		return domain.Test
	}
	return domain.Live
}

func notice(r *http.Request) string {
	if n := notices[r.URL.Query().Get("done")]; n != "" {
		return n
	}
	return consoleNotice(r)
}

// fieldErrors maps a validation error's fields to the form's input names
// (fields not in names keep their own); ok is false for other errors.
func fieldErrors(err error, names map[string]string) (map[string]string, bool) {
	v, ok := domain.IsValidation(err)
	if !ok {
		return nil, false
	}
	out := map[string]string{}
	for _, f := range v.Fields {
		name := f.Field
		if n, ok := names[name]; ok {
			name = n
		}
		if _, dup := out[name]; !dup {
			out[name] = f.Message
		}
	}
	if len(out) == 0 {
		out[""] = v.Error()
	}
	return out, true
}

// keyRow is an API key as the keys page lists it.
type keyRow struct {
	domain.APIKey
	Old bool // active and older than manage.KeyAgeWarning
}
