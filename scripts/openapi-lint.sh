#!/usr/bin/env bash
# Lints the OpenAPI document a running kgctx serves (GET /openapi.json)
# with @redocly/cli and its recommended rules; fails on an error, as
# redocly does, and prints the warnings. Starts its own server on a free
# port with a temporary data directory. Skips (exit 0) without npx or when the npm registry cannot be
# reached.
set -euo pipefail
cd "$(dirname "$0")/.."
REDOCLY="@redocly/cli@2.77.0"
. scripts/lib/npm-and-server.sh
need_npx "$REDOCLY" "the Redocly linter" --version
start_kgctx
curl -sf "$url/openapi.json" -H "Authorization: Bearer $admin" >"$tmp/openapi.json"
cat >"$tmp/redocly.yaml" <<'YAML'
extends:
  - recommended
YAML
(cd "$tmp" && npx -y "$REDOCLY" lint --config redocly.yaml --format stylish --max-problems 200 openapi.json)
echo "ok: @redocly/cli lint (recommended rules) passes on the served document"
