// Package panel serves the web panel (docs/panel.md): server-rendered
// pages (html/template, embedded static files, no JavaScript build step) over
// the same actions as the management API, in internal/manage. Every page
// works without JavaScript; one small script adds copy buttons.
//
// Security: sessions live in an HttpOnly, SameSite=Lax cookie (Secure unless
// the panel is reached on a loopback address); every state-changing form is
// checked twice against cross-site forgery (the browser's Fetch metadata via
// http.CrossOriginProtection, and a token derived from the session that
// only the panel's own pages carry); pages carry a Content Security Policy
// without inline script, frame denial and no-referrer.
package panel

import (
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
	"github.com/msgsvc/msgsvc/internal/sending"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config wires a Panel.
type Config struct {
	Manage *manage.Service
	// Sending is the send form and campaigns from a file.
	Sending *sending.Service
	// Guard counts failed logins per client address (the budget failed API
	// keys use too); nil throttles nothing.
	Guard ratelimit.Failures
	// AuthFailuresPerMinute is the budget of failures per address (default 30).
	AuthFailuresPerMinute int
	// ClientAddr is the client's address as the API sees it (trusted
	// proxies applied).
	ClientAddr func(r *http.Request) netip.Addr
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// client: a cookie is Secure unless that client is on loopback.
	TrustedProxies []netip.Prefix
	Now            func() time.Time
	Log            *slog.Logger
}

// Panel is the web panel's handler.
type Panel struct {
	cfg      Config
	mux      *http.ServeMux
	handler  http.Handler
	pages    map[string]*template.Template
	patterns []string
}

// New builds the panel.
func New(cfg Config) (*Panel, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.AuthFailuresPerMinute <= 0 {
		cfg.AuthFailuresPerMinute = 30
	}
	if cfg.ClientAddr == nil {
		cfg.ClientAddr = func(r *http.Request) netip.Addr { return peer(r.RemoteAddr) }
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	p := &Panel{cfg: cfg, mux: http.NewServeMux(), pages: pages}
	p.routes()
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.fail(w, r, http.StatusForbidden, "This form was sent from another site",
			"The panel only accepts forms from its own pages. Open the page again and resend the form.")
	}))
	p.handler = cop.Handler(p.mux)
	return p, nil
}

// Patterns are the routes the panel serves (for the API's router).
func (p *Panel) Patterns() []string { return append([]string(nil), p.patterns...) }

// ServeHTTP implements http.Handler with the panel's security headers.
func (p *Panel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.secure(w)
	p.handler.ServeHTTP(w, r)
}

// NotFound answers a browser that asked for a page nobody serves with an
// HTML page, rather than the API's problem+json.
func (p *Panel) NotFound(w http.ResponseWriter, r *http.Request) {
	p.secure(w)
	p.fail(w, r, http.StatusNotFound, "Page not found",
		"There is no page at this address. The panel's pages are in its menu; the API is described at /docs.")
}

func (p *Panel) secure(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

func (p *Panel) handle(pattern string, h http.HandlerFunc) {
	p.patterns = append(p.patterns, pattern)
	p.mux.Handle(pattern, h)
}

func (p *Panel) routes() {
	p.handle("GET /{$}", p.authed(p.home))
	p.handle("GET /login", p.loginPage)
	p.handle("POST /login", p.login)
	p.handle("POST /logout", p.form(p.logout))
	p.handle("GET /account", p.authed(p.accountPage))
	p.handle("POST /account/password", p.form(p.changePassword))

	p.handle("GET /settings/keys", p.authed(p.keysPage))
	p.handle("POST /settings/keys", p.form(p.createKey))
	p.handle("POST /settings/keys/{id}/revoke", p.form(p.revokeKey))
	p.handle("GET /settings/smpp", p.authed(p.smppPage))
	p.handle("POST /settings/smpp", p.form(p.createSMPPUser))
	p.handle("POST /settings/smpp/{id}/remove", p.form(p.removeSMPPUser))
	p.handle("GET /settings/twilio", p.authed(p.twilioPage))
	p.handle("POST /settings/twilio", p.form(p.createTwilioCredential))
	p.handle("POST /settings/twilio/{sid}/remove", p.form(p.removeTwilioCredential))
	p.handle("GET /settings/security", p.authed(p.securityPage))
	p.handle("POST /settings/security/allowlist", p.form(p.setAllowlist))
	p.handle("POST /settings/security/secret/reveal", p.form(p.revealSecret))
	p.handle("POST /settings/security/secret/rotate", p.form(p.rotateSecret))
	p.handle("GET /settings/senders", p.authed(p.sendersPage))
	p.handle("POST /settings/senders", p.form(p.addSender))
	p.handle("POST /settings/senders/{id}/remove", p.form(p.removeSender))
	p.handle("GET /settings/compliance", p.authed(p.compliancePage))
	p.handle("POST /settings/compliance", p.form(p.setCompliance))
	p.handle("POST /settings/compliance/opt-outs", p.form(p.addOptOut))
	p.handle("POST /settings/compliance/opt-outs/{phone}/remove", p.form(p.removeOptOut))
	p.handle("GET /settings/alerts", p.authed(p.alertsPage))
	p.handle("POST /settings/alerts", p.form(p.setAlerts))
	p.handle("POST /settings/alerts/events/{id}/redeliver", p.form(p.redeliverAlert))
	p.handle("GET /settings/limits", p.authed(p.limitsPage))
	p.handle("POST /settings/limits", p.form(p.requestLimits))

	p.handle("GET /settings/users", p.authed(p.usersPage))
	p.handle("POST /settings/users", p.form(p.addUser))
	p.handle("POST /settings/users/{id}/remove", p.form(p.removeUser))

	p.handle("GET /messages", p.authed(p.messagesPage))
	p.handle("GET /messages/{id}", p.authed(p.messagePage))
	p.handle("POST /messages/{id}/redeliver", p.form(p.redeliver))
	p.handle("GET /replies", p.authed(p.repliesPage))
	p.handle("GET /balance", p.authed(p.balancePage))
	p.handle("GET /statements", p.authed(p.statementsIndex))
	p.handle("GET /statements/{month}", p.authed(p.statementPage))

	p.handle("GET /customers", p.authed(p.customersPage))
	p.handle("POST /customers", p.form(p.createCustomer))
	p.handle("GET /customers/{id}", p.authed(p.customerPage))
	p.handle("POST /customers/{id}/prices", p.form(p.setCustomerPrices))
	p.handle("POST /customers/{id}/billing", p.form(p.setCustomerBilling))
	p.handle("POST /customers/{id}/transfers", p.form(p.transferCustomer))
	p.handle("POST /customers/{id}/suspend", p.form(p.suspendCustomer))
	p.handle("POST /customers/{id}/resume", p.form(p.resumeCustomer))

	p.handle("GET /operator", p.authed(p.operatorPage))
	p.handle("POST /operator/requests/{id}/approve", p.form(p.approve))
	p.handle("POST /operator/requests/{id}/reject", p.form(p.reject))
	p.handle("POST /operator/topups", p.form(p.topUp))
	p.handle("POST /operator/senders/{id}/approve", p.form(p.approveSender))
	p.handle("POST /operator/senders/{id}/reject", p.form(p.rejectSender))
	p.handle("GET /operator/routes", p.authed(p.routesPage))
	p.handle("GET /operator/fraud", p.authed(p.fraudPage))
	p.handle("POST /operator/fraud/held/{id}/release", p.form(p.releaseHeld))
	p.handle("POST /operator/fraud/held/{id}/reject", p.form(p.rejectHeld))
	p.consoleRoutes()
	p.campaignRoutes()

	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	p.handle("GET /static/{file}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

// fail renders an error page.
func (p *Panel) fail(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	p.render(w, r, status, "error", &view{Title: title, Data: detail})
}

// finish ends an action once its field refusals are shown: another error
// is the action's; success goes back to the page at to, which says what
// was done.
func (p *Panel) finish(w http.ResponseWriter, r *http.Request, s *session, err error, to string) {
	if p.failed(w, r, s, err) {
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// actionError renders what a refused action means for the user: a clear
// page for a forbidden action or a missing thing, a generic one otherwise.
func (p *Panel) actionError(w http.ResponseWriter, r *http.Request, s *session, err error) {
	switch {
	case errors.Is(err, manage.ErrForbidden):
		p.render(w, r, http.StatusForbidden, "error", &view{Title: "Not allowed", S: s, Data: forbidden(s.Actor.Role, r.URL.Path)})
	case errors.Is(err, manage.ErrSuspended):
		p.render(w, r, http.StatusForbidden, "error", &view{Title: "Account suspended", S: s,
			Data: "This account is suspended by its reseller or the service's operators: nothing can be done in it until it is resumed. Its queued and scheduled messages are held, not lost."})
	case errors.Is(err, manage.ErrNotFound):
		p.render(w, r, http.StatusNotFound, "error", &view{Title: "Not found", S: s,
			Data: "There is no such thing in this account. It may have been removed or revoked already."})
	default:
		p.cfg.Log.Error("panel action failed", "path", r.URL.Path, "err", err)
		p.render(w, r, http.StatusInternalServerError, "error", &view{Title: "Something went wrong", S: s,
			Data: "The action could not be completed. Try again; if it keeps failing, the server's log says why."})
	}
}

// failed answers err as actionError does and reports whether there was
// one, so that a page stops at the first read that failed.
func (p *Panel) failed(w http.ResponseWriter, r *http.Request, s *session, err error) bool {
	if err == nil {
		return false
	}
	p.actionError(w, r, s, err)
	return true
}

// forbidden says who can do what a role may not: the operator pages
// belong to the service's staff, whom no account role reaches, and an
// owner already holds every role of an account.
func forbidden(role, path string) string {
	if path == "/customers" || strings.HasPrefix(path, "/customers/") {
		if role == "owner" || role == "admin" {
			return "Customers are for resellers: this account is not one. The service's operators make an account a reseller."
		}
		return "Your role (" + role + ") does not allow this: the customers of a reseller are managed by its owners and admins."
	}
	if role == "owner" || path == "/operator" || strings.HasPrefix(path, "/operator/") {
		return "This is for the service's operators, the staff who run msgsvc (msgsvc user create --operator); " +
			"no role of an account, owner included, can open it."
	}
	return "Your role (" + role + ") does not allow this. Ask an owner or admin of the account."
}

func peer(remote string) netip.Addr {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}
