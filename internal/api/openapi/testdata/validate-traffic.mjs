// Validates recorded traffic (one JSON object a line, written by the Go
// tests with MSGSVC_TEST_TRAFFIC set) against the OpenAPI document with Ajv,
// an independent JSON Schema 2020-12 validator, and writes the recorded JSON
// responses as TypeScript values typed by openapi-typescript's output, for
// tsc to check. Exits non-zero on any violation.
//
// usage: node validate-traffic.mjs openapi.json traffic.jsonl out.ts
import fs from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(process.env.VALIDATOR_MODULES + "/");
const Ajv2020 = require("ajv/dist/2020").default;
const addFormats = require("ajv-formats");

const [docPath, trafficPath, tsOut] = process.argv.slice(2);
const doc = JSON.parse(fs.readFileSync(docPath, "utf8"));
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
for (const f of ["double", "float", "int32", "int64", "password"]) ajv.addFormat(f, true);
ajv.addSchema(doc, "doc");

const ptr = (parts) => "doc#/" + parts.map((p) => String(p).replaceAll("~", "~0").replaceAll("/", "~1")).join("/");
const compiled = new Map();
function validator(parts) {
  const key = ptr(parts);
  if (!compiled.has(key)) compiled.set(key, ajv.compile({ $ref: key }));
  return compiled.get(key);
}
function deref(obj, kind) {
  if (obj && obj.$ref) {
    const name = obj.$ref.split("/").pop();
    return { obj: doc.components[kind][name], parts: ["components", kind, name] };
  }
  return { obj, parts: null };
}

const templates = Object.keys(doc.paths).map((t) => ({
  t,
  re: new RegExp("^" + t.replace(/\{[^}]+\}/g, "[^/]+") + "$"),
  literal: t.replace(/\{[^}]+\}/g, "").length,
}));
function findPath(p) {
  const hits = templates.filter((x) => x.re.test(p));
  hits.sort((a, b) => b.literal - a.literal);
  return hits[0]?.t;
}

// The document describes the API; the web panel's pages and the document
// itself (/openapi.json, /docs) are not part of it.
const apiPrefixes = ["/api/", "/v1/", "/providers/", "/healthz", "/readyz", "/metrics"];
const violations = [];
const covered = new Map(); // "METHOD path" -> Set of statuses
const ts = [];
const tsSeen = new Map();
let checked = 0, webhooks = 0;

function fail(x, what, errors) {
  const detail = errors ? " " + ajv.errorsText(errors, { separator: "; " }).slice(0, 600) : "";
  violations.push(`${x.test}: ${x.kind === "webhook" ? "webhook" : x.method + " " + x.path + (x.query ? "?" + x.query : "") + " -> " + x.status}: ${what}${detail}`);
}
const baseType = (ct) => (ct || "").split(";")[0].trim().toLowerCase();
const isJSON = (ct) => /^application\/(.+\+)?json$/.test(baseType(ct));

function checkQuery(x, op, opParts) {
  let bad = false;
  const q = new URLSearchParams(x.query || "");
  (op.parameters || []).forEach((p0, i) => {
    const { obj: p, parts } = deref(p0, "parameters");
    if (p.in !== "query" || !q.has(p.name) || !p.schema) return;
    let v = q.get(p.name);
    const sch = p.schema.$ref ? doc.components.schemas[p.schema.$ref.split("/").pop()] : p.schema;
    const types = [].concat(sch.type || []);
    if ((types.includes("integer") || types.includes("number")) && /^-?\d+(\.\d+)?$/.test(v)) v = Number(v);
    else if (types.includes("boolean") && (v === "true" || v === "false")) v = v === "true";
    const validate = validator([...(parts || [...opParts, "parameters", i]), "schema"]);
    if (!validate(v)) bad = true;
  });
  return bad;
}

function checkRequest(x, op, opParts) {
  let bad = checkQuery(x, op, opParts);
  if (!op.requestBody || !x.requestBody) return bad;
  const ct = baseType(x.requestContentType);
  const media = op.requestBody.content[ct];
  if (!media) return true;
  if (!isJSON(ct)) return bad;
  let body;
  try { body = JSON.parse(x.requestBody); } catch { return true; }
  const validate = validator([...opParts, "requestBody", "content", ct, "schema"]);
  return bad || !validate(body);
}

function checkResponse(x, responses, respParts, tsPath) {
  const status = String(x.status);
  const key = status in responses ? status : status[0] + "XX" in responses ? status[0] + "XX" : "default" in responses ? "default" : null;
  if (!key) return fail(x, "status not documented for this operation");
  const { obj: resp, parts } = deref(responses[key], "responses");
  const rParts = parts || [...respParts, key];
  if (!resp) return fail(x, `response ${key} is not in the document`);
  if (!resp.content) {
    if (x.responseBody && x.method !== "HEAD") fail(x, "the document gives this response no body, yet it has one");
    return;
  }
  if (x.method === "HEAD") return;
  const ct = Object.keys(resp.content).find((k) => baseType(k) === baseType(x.responseContentType));
  if (!ct) return fail(x, `content type ${x.responseContentType} not documented (${Object.keys(resp.content)})`);
  if (!isJSON(ct)) return;
  let body;
  try { body = JSON.parse(x.responseBody); } catch { return fail(x, "response body is not JSON"); }
  const validate = validator([...rParts, "content", ct, "schema"]);
  if (!validate(body)) return fail(x, "response body breaks the schema:", validate.errors);
  if (tsPath) addTS(`${tsPath}["responses"][${JSON.stringify(key)}]["content"][${JSON.stringify(ct)}]`, body);
}

function addTS(type, value) {
  const n = tsSeen.get(type) || 0;
  if (n >= 5) return; // a few of each shape keep tsc quick
  tsSeen.set(type, n + 1);
  ts.push(`export const r${ts.length}: ${type} = ${JSON.stringify(value)};`);
}

for (const line of fs.readFileSync(trafficPath, "utf8").split("\n")) {
  if (!line.trim()) continue;
  const x = JSON.parse(line);
  checked++;
  if (x.kind === "webhook") {
    webhooks++;
    let body;
    try { body = JSON.parse(x.body); } catch { fail(x, "webhook body is not JSON"); continue; }
    const hook = doc.webhooks[body.event];
    if (!hook) { fail(x, `webhook event ${body.event} is not documented`); continue; }
    const validate = validator(["webhooks", body.event, "post", "requestBody", "content", "application/json", "schema"]);
    if (!validate(body)) fail(x, "webhook body breaks the schema:", validate.errors);
    else addTS(`webhooks[${JSON.stringify(body.event)}]["post"]["requestBody"]["content"]["application/json"]`, body);
    covered.set("WEBHOOK " + body.event, new Set([0]));
    continue;
  }
  if (!apiPrefixes.some((p) => x.path.startsWith(p))) continue; // the web panel's pages are not in the document
  const tpl = findPath(x.path);
  if (!tpl) {
    if (x.status === 404 || x.status === 405) {
      const v = validator(["components", "schemas", "Problem"]);
      let body;
      try { body = JSON.parse(x.responseBody); } catch { fail(x, "unknown path: answer is not JSON"); continue; }
      if (!v(body)) fail(x, "unknown path: answer is not a problem document:", v.errors);
    } else fail(x, "path not in the document");
    continue;
  }
  const method = x.method.toLowerCase();
  const op = doc.paths[tpl][method === "head" ? "get" : method];
  if (!op) {
    if (x.status !== 405 || !x.allow) { fail(x, "method not in the document, and the answer is not 405 with Allow"); continue; }
    checkResponse(x, { "405": { $ref: "#/components/responses/MethodNotAllowed" } }, [], null);
    covered.set("405", new Set([405]));
    continue;
  }
  const opParts = ["paths", tpl, method === "head" ? "get" : method];
  const k = x.method + " " + tpl;
  if (!covered.has(k)) covered.set(k, new Set());
  covered.get(k).add(x.status);
  const requestBad = checkRequest(x, op, opParts);
  if (requestBad && x.status < 400) fail(x, "the request breaks the document, yet the server accepted it");
  const tsPath = method === "head" ? null : `paths[${JSON.stringify(tpl)}][${JSON.stringify(method)}]`;
  checkResponse(x, op.responses, [...opParts, "responses"], tsPath);
}

const missing = [];
for (const [tpl, item] of Object.entries(doc.paths))
  for (const m of ["get", "put", "post", "patch", "delete"])
    if (item[m] && !covered.has(m.toUpperCase() + " " + tpl)) missing.push(m.toUpperCase() + " " + tpl);
for (const w of Object.keys(doc.webhooks || {})) if (!covered.has("WEBHOOK " + w)) missing.push("webhook " + w);

if (tsOut) fs.writeFileSync(tsOut, `import type { paths, webhooks } from "./api";\n` + ts.join("\n") + "\n");
console.log(`traffic: ${checked} exchanges (${webhooks} webhooks), ${covered.size} operations and webhooks seen, ${ts.length} typed values written`);
if (missing.length) console.log("never exercised:\n  " + missing.join("\n  "));
if (violations.length) {
  console.log(`${violations.length} violations:\n` + violations.map((v) => "  " + v).join("\n"));
  process.exit(1);
}
if (missing.length && process.env.REQUIRE_EVERY_OPERATION) process.exit(1);
console.log("0 violations");
