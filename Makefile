# kgctx developer targets. `make ci` runs what CI runs (.ci/run).
GO        ?= go
BIN       ?= bin
STATICCHECK_VERSION ?= v0.6.1
# The hot-path benchmarks the baseline covers: HNSW and text search, query
# embedding, fusion, policy decisions, the walk, whole graph blocks on
# FB15k-237, and import parsing.
BENCH_PKGS ?= ./index/hnsw/ ./index/text/ ./index/embed/ ./index/fuse/ ./policy/ ./traverse/ ./bench/ ./engine/tripletio/
BENCH_RUN ?= HNSW_Search|Text_Search|Lexical_EmbedInto|RRF|PEP_Authorize|Request_Allow|Expand_Hubs|GraphBlock_FB15k|Reader_JSONL|Reader_TSV
BENCH_COUNT ?= 5

.PHONY: all build fmt lint test race bench bench-baseline bench-compare ci clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -o $(BIN)/kgctx ./cmd/kgctx

fmt:
	gofmt -w $$(git ls-files '*.go')

# go vet always; staticcheck, installed into ./bin on first use.
lint:
	$(GO) vet ./...
	@test -x $(BIN)/staticcheck || GOBIN=$(abspath $(BIN)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(BIN)/staticcheck ./...

test:
	$(GO) test ./...

race:
	$(GO) test -race -short ./...

# Go benchmarks with allocation counts; results in bench/results/new.txt.
bench:
	@mkdir -p bench/results
	$(GO) test -run '^$$' -bench '$(BENCH_RUN)' -benchmem -count $(BENCH_COUNT) -timeout 60m $(BENCH_PKGS) | tee bench/results/new.txt

# Refresh the committed baseline (after a change that is meant to move it).
bench-baseline: bench
	cp bench/results/new.txt bench/baseline.txt

# Compare the last `make bench` against the committed baseline.
bench-compare:
	@test -x $(BIN)/benchstat || GOBIN=$(abspath $(BIN)) $(GO) install golang.org/x/perf/cmd/benchstat@latest
	$(BIN)/benchstat bench/baseline.txt bench/results/new.txt

ci:
	./.ci/run

clean:
	rm -rf $(BIN) bench/results
