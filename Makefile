# keyguard: run `make help` for the targets.
GO ?= go

.PHONY: help build test test-short bench lint generate tidy fuzz demo

help: ### this list
	@grep -E '^[a-z-]+:.*###' $(MAKEFILE_LIST) | sed -e 's/:.*###/\t/'

build: ### build ./keyguard
	$(GO) build -o keyguard ./cmd/keyguard

test: ### vet, then every test with the race detector against real redis-server (the CI command)
	$(GO) vet ./...
	$(GO) test -race -short -timeout 30m ./...

test-all: ### like test, with the multi-minute soak runs
	$(GO) vet ./...
	$(GO) test -race -timeout 80m ./...

bench: ### the Go benchmarks (see bench/RESULTS.md for the scripts)
	$(GO) test -run XXX -bench . -benchmem ./...

fuzz: ### 30 s of each fuzz target
	@for p in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list 'Fuzz.*' $$p | grep ^Fuzz); do \
	    $(GO) test -run XXX -fuzz "^$$f$$" -fuzztime 30s $$p || exit 1; \
	  done; \
	done

lint: ### gofmt and vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

generate: ### go generate leaves no diff
	$(GO) generate ./...
	git diff --exit-code

tidy: ### go mod tidy leaves no diff
	$(GO) mod tidy
	git diff --exit-code -- go.mod go.sum

demo: ### the demo on the embedded server
	$(GO) run ./cmd/keyguard-demo
