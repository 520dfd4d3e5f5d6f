package panel

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

func TestUsageChart(t *testing.T) {
	since := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	usage := []domain.UsageDay{
		{Day: since, Channel: domain.SMS, Messages: 3, Charged: 3_000_000},
		{Day: since, Channel: domain.RCS, Messages: 2},
		{Day: since.AddDate(0, 0, 9), Channel: domain.WhatsApp, Messages: 7},
		{Day: since.AddDate(0, 0, 40), Channel: domain.SMS, Messages: 99}, // outside the window
	}
	c := usageChart(usage, since, 30)
	if c.Summary != "12 messages in the last 30 days" || len(c.Bars) != 3 || len(c.Rows) != 2 || c.Rows[0].Cells[1] != "7" {
		t.Fatalf("chart: %q, %d bars, rows %+v", c.Summary, len(c.Bars), c.Rows)
	}
	sms, rcs := c.Bars[0], c.Bars[1]
	if sms.Class != "sms" || rcs.Class != "rcs" || rcs.Y+rcs.H != sms.Y || sms.Y+sms.H != padTop+plotH {
		t.Fatalf("bars do not stack from the axis: %+v %+v", sms, rcs)
	}
	if top := c.Grid[len(c.Grid)-1]; top.Label != "8" || top.Y != padTop {
		t.Fatalf("scale top %+v, want 8 at the top", top)
	}
	if c.Legend[1].Name != "WhatsApp" || c.Legend[1].Total != "7" {
		t.Fatalf("legend: %+v", c.Legend)
	}
	if empty := usageChart(nil, since, 30); !empty.Empty || len(empty.Bars) != 0 || empty.Grid[2].Label != "4" {
		t.Fatalf("an empty chart: %+v", empty)
	}
	credits := creditsChart("c", usage, since, 30)
	if len(credits.Bars) != 1 || credits.Bars[0].Title != "Nov 1: 3 credits" || credits.Summary != "3 credits charged in the last 30 days" {
		t.Fatalf("credits chart: %+v %q", credits.Bars, credits.Summary)
	}
}

// A chart's geometry: stacked bars sit on the zero line, a negative bar
// hangs below it, a line passes through the middle of each slot, and the
// axis holds the highest stack and the lowest value.
func TestDrawChart(t *testing.T) {
	c := drawChart(chartSpec{ID: "x", Title: "T", Slots: []string{"a", "b", "c", "d"}, Series: []chartInput{
		{Name: "up", Class: "u", Values: []float64{1, 3, 0, -2}},
		{Name: "more", Class: "m", Values: []float64{1}},
		{Name: "line", Class: "l", Values: []float64{0, 4, 2, 1}, Line: true},
	}})
	labels := []string{}
	zero := -1.0
	for _, g := range c.Grid {
		labels = append(labels, g.Label)
		if g.Zero {
			zero = g.Y
		}
	}
	if strings.Join(labels, " ") != "-2 -1 0 2 4" {
		t.Fatalf("axis %v, want -2 to 4", labels)
	}
	if c.Grid[0].Y != padTop+plotH || c.Grid[len(c.Grid)-1].Y != padTop {
		t.Fatalf("the axis does not span the plot: %+v", c.Grid)
	}
	if len(c.Bars) != 4 {
		t.Fatalf("bars: %+v", c.Bars)
	}
	a1, a2, neg := c.Bars[0], c.Bars[1], c.Bars[3]
	if a1.Y+a1.H != zero || a2.Y+a2.H != a1.Y || a1.H != a2.H {
		t.Fatalf("the first slot does not stack on zero: %+v %+v (zero at %v)", a1, a2, zero)
	}
	if neg.Y != zero || neg.Y+neg.H != padTop+plotH || neg.Title != "d: -2 up" {
		t.Fatalf("the negative bar: %+v", neg)
	}
	if len(c.Dots) != 4 || c.Dots[1].Y != padTop || c.Dots[0].Y != zero || c.Dots[0].X != round1(padLeft+(chartW-padLeft-padRight)/8) {
		t.Fatalf("the line's points: %+v", c.Dots)
	}
	if len(c.Lines) != 1 || strings.Count(c.Lines[0].Points, ",") != 4 {
		t.Fatalf("the line: %+v", c.Lines)
	}
	if len(c.Rows) != 4 || c.Rows[0].Label != "d" || strings.Join(c.Rows[0].Cells, " ") != "-2 0 1" {
		t.Fatalf("the table: %+v", c.Rows)
	}
	if c.Legend[0].Total != "2" || !c.Legend[2].Line || c.Empty {
		t.Fatalf("legend %+v, empty %v", c.Legend, c.Empty)
	}
	if got := scaleOf(0.05, false); got != 0.06 {
		t.Errorf("scaleOf(0.05) = %v", got)
	}
	if got := scaleOf(3, true); got != 4 {
		t.Errorf("scaleOf(3, whole) = %v", got)
	}
}

func TestNiceCeil(t *testing.T) {
	for n, want := range map[int]int{1: 2, 3: 4, 4: 4, 5: 6, 7: 8, 9: 10, 11: 20, 130: 200, 999: 1000} {
		if got := niceCeil(n); got != want {
			t.Errorf("niceCeil(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestSafeNext(t *testing.T) {
	for next, want := range map[string]string{"/messages?to=1": "/messages?to=1", "//evil.example/": "", "/\\evil.example": "",
		"https://evil.example/": "", "/login?next=/x": "", "": "", "/\t/evil.example": "", "/\n/evil.example": "",
		"/\r\n/evil.example": "", "/ /evil.example": "", "/\x00/evil": "", "/\u0085/evil": "", "/a\\b": "", "evil.example": "",
		"/%09/evil.example": "/%09/evil.example", "/settings/keys?account=acc_1": "/settings/keys?account=acc_1"} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}

// The Secure flag follows the connection, not the Host header: a client
// that says Host: localhost from elsewhere still gets a Secure cookie.
func TestSecureCookies(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	p := &Panel{cfg: Config{TrustedProxies: proxies, ClientAddr: func(r *http.Request) netip.Addr {
		if a, err := netip.ParseAddr(r.Header.Get("X-Forwarded-For")); err == nil {
			return a
		}
		return peer(r.RemoteAddr)
	}}}
	for _, c := range []struct {
		name, remote, host, proto, forFor string
		tls, want                         bool
	}{
		{"loopback, plain", "127.0.0.1:5000", "127.0.0.1:8080", "", "", false, false},
		{"loopback v6, plain", "[::1]:5000", "[::1]:8080", "", "", false, false},
		{"Host localhost from elsewhere", "203.0.113.7:5000", "localhost:8080", "", "", false, true},
		{"Host app.localhost from elsewhere", "203.0.113.7:5000", "app.localhost", "", "", false, true},
		{"plain from the network", "203.0.113.7:5000", "panel.example.com", "", "", false, true},
		{"TLS on loopback", "127.0.0.1:5000", "localhost", "", "", true, true},
		{"a local proxy forwarding https", "127.0.0.1:5000", "localhost:8080", "https", "", false, true},
		{"trusted proxy, https", "10.0.0.2:5000", "panel.example.com", "https", "203.0.113.7", false, true},
		{"trusted proxy, http for a remote client", "10.0.0.2:5000", "localhost", "http", "203.0.113.7", false, true},
		{"trusted proxy, http for a loopback client", "10.0.0.2:5000", "panel.example.com", "http", "127.0.0.1", false, false},
		{"untrusted peer says http", "203.0.113.9:5000", "localhost", "http", "127.0.0.1", false, true},
	} {
		r := httptest.NewRequest("GET", "/login", nil)
		r.RemoteAddr, r.Host = c.remote, c.host
		if c.proto != "" {
			r.Header.Set("X-Forwarded-Proto", c.proto)
		}
		if c.forFor != "" {
			r.Header.Set("X-Forwarded-For", c.forFor)
		}
		if c.tls {
			r.TLS = &tls.ConnectionState{}
		}
		if got := p.secureCookies(r); got != c.want {
			t.Errorf("%s: Secure = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 500000: "500,000", -1234567: "-1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
