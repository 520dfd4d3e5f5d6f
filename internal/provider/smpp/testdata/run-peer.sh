#!/usr/bin/env bash
# Start the independent SMSC simulator (shared/peers/smsc-sim, built on the
# npm package smpp) in a temporary directory, wait until it listens, and print
# its PID on stdout. The caller stops it with `kill PID`.
#
#   pid=$(internal/provider/smpp/testdata/run-peer.sh)
#   MSGSVC_TEST_SMSC_ADDR=127.0.0.1:2775 go test -run Peer ./internal/provider/smpp/
#   kill "$pid"
#
# Environment: SMSC_SIM_DIR (the simulator's sources; default
# ../shared/peers/smsc-sim beside the repository, or beside its main checkout
# when this is a git worktree; they are copied to the temporary directory,
# since npm ci writes beside them), SMSC_PORT (default 2775), and the
# simulator's own settings (SMSC_SYSTEM_ID, SMSC_PASSWORD, DLR_DELAY_MS, ...).
# The temporary directory, with the simulator's log, is named on stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
# The simulator lives in shared/ beside the repository. In a git worktree the
# repository's main checkout is the one beside shared/, so look there too.
src="${SMSC_SIM_DIR:-}"
if [ -z "$src" ]; then
  for base in "$root" "$(cd "$root" && cd "$(git rev-parse --git-common-dir 2>/dev/null || echo .)/.." && pwd)"; do
    if [ -f "$base/../shared/peers/smsc-sim/smsc-sim.js" ]; then
      src="$(cd "$base/../shared/peers/smsc-sim" && pwd)"
      break
    fi
  done
  src="${src:-$root/../shared/peers/smsc-sim}"
fi
port="${SMSC_PORT:-2775}"
[ -f "$src/smsc-sim.js" ] || { echo "run-peer: no smsc-sim.js in $src (set SMSC_SIM_DIR)" >&2; exit 1; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "run-peer: node and npm are required" >&2; exit 1; }

dir="$(mktemp -d "${TMPDIR:-/tmp}/smsc-sim.XXXXXX")"
cp -R "$src/." "$dir/"
chmod -R u+w "$dir"
(cd "$dir" && npm ci --no-audit --no-fund >"$dir/npm.log" 2>&1) || {
  echo "run-peer: npm ci failed, see $dir/npm.log" >&2; exit 1; }

cd "$dir"
SMSC_PORT="$port" STATS_INTERVAL_S="${STATS_INTERVAL_S:-0}" nohup node smsc-sim.js >"$dir/smsc-sim.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  if grep -q "listening on" "$dir/smsc-sim.log" 2>/dev/null; then
    echo "run-peer: smsc-sim pid $pid on 127.0.0.1:$port, log $dir/smsc-sim.log" >&2
    echo "$pid"
    exit 0
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "run-peer: smsc-sim exited:" >&2; cat "$dir/smsc-sim.log" >&2; exit 1
  fi
  sleep 0.1
done
echo "run-peer: smsc-sim did not start listening; log:" >&2
cat "$dir/smsc-sim.log" >&2
kill "$pid" 2>/dev/null || true
exit 1
