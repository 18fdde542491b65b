#!/usr/bin/env bash
# Compares the graph blocks two revisions compose over the same store, byte
# for byte: a performance change must not change any block. Builds
# bench/blockdump into an export of each revision (committed trees;
# the dump program is copied from this checkout, so OLD may predate it),
# runs each over DATA in turn (no server may hold it) and compares the
# outputs, which hold every block's text, triplets and score parts
# (explain), without timings.
#
#   scripts/blockdiff.sh OLD [NEW] -- --data DIR [--scenario synthetic|fb15k]
#                        [--nodes N] [--edges N] [--n BLOCKS] [--budget TOKENS]
#
# NEW defaults to HEAD. Example, 500 blocks of a 1M-node store kept by
# `kgctx bench synthetic --nodes 1000000 --data DIR`:
#
#   scripts/blockdiff.sh main HEAD -- --data DIR --nodes 1000000 --n 500
#
# The fb15k scenario needs the shared datasets (KGCTX_DATASETS).
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: scripts/blockdiff.sh OLD [NEW] -- dump flags}
shift
new=HEAD
if [[ $# -gt 0 && $1 != -- ]]; then
	new=$1
	shift
fi
[[ ${1:-} == -- ]] && shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for side in old new; do
	rev=${!side}
	mkdir -p "$tmp/$side/src/cmd/blockdump"
	git archive "$rev" | tar -x -C "$tmp/$side/src"
	cp bench/blockdump/main.go "$tmp/$side/src/cmd/blockdump/main.go"
	sed -i '/^\/\/go:build ignore$/d' "$tmp/$side/src/cmd/blockdump/main.go"
	(cd "$tmp/$side/src" && go build -o "$tmp/$side/blockdump" ./cmd/blockdump)
done
for side in old new; do
	echo "composing with ${!side} ($(git rev-parse --short "${!side}"))"
	"$tmp/$side/blockdump" "$@" >"$tmp/$side.jsonl"
done
blocks=$(wc -l <"$tmp/old.jsonl")
if cmp -s "$tmp/old.jsonl" "$tmp/new.jsonl"; then
	echo "ok: $blocks blocks identical ($(sha256sum <"$tmp/new.jsonl" | cut -c1-16))"
	exit 0
fi
line=$(cmp "$tmp/old.jsonl" "$tmp/new.jsonl" | sed -n 's/.* line \([0-9]*\).*/\1/p')
echo "DIFFERENT: first at block ${line:-?} of $blocks"
diff <(sed -n "${line:-1}p" "$tmp/old.jsonl" | tr ',' '\n') <(sed -n "${line:-1}p" "$tmp/new.jsonl" | tr ',' '\n') | head -40
exit 1
