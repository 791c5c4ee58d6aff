# Build, lint and test entry points. `make test` is the one command that runs
# every test on a fresh clone; `make build` produces the Lambda artifacts.

GO ?= go

# The Lambda functions, by package directory under ./functions.
FUNCTIONS := move timeout ai stream fanout effects

# How every Lambda bootstrap is built: static (no cgo), without the legacy RPC
# mode (lambda.norpc: provided.al2023 only speaks the Runtime API), trimmed.
LAMBDA_BUILD_FLAGS := -tags lambda.norpc -trimpath -ldflags='-s -w'

# $(call go-lambda,GOARCH,package,output): one linux bootstrap.
go-lambda = GOOS=linux GOARCH=$(1) CGO_ENABLED=0 $(GO) build $(LAMBDA_BUILD_FLAGS) -o $(3) $(2)

# The host's architecture, for binaries run here under the emulator.
HOST_GOARCH = $(shell $(GO) env GOARCH)

# Test tooling installed into the repository (not into the user's GOPATH).
BIN_DIR := $(CURDIR)/.bin
RIE_MODULE := github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d
# Static analysis beyond go vet (unused code, dead stores...), pinned.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

# npm packages used by the tests (dynalite), when infra/ declares any.
NPM_STAMP := $(if $(wildcard infra/package.json),infra/node_modules/.package-lock.json)

ARM64_BOOTSTRAPS := $(FUNCTIONS:%=bin/%/bootstrap)
NATIVE_BOOTSTRAPS := $(FUNCTIONS:%=bin/native/%/bootstrap)

.PHONY: build build-native build-MoveFunction build-ViewFunction build-PollFunction build-TimeoutFunction build-AiFunction \
	build-AiSeatFunction build-StreamFunction build-FanoutFunction build-EffectsFunction \
	lint run test test-deps check-tools strace chromium rie clean FORCE

## build: bin/<fn>/bootstrap for Lambda (linux/arm64), as deployed.
build: $(ARM64_BOOTSTRAPS)

## build-native: bin/native/<fn>/bootstrap for this machine's architecture,
## the binaries the Runtime Interface Emulator runs here.
build-native: $(NATIVE_BOOTSTRAPS)

# Always handed to go build (FORCE): Go knows what is stale, and its cache
# makes an unchanged rebuild cheap.
$(ARM64_BOOTSTRAPS): bin/%/bootstrap: FORCE
	$(call go-lambda,arm64,./functions/$*,$@)

$(NATIVE_BOOTSTRAPS): bin/native/%/bootstrap: FORCE
	$(call go-lambda,$(HOST_GOARCH),./functions/$*,$@)

# `sam build` (BuildMethod: makefile) runs build-<LogicalId> with
# ARTIFACTS_DIR set, in a copy of CodeUri (the repository root).
build-MoveFunction:
	$(call go-lambda,arm64,./functions/move,$(artifacts-dir)/bootstrap)

# The views' and the long poll's functions run the move binary, each under
# its own concurrency limit.
build-ViewFunction:
	$(call go-lambda,arm64,./functions/move,$(artifacts-dir)/bootstrap)

build-PollFunction:
	$(call go-lambda,arm64,./functions/move,$(artifacts-dir)/bootstrap)

build-TimeoutFunction:
	$(call go-lambda,arm64,./functions/timeout,$(artifacts-dir)/bootstrap)

build-AiFunction:
	$(call go-lambda,arm64,./functions/ai,$(artifacts-dir)/bootstrap)

# AI seats run the ai binary on concurrency apart from the public endpoint.
build-AiSeatFunction:
	$(call go-lambda,arm64,./functions/ai,$(artifacts-dir)/bootstrap)

build-StreamFunction:
	$(call go-lambda,arm64,./functions/stream,$(artifacts-dir)/bootstrap)

build-FanoutFunction:
	$(call go-lambda,arm64,./functions/fanout,$(artifacts-dir)/bootstrap)

build-EffectsFunction:
	$(call go-lambda,arm64,./functions/effects,$(artifacts-dir)/bootstrap)

artifacts-dir = $(or $(ARTIFACTS_DIR),$(error ARTIFACTS_DIR is not set: this target is run by sam build))

## lint: the SAM template, as CI checks it.
lint:
	cfn-lint template.yaml

## run: the whole API locally on 127.0.0.1:3000 (embedded store, no Docker).
run:
	$(GO) run ./cmd/local

## test: everything, from a fresh clone. The functions' native bootstraps
## are built first, once (build-native), and the tests that run them under
## the emulator take them from there (LAMBDA_BOOTSTRAP_DIR, see
## infra/rie/rietest) instead of each building its own.
test: test-deps build-native
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt -w needed on:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	cfn-lint template.yaml
	CI_REQUIRE_STRACE=1 LAMBDA_BOOTSTRAP_DIR=$(CURDIR)/bin/native $(GO) test ./...
	# The modules of their own under tools/: a client generated from
	# openapi.yaml (now, into a temporary module: nothing generated is
	# committed) driven through every route (issue 13), never a cached
	# result (the server's sources are not among what go test's cache
	# tracks); and the perft of another Go chess library for the README's
	# comparison.
	cd tools/genclient && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd tools/perft-corentings && $(GO) vet ./...
	# The engine built with GOEXPERIMENT=simd (the AVX2 evaluation of
	# shared/engine/nnue/vector_amd64.go): bit-identical to the portable
	# code on random lanes, and the same bench signature.
	GOEXPERIMENT=simd $(GO) test -count=1 ./shared/engine/... ./cmd/uci
	# Wall-clock time compliance of the engine, alone on the machine (the
	# run above has packages side by side on every core).
	ENGINE_COMPLIANCE=1 $(GO) test -count=1 -run 'Compliance|WithinTime|DeadlineBounds' ./shared/engine

test-deps: check-tools strace chromium rie $(NPM_STAMP)

# strace traces the embedded store's syscalls in its durability test
# (every acknowledged write fsynced first); installed from Debian's
# packages when missing.
strace:
	@command -v strace >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq strace; }

# Headless Chromium drives the web client in its browser tests
# (cmd/local/browser_test.go), and fonts-nanum renders the Korean in their
# screenshots; Debian's packages, installed when missing.
chromium:
	@{ command -v chromium >/dev/null 2>&1 && [ -d /usr/share/fonts/truetype/nanum ]; } || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-nanum; }

# Tools the tests start but that no Go or npm command can install.
check-tools:
	@for tool in moto_server node cfn-lint; do \
		command -v $$tool >/dev/null 2>&1 || { echo "make test: '$$tool' is not on PATH (needed by the tests)" >&2; exit 1; }; \
	done

## web: bundle the web client's modules into the one file its page loads
## (esbuild pinned in infra/package-lock.json; the output is committed, and
## cmd/local's TestWebBundleIsCurrent fails when it is stale).
web: $(NPM_STAMP)
	UPDATE_WEB_BUNDLE=1 $(GO) test -count=1 -run TestWebBundleIsCurrent ./cmd/local

## rie: the pinned AWS Lambda Runtime Interface Emulator in .bin/.
rie:
	GOBIN=$(BIN_DIR) $(GO) install $(RIE_MODULE)@$(RIE_VERSION)

$(NPM_STAMP): infra/package.json infra/package-lock.json
	npm ci --prefix infra --no-audit --no-fund

clean:
	rm -rf bin .aws-sam

FORCE:
