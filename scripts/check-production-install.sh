#!/usr/bin/env bash
# The production install as docs/deploy.md gives it, in a fresh clone of this repository's HEAD:
# `npm ci --omit=dev`, then `npm start`. Fails when npm warns EBADENGINE, when node_modules passes
# 150 MB, when a dev dependency is installed, when anything is compiled at start, or when the server
# does not answer /health and an operation. Everything stays on 127.0.0.1.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
server=
cleanup() {
  # The server's own exit status (143 after the kill) is not this check's.
  # npm does not pass the signal on to the server it started: stop the whole process group.
  if [ -n "$server" ]; then kill -- -"$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "production install: $*"; exit 1; }

git clone --quiet "$repo" "$tmp/app"
cd "$tmp/app"
npm ci --omit=dev --no-audit --no-fund >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "npm ci --omit=dev failed"; }
if grep -q EBADENGINE "$tmp/install.log"; then grep -A4 EBADENGINE "$tmp/install.log"; fail "npm warned EBADENGINE"; fi
[ -d dist ] || fail "npm ci --omit=dev built no dist/"
[ ! -e node_modules/vitest ] || fail "a dev dependency (vitest) was installed"
# The AVX2 whisper.cpp binding (26 MB) is installed by hand beside a production install, never by it.
[ ! -e node_modules/@napi-rs/whisper ] || fail "@napi-rs/whisper, a dev dependency, was installed"
megabytes=$(du -sm node_modules | cut -f1)
echo "production install: node_modules ${megabytes} MB"
[ "$megabytes" -le 150 ] || fail "node_modules is ${megabytes} MB, more than 150"

# dist/ may not change from here on: a start that compiled would touch it.
touch -d '2000-01-01' dist/index.js
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
# In a session of its own (setsid), so that npm and the server it starts can be stopped together.
HOST=127.0.0.1 PORT=$port MEDIAFLOW_DATA_DIR="$tmp/data" setsid npm start >"$tmp/start.log" 2>&1 &
server=$!
node -e '
  const base = process.argv[1];
  (async () => {
    for (let i = 0; i < 100; i++) {
      try { if ((await fetch(`${base}/health`)).ok) break; } catch {}
      await new Promise((r) => setTimeout(r, 200));
    }
    const answer = await fetch(`${base}/generate-subtitles/`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: "Deployed. It works." }) });
    const body = await answer.json();
    if (answer.status !== 200) throw new Error(`generate-subtitles answered ${answer.status}: ${JSON.stringify(body)}`);
    const srt = await (await fetch(body.subtitle_file_url)).text();
    if (!srt.includes("Deployed.")) throw new Error(`unexpected subtitles: ${srt}`);
  })().catch((error) => { console.error(error.message); process.exit(1); });
' "http://127.0.0.1:$port" || { cat "$tmp/start.log"; fail "the started server did not answer"; }
if grep -q '> tsc' "$tmp/start.log" || [ "$(stat -c %Y dist/index.js)" != "$(date -d 2000-01-01 +%s)" ]; then cat "$tmp/start.log"; fail "npm start compiled"; fi
echo "production install: ok (npm ci --omit=dev, npm start, /health, generate-subtitles)"
