// Package whatsapp is msgsvc's provider for the WhatsApp Business Cloud API
// (Graph API v23.0; docs/providers.md): it sends messages to
// POST /{phone-number-id}/messages with a bearer token and takes the
// platform's webhook (statuses of our messages, messages users send).
//
// Layout: config.go (settings, defaults, User-Agent), client.go (Submit,
// requests with timeouts, retries and backoff), ratelimit.go (the rate
// cap), payload.go (our content in the platform's JSON), media.go (uploads
// and their cache), errors.go (the platform's error codes mapped to ours),
// webhook.go (verification handshake, signature, handing reports to the
// sink), notify.go (reading notifications), health.go (/readyz, metrics).
//
// # What goes out
//
//   - text: type text (preview_url when it holds a link);
//   - media: type image, video or document with the text as caption, by
//     link (media.url; the kind is read from the link's extension, anything
//     unrecognised goes as a document) or by the platform's id of an
//     uploaded file (media.mediaId): the file is uploaded once to
//     POST /{phone-number-id}/media and its id kept in platform_media, then
//     reused until Config.MediaReuse (the platform deletes uploads after 30
//     days);
//   - reply buttons: interactive "button" (payload as the reply id), with
//     the media as header;
//   - a url button: interactive "cta_url" (Meta's call-to-action URL
//     message). The peer's OpenAPI document (2025-10-21) does not list this
//     type yet, so Prism refuses it; the platform itself takes it;
//   - a call button: the platform has no free-form button that dials a
//     number (only a template can define one), so the text ends with
//     "<title>: +<phone>", which WhatsApp makes tappable;
//   - lists: interactive "list";
//   - templates: type template, language with policy "deterministic", the
//     parameters as the body's text parameters.
//
// # Errors
//
// The platform's codes map to errorCodes (table in errors.go). Rate limits
// (130429, 131056, 80007, 4, 131048) and transient errors (5xx, 1, 2,
// 131000, ...) are tried again with exponential backoff and jitter, up to
// Config.MaxAttempts within the dispatcher's deadline, then left to its
// later retries. A refused token (190) or account marks the provider down
// in /readyz and metrics until a request succeeds; its messages wait and
// retry (and the circuit breaker fails the route over, if it has a
// secondary). Requests that got no answer are sent again: the platform has
// no idempotency key, so delivery is at least once.
//
// # Webhook
//
// GET answers the handshake (hub.mode=subscribe and our verify token, in
// constant time). POST checks X-Hub-Signature-256 (HMAC-SHA256 of the raw
// body with the app secret, compared in constant time): missing or wrong is
// 401 INVALID_SIGNATURE and nothing is recorded. Statuses sent, delivered,
// read and failed (with its error mapped as above) are matched by the
// message id the send returned (our provider reference). Messages become
// replies on the WHATSAPP channel, which opens the 24-hour window as every
// reply does; what the integrator gets as the reply's text:
//
//	text                    the text
//	button (template)       the button's payload, else its text
//	button_reply            the reply button's id: the payload we sent
//	list_reply              the row's id
//	image/video/document/   the caption (if any), then a line
//	audio/sticker             "[image image/jpeg] <APIURL>/<media id>"; a
//	                          GET of that link with the access token
//	                          answers with a download URL valid 5 minutes
//	location, contacts,     "[location lat,long] name, address", "[contacts] …",
//	reaction, order           "[reaction] 👍", "[order] 2 × sku, …"
//	unsupported             "[unsupported message]"
//
// System notices (a user changed number) and group events are not
// replies and are acknowledged without a record. The answer is 200 only
// after the sink stored everything, so the platform sends again what was
// not stored.
//
// Secrets (token, app secret, verify token) are never logged.
package whatsapp
