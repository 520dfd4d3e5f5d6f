package media

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/webhook"
)

// URLOptions configure a URLChecker. The zero value is the production
// setting: public https addresses only, with a HEAD probe.
type URLOptions struct {
	// AllowPrivate accepts and probes loopback and private addresses.
	// For tests only: a send could otherwise make us probe the inside.
	AllowPrivate bool
	// NoProbe skips the HEAD request; only the URL itself is checked.
	NoProbe bool
	// Timeout bounds the probe (default 2s): it runs inside a send.
	Timeout time.Duration
	// Client replaces the probing client. The default dials public
	// addresses only (unless AllowPrivate) and follows no redirects.
	Client *http.Client
}

// URLChecker vets media given by URL (`media: {"url": …}`) at send time.
// It is safe for concurrent use; make one and keep it.
type URLChecker struct {
	o      URLOptions
	client *http.Client
}

// NewURLChecker makes a checker.
func NewURLChecker(o URLOptions) *URLChecker {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	c := o.Client
	if c == nil {
		c = webhook.NewClient(webhook.ClientOptions{AllowPrivate: o.AllowPrivate, Timeout: o.Timeout,
			MaxConnsPerHost: 4, UserAgent: "msgsvc-media-check/1"})
	}
	return &URLChecker{o: o, client: c}
}

// URLInfo is what a check learned about the file.
type URLInfo struct {
	Probed bool   // the server answered the HEAD with 2xx
	MIME   string // an accepted type named by Content-Type, else ""
	Size   int64  // Content-Length, -1 when unknown
}

// Check validates rawURL for a send on channel: https only, no credentials
// or fragment, and a host that is a public address. Unless NoProbe, it then
// asks the server with HEAD; the probe dials public addresses only, so a
// hostname resolving inside is refused too. A clear answer is held to the
// channel's limits (type, size, 404). An unclear one (timeout, 405, 5xx,
// redirect, no Content-Type) does not block the send: the provider
// fetches the file later and reports what it finds. Refusals are
// *RuleError with a message fit for the API's field error.
func (c *URLChecker) Check(ctx context.Context, rawURL, channel string) (URLInfo, error) {
	info := URLInfo{Size: -1}
	channel = strings.ToUpper(channel)
	if rules(channel) == nil {
		return info, &RuleError{channel, fmt.Sprintf("%s messages cannot carry media; use WHATSAPP or RCS", channel)}
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" {
		return info, &RuleError{channel, "media URL must be an https:// address"}
	}
	if err := webhook.ValidateCallbackURL(rawURL, c.o.AllowPrivate); err != nil {
		return info, urlRefusal(channel, err)
	}
	if c.o.NoProbe {
		return info, nil
	}
	return c.probe(ctx, rawURL, channel)
}

func urlRefusal(channel string, err error) *RuleError {
	if errors.Is(err, webhook.ErrNotPublic) {
		return &RuleError{channel, "media URL must point to a public address, not a loopback or private one"}
	}
	msg := strings.TrimPrefix(err.Error(), "webhook: ")
	return &RuleError{channel, strings.ReplaceAll(msg, "callback URL", "media URL")}
}

func (c *URLChecker) probe(ctx context.Context, rawURL, channel string) (URLInfo, error) {
	info := URLInfo{Size: -1}
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, rawURL, nil)
	if err != nil {
		return info, &RuleError{channel, "media URL is not valid"}
	}
	resp, err := c.client.Do(req)
	if err != nil {
		var dnsErr *net.DNSError
		switch {
		case errors.Is(err, webhook.ErrNotPublic):
			return info, &RuleError{channel, "media URL's host resolves to a loopback or private address"}
		case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
			return info, &RuleError{channel, fmt.Sprintf("media URL's host %q does not exist", req.URL.Hostname())}
		}
		return info, nil // unreachable now; the provider will try and report
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return info, &RuleError{channel, fmt.Sprintf("media URL answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return info, nil
	}
	info.Probed, info.Size = true, resp.ContentLength
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "image/jpg" || mt == "image/pjpeg" {
		mt = JPEG.MIME // common misspellings servers send
	}
	if _, ok := TypeOf(mt); ok {
		info.MIME = mt
		return info, checkType(channel, mt, info.Size)
	}
	switch major, _, _ := strings.Cut(mt, "/"); {
	case major == "image", major == "video", major == "audio":
		return info, checkType(channel, mt, info.Size)
	case mt == "text/html", mt == "application/xhtml+xml":
		return info, &RuleError{channel, "media URL serves a web page, not a media file"}
	case info.Size > MaxSize:
		return info, &RuleError{channel, fmt.Sprintf("media URL's file is %d bytes; media is limited to %d MB (%d bytes)",
			info.Size, MaxSize/MB, MaxSize)}
	}
	return info, nil
}
