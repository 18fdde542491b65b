#!/usr/bin/env bash
# Lints the OpenAPI document a running kgctx serves (GET /openapi.json)
# with @redocly/cli and its recommended rules; fails on an error, as
# redocly does, and prints the warnings. Starts its own server on a free port with a temporary data
# directory. Skips (exit 0) without npx or when the npm registry cannot be
# reached.
set -euo pipefail
cd "$(dirname "$0")/.."
REDOCLY="@redocly/cli@2.77.0"
if ! command -v npx >/dev/null; then
	echo "skip: npx not found (install Node.js to run the Redocly linter)"; exit 0
fi
if ! timeout 300 npx -y "$REDOCLY" --version >/dev/null 2>&1; then
	echo "skip: cannot fetch $REDOCLY from the npm registry"; exit 0
fi
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/kgctx" ./cmd/kgctx
"$tmp/kgctx" serve --data "$tmp/data" --addr 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
pid=$!
url=
for _ in $(seq 100); do
	url=$(sed -nE 's/.*listening on (http:[^ ]+).*/\1/p' "$tmp/serve.out")
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || { cat "$tmp/serve.err"; exit 1; }
curl -sf "$url/openapi.json" -H "Authorization: Bearer $(cat "$tmp/data/admin.token")" >"$tmp/openapi.json"
cat >"$tmp/redocly.yaml" <<'YAML'
extends:
  - recommended
YAML
(cd "$tmp" && npx -y "$REDOCLY" lint --config redocly.yaml --format stylish --max-problems 200 openapi.json)
echo "ok: @redocly/cli lint (recommended rules) passes on the served document"
