# Sourced by the scripts that drive kgctx with a tool from npm.
#
# need_npx PACKAGE WHAT PROBE: exit 0 (skip) without npx or when PACKAGE
# cannot be fetched from the npm registry (PROBE: arguments that make its
# command print something and exit, e.g. --help).
need_npx() {
	if ! command -v npx >/dev/null; then
		echo "skip: npx not found (install Node.js to run $2)"; exit 0
	fi
	if ! timeout 300 npx -y "$1" $3 >/dev/null 2>&1; then
		echo "skip: cannot fetch $1 from the npm registry"; exit 0
	fi
}

# start_kgctx: build kgctx into $tmp (a fresh temporary directory, removed
# at exit with the server), serve a new data directory on a free port and
# set $url and $admin (the operator token).
start_kgctx() {
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
	admin=$(cat "$tmp/data/admin.token")
}
