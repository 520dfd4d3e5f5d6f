// Package rbm is msgsvc's RCS provider over Google's RCS Business Messaging
// API v1 (docs/providers.md): an agent that sends messages,
// answers capability questions, takes undelivered messages back, and
// receives the platform's webhook.
//
// Layout: config.go and credentials.go read the configuration and the
// service account's key; http.go makes the calls (token, timeouts, rate
// cap, retries); adapter.go sends, revokes and asks capabilities;
// content.go renders a message in RBM's JSON; files.go uploads our media;
// webhook.go and events.go read the platform's calls; health.go reports.
//
// # Authentication
//
// OAuth 2.0 for service accounts: golang.org/x/oauth2/jwt signs a JWT
// assertion (RS256, iss the key's client_email, aud its token_uri, scope
// rcsbusinessmessaging) with the key's private key and trades it at the
// key's token_uri for an access token, which it caches and renews shortly
// before expiry. A refusal by the token endpoint, or a 401/403 of the API,
// marks the provider down in health until a call goes through again;
// messages meanwhile fail their hand-over as temporary, so they wait (or
// fail over to a secondary route) instead of failing.
//
// # Sending
//
// POST phones/+E164/agentMessages?messageId=&agentId=. The messageId is a
// name-based UUID of our message id (the platform wants a UUID), the same
// at every hand-over, so that the platform ignores a resubmission; it is
// the message's provider reference, by which the platform's events find
// it. expireTime is the end of the message's validity. See agentMessage
// for how text, media, suggestions and cards are shaped. Answers: 200
// taken; 404 the phone cannot be reached over RCS (RCS_NOT_SUPPORTED:
// the SMS fallback, when the message has one); 400 refused (REJECTED);
// 429 and 5xx retried with backoff, then a temporary failure.
//
// # Fallback when undelivered
//
// A message with an SMS fallback waits for its DELIVERED event until
// FallbackAfter (default 10 minutes, at most half of its remaining
// validity): then the dispatcher asks Revoke (DELETE
// agentMessages/{id}); 200 means the platform will not deliver it, and
// its SMS goes out; 404 means it was delivered, and it stays RCS.
//
// # Webhook
//
// Pub/Sub push calls to /providers/rbm/webhook, signed with
// X-Goog-Signature (HMAC-SHA512 of the decoded data, keyed with the
// client token). DELIVERED and READ user events become status reports,
// TTL_EXPIRATION_REVOKED a FAILED EXPIRED one; user messages become
// replies. Calls are acknowledged only once stored.
package rbm
