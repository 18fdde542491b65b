#!/usr/bin/env bash
# Rebuilds the tree-sitter modules `kgctx index` embeds
# (compose/codeindex/treesitter/wasm/*.wasm.gz) and the grammars' tag
# queries (compose/codeindex/treesitter/queries/*.scm) from their
# published Go modules, pinned below, with Debian 12's clang, lld and
# wasi-libc:
#
#   apt-get install -y clang lld wasi-libc libclang-rt-14-dev-wasm32
#   scripts/build-grammars.sh            # rebuild into the repository
#   scripts/build-grammars.sh --check    # rebuild into a temporary folder and
#                                        # compare with the committed files
#
# Each module is tree-sitter's C runtime (lib.c), one or more grammars and
# compose/codeindex/treesitter/csrc/glue.c, compiled to wasm32-wasi as a
# reactor (the host calls _initialize) with no debug information, asserts
# off and source paths mapped to ".", so the output depends on the sources
# and the compiler alone. The .gz files are made with `gzip -n -9` (no
# name, no time); --check compares the decompressed modules, so another
# gzip does not fail it. --check exits 0 without checking (saying why)
# when the tools or the module proxy are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNTIME=github.com/tree-sitter/go-tree-sitter@v0.25.0
PYTHON=github.com/tree-sitter/tree-sitter-python@v0.23.6
JAVASCRIPT=github.com/tree-sitter/tree-sitter-javascript@v0.23.1
TYPESCRIPT=github.com/tree-sitter/tree-sitter-typescript@v0.23.2
JAVA=github.com/tree-sitter/tree-sitter-java@v0.23.5
RUST=github.com/tree-sitter/tree-sitter-rust@v0.23.2

PKG=compose/codeindex/treesitter
check=0
[ "${1:-}" = "--check" ] && check=1

skip() {
	if [ "$check" = 1 ]; then
		echo "build-grammars: skipped: $*"
		exit 0
	fi
	echo "build-grammars: $*" >&2
	exit 1
}

command -v clang >/dev/null || skip "no clang (apt-get install -y clang lld wasi-libc libclang-rt-14-dev-wasm32)"
command -v wasm-ld >/dev/null || skip "no wasm-ld (apt-get install -y lld)"
command -v gzip >/dev/null || skip "no gzip"
echo 'int main(void){return 0;}' | clang --target=wasm32-wasi -x c - -o /dev/null 2>/dev/null ||
	skip "clang cannot build for wasm32-wasi (apt-get install -y wasi-libc libclang-rt-14-dev-wasm32)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# dir MODULE@VERSION: the module's directory in the module cache, fetched
# by exact version (the proxy's version list is not needed).
dir() {
	local out
	out=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$1" 2>&1) || skip "cannot download $1: $(echo "$out" | grep -m1 -E '"Error"|go:' || true)"
	echo "$out" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

rt=$(dir $RUNTIME)
py=$(dir $PYTHON)
js=$(dir $JAVASCRIPT)
ts=$(dir $TYPESCRIPT)
java=$(dir $JAVA)
rs=$(dir $RUST)

out=$work/out
mkdir -p "$out/wasm" "$out/queries"

CFLAGS=(--target=wasm32-wasi -O2 -DNDEBUG -DHAVE_ENDIAN_H -std=c11 -D_DEFAULT_SOURCE
	-ffunction-sections -fdata-sections -fvisibility=hidden -w)
LDFLAGS=(--target=wasm32-wasi -mexec-model=reactor -Wl,--gc-sections -Wl,-z,stack-size=1048576 -Wl,--strip-all)

# cc OUT SRC DIR...: compile SRC with the include folders DIR..., paths
# mapped to "." in whatever the object keeps.
cc() {
	local o=$1 src=$2
	shift 2
	local inc=()
	for d in "$@"; do inc+=(-I "$d"); done
	clang "${CFLAGS[@]}" -ffile-prefix-map="$rt=." -ffile-prefix-map="$(dirname "$src")=." -ffile-prefix-map="$PWD=." \
		"${inc[@]}" -c "$src" -o "$o"
}

# module NAME "GRAMMAR_SRC_DIR..." "LANG...": the runtime, the grammars and the
# glue (its KG_LANG defines name the grammars) linked into NAME.wasm.
module() {
	local name=$1 dirs=$2 langs=$3
	local saved=("${CFLAGS[@]}") i=0
	for l in $langs; do CFLAGS+=("-DKG_LANG$i=$l"); i=$((i + 1)); done
	local o=$work/$name
	mkdir -p "$o"
	cc "$o/glue.o" "$PKG/csrc/glue.c" "$rt/include"
	CFLAGS=("${saved[@]}")
	cc "$o/lib.o" "$rt/src/lib.c" "$rt/include" "$rt/src"
	local objs=("$o/lib.o" "$o/glue.o") j=0
	for d in $dirs; do
		for f in parser.c scanner.c; do
			[ -f "$d/$f" ] || continue
			cc "$o/g$j-$f.o" "$d/$f" "$d"
			objs+=("$o/g$j-$f.o")
		done
		j=$((j + 1))
	done
	clang "${LDFLAGS[@]}" -o "$out/wasm/$name.wasm" "${objs[@]}"
	echo "build-grammars: $name.wasm $(wc -c <"$out/wasm/$name.wasm") bytes"
}

# Two modules at a time: the machine has two cores.
module python "$py/src" tree_sitter_python &
module javascript "$js/src" tree_sitter_javascript &
wait
module typescript "$ts/typescript/src $ts/tsx/src" "tree_sitter_typescript tree_sitter_tsx" &
module java "$java/src" tree_sitter_java &
wait
module rust "$rs/src" tree_sitter_rust

cp "$py/queries/tags.scm" "$out/queries/python-tags.scm"
cp "$js/queries/tags.scm" "$out/queries/javascript-tags.scm"
cp "$ts/queries/tags.scm" "$out/queries/typescript-tags.scm"
cp "$java/queries/tags.scm" "$out/queries/java-tags.scm"
cp "$rs/queries/tags.scm" "$out/queries/rust-tags.scm"

# The licences of what the modules hold, from the modules themselves.
{
	echo "Licences of the tree-sitter code compiled into wasm/*.wasm.gz and of queries/*.scm"
	echo "(written by scripts/build-grammars.sh; do not edit)."
	echo
	echo "- tree-sitter's C runtime (lib/src and lib/include of tree-sitter/tree-sitter, as vendored"
	echo "  in the Go module $RUNTIME): MIT, Copyright (c) 2018 Max Brunsfeld; the module's"
	echo "  licence below. Its Unicode tables (src/unicode, from ICU): the ICU licence below."
	for m in $PYTHON $JAVASCRIPT $TYPESCRIPT $JAVA $RUST; do
		echo "- the grammar and tags query of the Go module $m: MIT, its licence below."
	done
	for pair in "$RUNTIME:$rt/LICENSE" "ICU (src/unicode of $RUNTIME):$rt/src/unicode/LICENSE" \
		"$PYTHON:$py/LICENSE" "$JAVASCRIPT:$js/LICENSE" "$TYPESCRIPT:$ts/LICENSE" "$JAVA:$java/LICENSE" "$RUST:$rs/LICENSE"; do
		echo
		echo "==== ${pair%%:/*}"
		echo
		cat "/${pair#*:/}"
	done
} >"$out/LICENSES.txt"

if [ "$check" = 1 ]; then
	bad=0
	for f in "$out"/wasm/*.wasm; do
		n=$(basename "$f")
		if [ ! -f "$PKG/wasm/$n.gz" ] || ! gzip -dc "$PKG/wasm/$n.gz" | cmp -s - "$f"; then
			echo "build-grammars: $PKG/wasm/$n.gz differs from what the script builds"
			bad=1
		fi
	done
	for f in "$out"/queries/*.scm; do
		n=$(basename "$f")
		if ! cmp -s "$f" "$PKG/queries/$n"; then
			echo "build-grammars: $PKG/queries/$n differs from the grammar's"
			bad=1
		fi
	done
	if ! cmp -s "$out/LICENSES.txt" "$PKG/LICENSES.txt"; then
		echo "build-grammars: $PKG/LICENSES.txt differs from the modules' licences"
		bad=1
	fi
	[ "$bad" = 0 ] && echo "build-grammars: the committed modules and queries match a rebuild"
	exit $bad
fi

mkdir -p "$PKG/wasm" "$PKG/queries"
for f in "$out"/wasm/*.wasm; do
	gzip -n -9 -c "$f" >"$PKG/wasm/$(basename "$f").gz"
done
cp "$out"/queries/*.scm "$PKG/queries/"
cp "$out/LICENSES.txt" "$PKG/LICENSES.txt"
ls -l "$PKG/wasm"
