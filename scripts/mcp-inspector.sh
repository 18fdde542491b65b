#!/usr/bin/env bash
# Drives kgctx's MCP server with a third-party client: the MCP inspector's
# CLI mode (npm @modelcontextprotocol/inspector), over streamable HTTP
# (/mcp on a running server) and over stdio (kgctx mcp). Starts its own
# server on a free port with a temporary data directory. Prints each
# answer; exits non-zero when one is not what it should be. Skips (exit 0)
# without npx or when the npm registry cannot be reached.
set -euo pipefail
cd "$(dirname "$0")/.."
INSPECTOR="@modelcontextprotocol/inspector@0.21.2"
. scripts/lib/npm-and-server.sh
need_npx "$INSPECTOR" "the MCP inspector" --help
start_kgctx
token=$(curl -sf -X POST "$url/v1/admin/tokens" -H "Authorization: Bearer $admin" \
	-d '{"orgId":"org_123","agentId":"agent_dev","role":"org_admin","projectIds":["proj_xyz"]}' | sed -E 's/.*"token":"([^"]+)".*/\1/')

inspect() { # inspect EXPECTED ARGS...: run the inspector, print, check the output holds EXPECTED
	local want=$1; shift
	echo "\$ mcp-inspector --cli $*" | sed "s/$token/\$TOKEN/g"
	out=$(npx -y "$INSPECTOR" --cli "$@" 2>/dev/null)
	echo "$out"
	grep -qF -- "$want" <<<"$out" || { echo "FAIL: the answer does not hold: $want"; exit 1; }
}
http=(--transport http --header "Authorization: Bearer $token")
inspect '"graph_context"' "$url/mcp" "${http[@]}" --method tools/list
inspect '"accepted": 2' "$url/mcp" "${http[@]}" --method tools/call --tool-name add_triplets \
	--tool-arg 'triplets=[{"source":"AuthMiddleware","relationship":"calls","target":"AuthService"},{"source":"AuthService","relationship":"depends_on","target":"PostgresDB"}]'
inspect 'AuthMiddleware → calls → AuthService' "$url/mcp" "${http[@]}" --method tools/call --tool-name graph_context --tool-arg 'query=null pointer in auth middleware'
# stdio: the inspector spawns kgctx mcp, which forwards to the server.
inspect 'AuthService → depends_on → PostgresDB' -e "KGCTX_TOKEN=$token" -e "KGCTX_SERVER=$url" "$tmp/kgctx" mcp \
	--method tools/call --tool-name search_triplets --tool-arg subject=AuthService
inspect '"isError": true' -e "KGCTX_TOKEN=$token" -e "KGCTX_SERVER=$url" "$tmp/kgctx" mcp \
	--method tools/call --tool-name session_feedback --tool-arg sessionId=ses_1 --tool-arg outcome=great
echo "ok: the MCP inspector drove kgctx over streamable HTTP and stdio"
