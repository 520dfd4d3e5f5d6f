// Twilio's Node SDK (npm twilio 6.2.0), unmodified and at its defaults,
// against a msgsvc node: the Node half of the proof of issue 38, run by
// TestTwilioNodeSDK (internal/app/twilio_sdk_test.go), which starts the
// node, makes the accounts and passes them in SDK_RUN:
//   {"base": URL the SDK's requests go to (the node, or Prism before it),
//    "control": URL of the test's helper (records simulated replies),
//    "a": {"sid", "token", "number"}, "b": {…}, "key": {"sid", "secret"} (an API key of a)}
// The SDK is found through NODE_PATH. Exit status 0 means every check held;
// anything else is printed on stderr.
"use strict";

const http = require("http");
const twilio = require("twilio");

const run = JSON.parse(process.env.SDK_RUN);

// The one change a customer makes: the SDK addresses https://api.twilio.com,
// and this HTTP client (the SDK's own, through its httpClient option) sends
// the same request to msgsvc instead.
class ToMsgsvc extends twilio.RequestClient {
  constructor(base, seen) {
    super();
    this.base = base.replace(/\/+$/, "");
    this.seen = seen;
  }
  async request(opts) {
    const uri = opts.uri.replace(/^https:\/\/api\.twilio\.com/, this.base);
    const res = await super.request({ ...opts, uri });
    this.seen.push({ method: opts.method, uri, status: res.statusCode, violations: res.headers["sl-violations"] });
    return res;
  }
}

const exchanges = [];
const client = (c, opts = {}) => twilio(c.sid, c.token, { httpClient: new ToMsgsvc(run.base, exchanges), ...opts });

function fail(msg) {
  throw new Error(msg);
}
function check(cond, msg, v) {
  if (!cond) fail(msg + (v === undefined ? "" : ": " + JSON.stringify(v)));
}
async function restError(what, promise, code, status) {
  try {
    const v = await promise;
    fail(`${what}: succeeded, want RestException ${code}: ${JSON.stringify(v)}`);
  } catch (err) {
    if (!(err instanceof twilio.RestException)) fail(`${what}: want RestException ${code}, got ${err && err.stack}`);
    check(err.code === code && (!status || err.status === status), `${what}: code ${err.code} status ${err.status}, want ${code} ${status}`);
    check(err.message && err.moreInfo, `${what}: no message or moreInfo`, err);
  }
}
async function poll(what, cond, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = cond();
    if (v) return v;
    if (Date.now() > end) fail("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 20));
  }
}
async function control(path, body) {
  const res = await fetch(run.control + path, { method: "POST", body: JSON.stringify(body) });
  if (res.status !== 204) fail(`control ${path}: ${res.status} ${await res.text()}`);
}

// The customer's endpoint: every post validated with the SDK's validateRequest.
const tokens = { [run.a.sid]: run.a.token, [run.b.sid]: run.b.token };
const posts = [];
const invalid = [];
const server = http.createServer((req, res) => {
  let raw = "";
  req.on("data", (d) => (raw += d));
  req.on("end", () => {
    const params = Object.fromEntries(new URLSearchParams(raw));
    const url = `http://127.0.0.1:${server.address().port}${req.url}`;
    const sig = req.headers["x-twilio-signature"] || "";
    if (req.method !== "POST" || !String(req.headers["content-type"]).startsWith("application/x-www-form-urlencoded") ||
      !twilio.validateRequest(tokens[params.AccountSid] || "", sig, url, params)) {
      invalid.push({ url, sig, params, contentType: req.headers["content-type"] });
      res.writeHead(403).end();
      return;
    }
    posts.push({ path: req.url, params });
    res.writeHead(200, { "Content-Type": "text/xml" }).end("<Response></Response>");
  });
});
const hookURL = (p) => `http://127.0.0.1:${server.address().port}${p}`;
const found = (path, f) => {
  check(invalid.length === 0, "posts refused by validateRequest", invalid);
  return posts.filter((p) => p.path === path && f(p.params));
};

async function main() {
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { a, b } = run;
  const ca = client(a);
  const cb = client(b);

  const acc = await ca.api.v2010.accounts(a.sid).fetch();
  check(acc.sid === a.sid && acc.status === "active", "account", acc.toJSON());
  const balance = async (c, sid) => {
    const bal = await c.api.v2010.accounts(sid).balance.fetch();
    check(bal.accountSid === sid && bal.currency === "USD" && !isNaN(parseFloat(bal.balance)), "balance", bal.toJSON());
    return parseFloat(bal.balance);
  };
  const bal0 = await balance(ca, a.sid);

  // Send, with a status callback; fetch.
  const m = await ca.messages.create({ to: "+5511999993001", from: a.number, body: "Hello from twilio-node", statusCallback: hookURL("/status") });
  check(/^SM[0-9a-f]{32}$/.test(m.sid) && m.accountSid === a.sid && m.to === "+5511999993001" && m.from === a.number &&
    m.body === "Hello from twilio-node" && m.direction === "outbound-api" && m.apiVersion === "2010-04-01" && m.numSegments === "1",
    "created", m.toJSON());
  await poll("the delivered status callback", () => found("/status", (p) => p.MessageSid === m.sid && p.MessageStatus === "delivered").length);
  for (const p of found("/status", () => true)) {
    check(p.params.MessageSid === m.sid && p.params.AccountSid === a.sid && p.params.SmsStatus === p.params.MessageStatus &&
      p.params.To === "+5511999993001" && p.params.From === a.number, "status callback", p.params);
  }
  const got = await ca.messages(m.sid).fetch();
  check(got.sid === m.sid && got.status === "delivered" && String(got.price).startsWith("-") && got.priceUnit === "USD", "fetched", got.toJSON());

  // Every page with a small page size: list() and each() walk them all.
  const sent = [m.sid];
  for (let i = 0; i < 6; i++) {
    sent.push((await ca.messages.create({ to: `+55119999940${10 + i}`, from: a.number, body: `paging ${i}` })).sid);
  }
  const pagesBefore = exchanges.length;
  const listed = (await ca.messages.list({ pageSize: 2 })).map((x) => x.sid);
  check(exchanges.length - pagesBefore >= 4, `list with pageSize 2 took ${exchanges.length - pagesBefore} requests for ${listed.length} messages`);
  check(listed.length === sent.length && sent.every((s) => listed.includes(s)) && new Set(listed).size === listed.length, "listed", { listed, sent });
  const eachSeen = [];
  await new Promise((resolve, reject) => ca.messages.each({ pageSize: 3, done: (err) => (err ? reject(err) : resolve()) }, (x) => eachSeen.push(x.sid)));
  check(eachSeen.length === sent.length, "each()", eachSeen);
  const byTo = await ca.messages.list({ to: "+5511999993001", pageSize: 1 });
  check(byTo.length === 1 && byTo[0].sid === m.sid, "To filter", byTo.map((x) => x.sid));

  // Redact; schedule and cancel.
  const red = await ca.messages(m.sid).update({ body: "" });
  check(red.body === "", "redacted", red.toJSON());
  check((await ca.messages(m.sid).fetch()).body === "", "fetch after redaction");
  const sch = await ca.messages.create({ to: "+5511999993002", from: a.number, body: "later",
    sendAt: new Date(Date.now() + 2 * 3600 * 1000), scheduleType: "fixed" });
  check(sch.status === "scheduled", "scheduled", sch.toJSON());
  const can = await ca.messages(sch.sid).update({ status: "canceled" });
  check(can.status === "canceled", "canceled", can.toJSON());
  check((await balance(ca, a.sid)) < bal0, "the balance did not go down");

  // The number's SmsUrl receives a reply.
  const nums = await ca.incomingPhoneNumbers.list({ pageSize: 1 });
  const mine = nums.find((n) => n.phoneNumber === a.number);
  check(mine && /^PN[0-9a-f]{32}$/.test(mine.sid) && !nums.some((n) => n.phoneNumber === b.number), "numbers", nums.map((n) => n.toJSON()));
  const upd = await ca.incomingPhoneNumbers(mine.sid).update({ smsUrl: hookURL("/sms") });
  check(upd.smsUrl === hookURL("/sms"), "SmsUrl", upd.toJSON());
  await control("/inbound", { account: "a", from: "+5511999993001", to: a.number, body: "Node got it" });
  const inb = await poll("the reply at SmsUrl", () => found("/sms", (p) => p.Body === "Node got it")[0]);
  check(inb.params.AccountSid === a.sid && inb.params.From === "+5511999993001" && inb.params.To === a.number &&
    inb.params.NumMedia === "0" && /^SM[0-9a-f]{32}$/.test(inb.params.MessageSid), "inbound", inb.params);

  // Errors: the SDK's RestException with Twilio's code.
  await restError("invalid To", ca.messages.create({ to: "12", from: a.number, body: "x" }), 21211, 400);
  await restError("From not the account's", ca.messages.create({ to: "+5511999993003", from: "+15559999999", body: "x" }), 21606, 400);
  await restError("the other account's number as From", ca.messages.create({ to: "+5511999993003", from: b.number, body: "x" }), 21606, 400);
  await control("/inbound", { account: "a", from: "+5511999993005", to: a.number, body: "STOP" });
  await restError("opted out", ca.messages.create({ to: "+5511999993005", from: a.number, body: "x" }), 21610, 400);
  const wrong = client({ sid: a.sid, token: "0".repeat(32) });
  await restError("wrong token", wrong.messages(m.sid).fetch(), 20003, 401);

  // A second tenant reaches nothing of the first.
  await restError("another account's message", cb.messages(m.sid).fetch(), 20404, 404);
  await restError("redacting another account's message", cb.messages(sent[1]).update({ body: "" }), 20404, 404);
  await restError("deleting another account's message", cb.messages(sent[1]).remove(), 20404, 404);
  await restError("another account's number", cb.incomingPhoneNumbers(mine.sid).fetch(), 20404, 404);
  await restError("another account's SmsUrl", cb.incomingPhoneNumbers(mine.sid).update({ smsUrl: hookURL("/stolen") }), 20404, 404);
  check((await cb.messages.list()).length === 0, "the second account lists messages");
  const asA = client(b, { accountSid: a.sid });
  for (const [what, p] of [
    ["account", () => asA.api.v2010.accounts(a.sid).fetch()],
    ["balance", () => asA.balance.fetch()],
    ["list", () => asA.messages.list()],
    ["fetch", () => asA.messages(m.sid).fetch()],
    ["create", () => asA.messages.create({ to: "+5511999993007", from: a.number, body: "x" })],
    ["numbers", () => asA.incomingPhoneNumbers.list()],
    ["update number", () => asA.incomingPhoneNumbers(mine.sid).update({ smsUrl: hookURL("/stolen") })],
    ["delete", () => asA.messages(sent[1]).remove()],
  ]) {
    try {
      await p();
      fail(`the second account's credentials with the first's AccountSid (${what}) succeeded`);
    } catch (err) {
      check(err instanceof twilio.RestException && (err.code === 20003 || err.code === 20404), `crossed ${what}`, String(err));
    }
  }
  check((await balance(cb, b.sid)) === 500, "the second account's balance");
  check((await ca.messages(sent[1]).fetch()).body === "paging 0", "the first account's message after the second's attempts");

  // A Twilio API key acts for its account, the account SID given apart.
  const withKey = client({ sid: run.key.sid, token: run.key.secret }, { accountSid: a.sid });
  check((await withKey.messages(sent[2]).fetch()).sid === sent[2], "fetch with an API key");
  check((await withKey.messages.create({ to: "+5511999993008", from: a.number, body: "by key" })).accountSid === a.sid, "send with an API key");

  // Delete.
  check((await ca.messages(sent[1]).remove()) === true, "delete");
  await restError("a deleted message", ca.messages(sent[1]).fetch(), 20404, 404);
  check(found("/stolen", () => true).length === 0, "a post reached the URL the second account tried to set");

  const flagged = exchanges.filter((x) => x.violations && !(x.status >= 400 && x.status < 500 && onlyStatusWarnings(x.violations)));
  check(flagged.length === 0, "responses with violations of Twilio's document", flagged);
  console.log(JSON.stringify({ ok: true, exchanges: exchanges.length }));
}

// A 4xx answer's status is not in Twilio's document (it lists no error
// responses); Prism flags that as a warning, and only that is let through.
function onlyStatusWarnings(h) {
  try {
    return JSON.parse(h).every((v) => v.severity === "Warning" && v.message.startsWith("Unable to match the returned status code"));
  } catch {
    return false;
  }
}

main().then(
  () => server.close(),
  (err) => {
    console.error(err && err.stack ? err.stack : String(err));
    server.close();
    process.exitCode = 1;
  },
);
