#!/usr/bin/env bash
# The OpenAPI document as tools nobody here wrote read it (run from .ci/run):
#  1. oapi-codegen, default options, generates a Go client from the document a
#     dev node serves; it must compile and round-trip against that node.
#  2. openapi-typescript generates types; tsc type-checks recorded responses.
#  3. Ajv (JSON Schema 2020-12) validates every request, response and webhook
#     of a broad run of the app tests against the document: zero violations.
# Everything generated lives in a scratch directory, never in the repository.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
here=internal/api/openapi/testdata
OAPI_CODEGEN=github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2
NPM_TOOLS="ajv@8.20.0 ajv-formats@3.0.1 openapi-typescript@7.13.0 typescript@5.9.3"
port=${MSGSVC_GENERATORS_PORT:-18089}

work=$(mktemp -d)
node_pid=""
cleanup() {
  if [ -n "$node_pid" ]; then kill "$node_pid" 2>/dev/null || true; wait "$node_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
t0=$SECONDS
lap() { echo "  ($1: $((SECONDS - t0)) s so far)"; }

echo "--- tools: $NPM_TOOLS"
npm install --no-audit --no-fund --prefix "$work/npm" $NPM_TOOLS >"$work/npm.log" 2>&1 \
  || { cat "$work/npm.log"; echo "FATAL: could not install the npm tools" >&2; exit 1; }
bin="$work/npm/node_modules/.bin"

echo "--- a dev node on loopback, with an account holding 1020.123457 credits"
go build -o "$work/msgsvc" ./cmd/msgsvc
data="$work/data"
mkdir -p "$data"
"$work/msgsvc" migrate --db "$data/msgsvc.db" >/dev/null
acct=$("$work/msgsvc" account create --db "$data/msgsvc.db" --name "Generated client" --tier enterprise --credits 1020.123457 --json \
  | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).id))')
"$work/msgsvc" account limits --db "$data/msgsvc.db" --account "$acct" --tier-rpm 0 --send-rpm 0 --status-rpm 0 --media-rpm 0 >/dev/null
key=$("$work/msgsvc" key create --db "$data/msgsvc.db" --account "$acct" --env test --json \
  | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).key))')
MSGSVC_SIMULATOR_DELAY=50ms "$work/msgsvc" dev --data "$data" --addr "127.0.0.1:$port" >"$work/node.log" 2>&1 &
node_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  curl -fsS -o /dev/null "$base/readyz" 2>/dev/null && break
  kill -0 "$node_pid" 2>/dev/null || { cat "$work/node.log"; echo "FATAL: the dev node exited" >&2; exit 1; }
  sleep 0.1
done
curl -fsS -o "$work/openapi.json" "$base/openapi.json" || { cat "$work/node.log"; echo "FATAL: no /openapi.json" >&2; exit 1; }
lap "node up"

echo "--- oapi-codegen (default options) → Go client; compile; round trip against the node"
gen="$work/goclient"
mkdir -p "$gen"
go run "$OAPI_CODEGEN" -package main "$work/openapi.json" >"$gen/client.gen.go"
cp "$here/roundtrip/roundtrip.go" "$gen/main.go"
(
  cd "$gen"
  go mod init roundtrip >/dev/null 2>&1
  go get github.com/oapi-codegen/runtime@v1.9.0 >/dev/null 2>&1
  go mod tidy >/dev/null 2>&1
  go vet .
  go build -o roundtrip .
) || { echo "FATAL: the generated Go client does not compile" >&2; exit 1; }
"$gen/roundtrip" "$base" "$key" 1020.123457 || { tail -30 "$work/node.log"; exit 1; }
lap "Go client"

echo "--- openapi-typescript → types"
mkdir -p "$work/ts"
"$bin/openapi-typescript" "$work/openapi.json" -o "$work/ts/api.ts" >/dev/null

echo "--- recorded traffic of the app tests, validated by Ajv"
traffic="$work/traffic.jsonl"
MSGSVC_TEST_TRAFFIC="$traffic" go test -count=1 -timeout 15m \
  -run '^(TestEveryStatusIsDocumented|TestManage.*|TestEventsFeed|TestMessageList|TestRedactMessage|TestRetentionPeriod|TestAuthentication|TestBalance|TestSendValidation|TestSendChargesAndShape|TestLifeCycleAndWebhooks|TestScheduleCancelAndCampaigns|TestHealthMetricsDocs|TestTemplatesAndMediaOnSends|TestMediaUpload.*|TestOptOut.*|TestIdempotency|TestRepliesRouteToLatestCampaign|TestTrafficTour|TestRoutesKnowMoney|TestUsageReport|TestAlertsOncePerCrossing)$' \
  ./internal/app/ >"$work/app.log" 2>&1 || { cat "$work/app.log"; exit 1; }
tail -1 "$work/app.log"
export VALIDATOR_MODULES="$work/npm/node_modules"
REQUIRE_EVERY_OPERATION=1 node "$here/validate-traffic.mjs" "$work/openapi.json" "$traffic" "$work/ts/responses.ts"
# The validator must be able to fail: one broken answer is a violation.
printf '%s\n' '{"kind":"http","test":"control","method":"GET","path":"/api/v1/integration/balance","status":200,"responseContentType":"application/json","responseBody":"{\"balance\":\"1.5\"}"}' >"$work/control.jsonl"
if node "$here/validate-traffic.mjs" "$work/openapi.json" "$work/control.jsonl" "" >/dev/null; then
  echo "FATAL: the validator passed a balance given as a string" >&2; exit 1
fi
lap "traffic"

echo "--- tsc type-checks the recorded responses against the generated types"
cat >"$work/ts/tsconfig.json" <<'JSON'
{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022", "module": "es2022",
  "moduleResolution": "bundler", "skipLibCheck": true}, "files": ["responses.ts"]}
JSON
"$bin/tsc" -p "$work/ts/tsconfig.json"
echo "typed responses: $(grep -c '^export const' "$work/ts/responses.ts") values type-check"
# tsc must be able to fail too: an unknown field in a balance is an error.
cp "$work/ts/responses.ts" "$work/ts/good.ts"
echo 'export const control: paths["/api/v1/integration/balance"]["get"]["responses"]["200"]["content"]["application/json"] = {"balance": 1, "currency": "USD", "last_updated": "2026-11-21T10:00:00.000Z", "extra": 1};' >>"$work/ts/responses.ts"
if "$bin/tsc" -p "$work/ts/tsconfig.json" >/dev/null; then
  echo "FATAL: tsc accepted a balance with an unknown field" >&2; exit 1
fi
lap "TypeScript"
echo "generators: 3 passed, 0 failed"
