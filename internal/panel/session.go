package panel

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
)

// cookieName holds the session token.
const cookieName = "msgsvc_session"

// maxForm bounds a form body: the longest field (a justification) is 4000
// characters.
const maxForm = 64 << 10

// session is a signed-in request: who acts, on which account, and the
// token its forms must carry.
type session struct {
	Actor manage.Actor
	// CSRF is the form token of this session: derived from the session
	// token, which only the HttpOnly cookie holds, so another site can
	// neither read nor make it.
	CSRF string
	// Account is the account an operator chose (?account=); "" for users
	// of an account, who always work on their own.
	Account string
	// Current is the account the pages show (nil for an operator who has
	// not chosen one).
	Current *domain.Account
	token   string
}

// link adds an operator's chosen account to a panel path.
func (s *session) link(path string) string {
	if s == nil || s.Account == "" {
		return path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + "account=" + url.QueryEscape(s.Account)
}

func csrfToken(sessionToken string) string {
	sum := sha256.Sum256([]byte("msgsvc panel form\x00" + sessionToken))
	return hex.EncodeToString(sum[:16])
}

type pageHandler func(w http.ResponseWriter, r *http.Request, s *session)

// authed runs h for a signed-in user; anyone else goes to the login page,
// with a note when their session expired.
func (p *Panel) authed(h pageHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok := p.session(w, r)
		if ok {
			h(w, r, s)
		}
	}
}

func (p *Panel) session(w http.ResponseWriter, r *http.Request) (*session, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		p.toLogin(w, r, "")
		return nil, false
	}
	a, err := p.cfg.Manage.Authenticate(r.Context(), c.Value)
	switch {
	case errors.Is(err, manage.ErrTokenExpired):
		p.clearCookie(w, r)
		p.toLogin(w, r, "expired")
		return nil, false
	case errors.Is(err, manage.ErrInvalidToken):
		p.clearCookie(w, r)
		p.toLogin(w, r, "")
		return nil, false
	case err != nil:
		p.actionError(w, r, nil, err)
		return nil, false
	}
	s := &session{Actor: a, CSRF: csrfToken(c.Value), token: c.Value}
	if a.Operator() {
		s.Account = r.FormValue("account")
	}
	if !a.Operator() || s.Account != "" {
		acct, err := p.cfg.Manage.Account(r.Context(), a, s.Account)
		if err != nil {
			p.actionError(w, r, s, err)
			return nil, false
		}
		s.Current = &acct
	}
	return s, true
}

// form runs h for a signed-in user's form, once its token is checked.
func (p *Panel) form(h pageHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			p.fail(w, r, http.StatusBadRequest, "The form could not be read", "Open the page again and resend the form.")
			return
		}
		s, ok := p.session(w, r)
		if !ok {
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.CSRF)) != 1 {
			p.fail(w, r, http.StatusForbidden, "This form has expired",
				"The form did not come from this session's pages (it may be older than your last login). Open the page again and resend it.")
			return
		}
		h(w, r, s)
	}
}

// toLogin redirects to the login page, back to this page afterwards.
func (p *Panel) toLogin(w http.ResponseWriter, r *http.Request, note string) {
	q := url.Values{}
	if r.Method == http.MethodGet && r.URL.Path != "/" {
		q.Set("next", r.URL.RequestURI())
	}
	if note != "" {
		q.Set("note", note)
	}
	target := "/login"
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// secureCookies reports whether cookies must be Secure: always, unless the
// browser is on the panel's own machine over plain HTTP (a developer's
// machine, where there is no TLS). It is decided from the connection, never
// from the Host header a client chooses: a TLS connection is secure; a
// forwarded https (X-Forwarded-Proto) is believed from anyone, since it
// can only make the cookie stricter; a plain connection is secure unless
// its peer, or the client a trusted proxy forwards for, is on loopback.
func (p *Panel) secureCookies(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	proto := ""
	if v := r.Header.Values("X-Forwarded-Proto"); len(v) > 0 {
		hops := strings.Split(v[len(v)-1], ",")
		proto = strings.ToLower(strings.TrimSpace(hops[len(hops)-1]))
	}
	if proto == "https" {
		return true
	}
	client := peer(r.RemoteAddr)
	if p.trusted(client) && p.cfg.ClientAddr != nil {
		client = p.cfg.ClientAddr(r)
	}
	return !client.IsLoopback()
}

func (p *Panel) trusted(a netip.Addr) bool {
	for _, pr := range p.cfg.TrustedProxies {
		if pr.Contains(a) {
			return true
		}
	}
	return false
}

func (p *Panel) setCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: p.secureCookies(r)})
}

func (p *Panel) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: p.secureCookies(r)})
}

// loginView is what the login page shows.
type loginView struct {
	Email, Next, Error string
	Expired            bool
	TTL                string
}

func (p *Panel) loginPage(w http.ResponseWriter, r *http.Request) {
	lv := loginView{Next: safeNext(r.URL.Query().Get("next")), Expired: r.URL.Query().Get("note") == "expired",
		TTL: humanDuration(p.cfg.Manage.SessionTTL())}
	p.render(w, r, http.StatusOK, "login", &view{Title: "Log in", Data: lv})
}

// login checks the credentials. Failures count against the client
// address; an address over its budget is refused before the password is
// checked, and only that address is.
func (p *Panel) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		p.fail(w, r, http.StatusBadRequest, "The form could not be read", "Open the login page again.")
		return
	}
	lv := loginView{Email: r.PostForm.Get("email"), Next: safeNext(r.PostForm.Get("next")), TTL: humanDuration(p.cfg.Manage.SessionTTL())}
	addrKey := "ip:" + p.cfg.ClientAddr(r).String()
	if d, ok := p.throttled(r, addrKey, false); !ok {
		lv.Error = "Too many failed attempts from your address. Try again in " + retryIn(d) + "."
		p.render(w, r, http.StatusTooManyRequests, "login", &view{Title: "Log in", Data: lv})
		return
	}
	sess, err := p.cfg.Manage.LoginFrom(r.Context(), p.cfg.ClientAddr(r).String(), r.PostForm.Get("email"), r.PostForm.Get("password"))
	if t, ok := manage.IsThrottled(err); ok {
		lv.Error = "Too many attempts. Try again in " + retryIn(t.RetryAfter) + "."
		p.render(w, r, http.StatusTooManyRequests, "login", &view{Title: "Log in", Data: lv})
		return
	}
	if errors.Is(err, manage.ErrBadCredentials) {
		p.throttled(r, addrKey, true)
		lv.Error = "The email or password is wrong."
		p.render(w, r, http.StatusUnauthorized, "login", &view{Title: "Log in", Data: lv})
		return
	}
	if err != nil {
		p.actionError(w, r, nil, err)
		return
	}
	p.setCookie(w, r, sess.Token)
	next := lv.Next
	if next == "" {
		next = "/"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// throttled reads (or, with count, counts a failure in) the address's
// failure window; ok is false once it is used up. A guard that fails lets
// the request through rather than turning an outage into refusals.
func (p *Panel) throttled(r *http.Request, addrKey string, count bool) (time.Duration, bool) {
	if p.cfg.Guard == nil {
		return 0, true
	}
	var d ratelimit.Decision
	var err error
	if count {
		d, err = p.cfg.Guard.Count(r.Context(), addrKey, p.cfg.AuthFailuresPerMinute)
	} else {
		d, err = p.cfg.Guard.Exceeded(r.Context(), addrKey, p.cfg.AuthFailuresPerMinute)
	}
	if err != nil {
		p.cfg.Log.Warn("login failure window unavailable", "err", err)
		return 0, true
	}
	return d.RetryAfter, d.Allowed
}

func retryIn(d time.Duration) string {
	secs := int((d + time.Second - 1) / time.Second)
	if secs <= 1 {
		return "a second"
	}
	return strconv.Itoa(secs) + " seconds"
}

// safeNext keeps a post-login destination only if it is a path of this
// site: one leading slash, no backslash, no control character or space
// anywhere (browsers drop tabs and newlines, so "/\t/evil.example" would
// become "//evil.example"), no scheme or host. Anything else goes home.
func safeNext(next string) string {
	if len(next) > 2048 || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") ||
		strings.HasPrefix(next, "/login") {
		return ""
	}
	if strings.IndexFunc(next, func(r rune) bool { return r <= ' ' || r == 0x7f || unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0 {
		return ""
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || strings.HasPrefix(u.Path, "//") {
		return ""
	}
	return next
}

func (p *Panel) logout(w http.ResponseWriter, r *http.Request, s *session) {
	if err := p.cfg.Manage.Logout(r.Context(), s.token); err != nil && !errors.Is(err, manage.ErrInvalidToken) {
		p.actionError(w, r, s, err)
		return
	}
	p.clearCookie(w, r)
	http.Redirect(w, r, "/login?note=out", http.StatusSeeOther)
}

func (p *Panel) accountPage(w http.ResponseWriter, r *http.Request, s *session) {
	p.render(w, r, http.StatusOK, "account", &view{Title: "Your account", Nav: "account", S: s, Notice: notice(r)})
}

func (p *Panel) changePassword(w http.ResponseWriter, r *http.Request, s *session) {
	err := p.cfg.Manage.ChangePassword(r.Context(), s.Actor, r.PostForm.Get("current"), r.PostForm.Get("new"))
	if t, ok := manage.IsThrottled(err); ok {
		p.render(w, r, http.StatusTooManyRequests, "account", &view{Title: "Your account", Nav: "account", S: s,
			Errors: map[string]string{"current": "Too many attempts. Try again in " + retryIn(t.RetryAfter) + "."}})
		return
	}
	if v, ok := fieldErrors(err, map[string]string{"currentPassword": "current", "newPassword": "new"}); ok {
		p.render(w, r, http.StatusBadRequest, "account", &view{Title: "Your account", Nav: "account", S: s, Errors: v})
		return
	}
	p.finish(w, r, s, err, s.link("/account?done=password"))
}

// render executes a page into a buffer, so that a template error never
// leaves half a page behind.
func (p *Panel) render(w http.ResponseWriter, r *http.Request, status int, name string, v *view) {
	var b bytes.Buffer
	if err := p.pages[name].ExecuteTemplate(&b, "layout", v); err != nil {
		p.cfg.Log.Error("render panel page", "page", name, "err", err)
		status, b = http.StatusInternalServerError, *bytes.NewBufferString("<!doctype html><title>Error</title><p>The page could not be shown.")
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
