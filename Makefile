# The two commands a newcomer needs: `make run` and `make test`.
# Everything else is for people working on sip itself.

GO        ?= go
BIN       := bin/sip
# Versions come from git tags (v1.2.3); between tags `git describe` says how
# far past the last one a build is (1.2.3-4-gabcdef0), and with no tag at
# all the binary reports 0.0.0-dev.
VERSION   ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null | sed 's/^v//')
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE      ?= $(shell git log -1 --format=%cI 2>/dev/null)
LDFLAGS   := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
BENCHTIME ?= 5x

.PHONY: all build run test test-short bench bench-import bench-validate bench-startup perfcheck fuzz lint fmt index docs screenshots clean release release-check image

all: lint test build

## build: compile bin/sip, statically (CGO_ENABLED=0) as releases are: no dynamic loader at start-up
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/sip

## run: build sip and serve the bundled SIPs on the embedded SQLite default
ADDR ?= 127.0.0.1:8080
run: build
	@./$(BIN) validate evaluations
	@echo "Serving; stop with Ctrl-C. Database: $${SIP_DATABASE_URL:-$${XDG_DATA_HOME:-$$HOME/.local/share}/sip/registry.db}"
	./$(BIN) serve --addr $(ADDR) --log-format text --dev-claims

## test: every test, with the race detector; ends with every skipped test and why
# (under CI=true a skipped test fails the run). TestPostgresRestart stops the
# PostgreSQL cluster, so .ci/run runs it on its own after this.
test:
	@bash -o pipefail -c "$(GO) test -race -count=1 -timeout 25m -json -skip '^TestPostgresRestart$$' ./... 2>&1 | $(GO) run ./.ci/testsummary $(if $(filter true,$(CI)),-fail-on-skip)"

## test-short: the tests without the race detector (faster)
test-short:
	$(GO) test -count=1 ./...

## bench: the benchmarks recorded in docs/PERFORMANCE.md (PostgreSQL ones need SIP_TEST_DATABASE_URL or a local server)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./registry/
	$(GO) test -run '^$$' -bench Sync -benchtime $(BENCHTIME) ./registry/sqlite ./registry/postgres
	$(GO) test -run '^$$' -bench ListEvaluations -benchtime 1x -count 3 ./api
	$(GO) test -run '^$$' -bench PoAWFlow -benchtime 1x -count 2 ./api
	$(GO) test -run '^$$' -bench CertificationJobs -benchtime 1x -count 2 ./api
	$(GO) test -run '^$$' -bench '^BenchmarkPages$$' -benchtime 1x -count 2 ./api
	$(GO) test -run '^$$' -bench StatsPages -benchtime 1x ./api
	$(GO) test -run '^$$' -bench MessageFanout -benchtime 1x -count 2 ./api
	$(GO) test -run '^$$' -bench MCP -benchtime 1x -count 2 ./api
	$(GO) test -run '^$$' -bench PostFloor -benchtime 1x -count 2 ./registry/sqlite ./registry/postgres
	$(MAKE) bench-import
	$(GO) test -run '^$$' -bench WebhookAck -benchtime 1x ./bot
	$(GO) test -run '^$$' -bench PullRequestCheck -benchtime 10x ./bot
	$(GO) test -run '^$$' -bench . -benchtime 300x -count 3 ./registry/credential
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/sip
	$(GO) run ./registry/siptest/gensips -n 1000 .cache/sips-1k
	$(GO) run ./registry/siptest/gensips -n 10000 .cache/sips-10k
	@if command -v hyperfine >/dev/null; then \
		hyperfine -w 1 -r 5 -N './$(BIN) validate .cache/sips-1k' './$(BIN) validate .cache/sips-10k'; \
	else \
		time ./$(BIN) validate .cache/sips-10k; \
	fi
	$(GO) test -run '^$$' -bench SyncState -benchtime 20000x ./registry/sqlite
	$(GO) test -run '^$$' -bench AccessLog -benchtime 100000x ./api
	$(GO) run ./api/apitest/readbench -sip ./$(BIN) -sizes 10,50,1000
	$(MAKE) bench-validate
	$(MAKE) bench-startup

## bench-startup: how long `sip --version` and validating one file take to start and finish (target: under 8 ms),
## next to an empty Go program built the same way (the floor no Go binary can beat)
bench-startup:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/sip
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o bin/empty ./registry/siptest/empty
	@if command -v hyperfine >/dev/null; then \
		hyperfine -N -w 20 -r 200 ./bin/empty './$(BIN) --version' './$(BIN) validate evaluations/SIP-2.md'; \
	else \
		echo "bench-startup needs hyperfine (apt-get install hyperfine)"; exit 1; \
	fi

## bench-import: import a generated SafeMolt database of 100,000 agents and 1,000,000 results
# (SIP_BENCH_IMPORT_AGENTS agents, ten results each) into SQLite and into PostgreSQL, each store
# in its own process so its peak RSS is its own (needs SIP_TEST_DATABASE_URL or a local server)
SIP_BENCH_IMPORT_AGENTS ?= 100000
BENCH_IMPORT_STORES ?= plan sqlite postgres
bench-import:
	$(GO) test -c -o /tmp/sip-safemolt-bench.test ./registry/safemolt
	@for s in $(BENCH_IMPORT_STORES); do \
		SIP_BENCH_IMPORT_AGENTS=$(SIP_BENCH_IMPORT_AGENTS) /usr/bin/time -f "$$s: %M KB peak RSS, %e s wall, %U s user, %S s sys" \
			/tmp/sip-safemolt-bench.test -test.run '^$$' -test.bench "^BenchmarkImport/$$s/" -test.benchtime 1x -test.timeout 2h -test.v || exit 1; \
	done

## bench-validate: sip validate on SafeMolt's corpus x250 (7,000 files, 48 MB) in one run with its floor
## (read + yaml.v3 decode, every CPU) and its peer (gray-matter + js-yaml from npm, parse only), in turn for ROUNDS
## rounds: CPU, wall and peak RSS of each, and sip's ratios to the floor and to the peer measured in the same run
PEER_DIR := .cache/peer
ROUNDS ?= 5
bench-validate:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/sip
	$(GO) build -o bin/floor ./registry/siptest/floor
	$(GO) run ./registry/siptest/gensips -corpus registry/testdata/safemolt -times 250 .cache/corpus250
	@test -d $(PEER_DIR)/node_modules/gray-matter || (mkdir -p $(PEER_DIR) && cd $(PEER_DIR) && npm install --no-audit --no-fund --silent gray-matter@4.0.3)
	cp registry/siptest/floor/graymatter.js $(PEER_DIR)/
	$(GO) run ./registry/siptest/benchvalidate -rounds $(ROUNDS) -sip './$(BIN) validate .cache/corpus250' -floor './bin/floor .cache/corpus250' -peer 'node $(PEER_DIR)/graymatter.js .cache/corpus250'

## perfcheck: instructions of sip validate against the floor on SafeMolt's corpus x10 (callgrind: load cannot move
## them), failing when their ratio exceeds registry/siptest/perfcheck/budget.txt; RUNS=5 shows the spread
RUNS ?= 1
perfcheck:
	@command -v valgrind >/dev/null || { echo "perfcheck needs valgrind (apt-get install valgrind)"; exit 1; }
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/sip
	$(GO) build -o bin/floor ./registry/siptest/floor
	$(GO) run ./registry/siptest/gensips -corpus registry/testdata/safemolt -times 10 .cache/perfcheck
	$(GO) run ./registry/siptest/perfcheck -sip $(BIN) -floor bin/floor -corpus .cache/perfcheck -runs $(RUNS)

## fuzz: run each fuzz target for FUZZTIME (default 60s)
FUZZTIME ?= 60s
fuzz:
	@for t in FuzzParse FuzzValidate FuzzCursor FuzzKeyID FuzzOutline FuzzFastPaths FuzzCountMarkers; do \
		$(GO) test ./registry -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s || exit 1; \
	done
	@for t in FuzzParseVerdict FuzzQuoteData; do \
		$(GO) test ./registry/judge -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s || exit 1; \
	done
	$(GO) test ./bot -run '^$$' -fuzz '^FuzzEnvelope$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./bot/policy -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./registry -run '^$$' -fuzz '^FuzzBody$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./registry/internal/blob -run '^$$' -fuzz '^FuzzDecompress$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./api -run '^$$' -fuzz '^FuzzSanitize$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	@for t in FuzzJSONLogHandler FuzzJSONLogRecord FuzzAppendTime; do \
		$(GO) test ./cmd/sip -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s || exit 1; \
	done
	$(GO) test ./registry/evaluation -run '^$$' -fuzz '^FuzzDigestInput$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./registry/seal -run '^$$' -fuzz '^FuzzOpen$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s

## lint: formatting, vet, staticcheck, and the generated files being current
lint:
	@test -z "$$(gofmt -l .)" || (echo "gofmt needed:"; gofmt -l .; exit 1)
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) run ./cmd/sip index --check evaluations

## fmt: format the code
fmt:
	gofmt -w .

## index: regenerate evaluations/README.md from the SIPs
index:
	$(GO) run ./cmd/sip index evaluations

## screenshots: every web page, wide and on a phone, into docs/screenshots (needs chromium)
screenshots:
	SIP_SCREENSHOTS=$(CURDIR)/docs/screenshots $(GO) test ./cmd/sip -run '^TestBrowser$$' -count=1 -v

## docs: regenerate docs/rules.md and the golden files from the code
docs:
	$(GO) test ./registry ./registry/report -update

## release: the release archives (linux, darwin: amd64, arm64; windows: amd64), checksums and SBOM in dist/, as a snapshot of this commit
GORELEASER ?= github.com/goreleaser/goreleaser/v2@v2.15.1
release:
	$(GO) run $(GORELEASER) release --snapshot --clean --skip=publish
	$(MAKE) release-check

print-goreleaser:
	@echo $(GORELEASER)

## release-check: every archive is listed in dist/checksums.txt and matches it, and the SBOM names sip
release-check:
	cd dist && sha256sum --strict -c checksums.txt
	@for a in linux_amd64.tar.gz linux_arm64.tar.gz darwin_amd64.tar.gz darwin_arm64.tar.gz windows_amd64.zip; do \
		grep -q "_$$a\$$" dist/checksums.txt || { echo "release-check: no $$a archive in dist/checksums.txt"; exit 1; }; \
	done
	@grep -q '"name": "github.com/sipregistry/sip"' dist/*.cdx.json || { echo "release-check: the SBOM does not describe sip"; exit 1; }
	@echo "release-check: $$(wc -l < dist/checksums.txt) files match their checksums"

## image: the container image (Containerfile, on scratch) as $(IMAGE), with podman
IMAGE ?= localhost/sip:$(or $(VERSION),0.0.0-dev)
image:
	rm -rf .cache/image && mkdir -p .cache/image/data && chmod 0700 .cache/image/data
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o .cache/image/sip ./cmd/sip
	cp /etc/ssl/certs/ca-certificates.crt .cache/image/
	printf 'root:x:0:0:root:/root:/sbin/nologin\nsip:x:65532:65532:sip:/data:/sbin/nologin\n' > .cache/image/passwd
	printf 'root:x:0:\nsip:x:65532:\n' > .cache/image/group
	podman build --quiet -f Containerfile --build-arg VERSION=$(or $(VERSION),0.0.0-dev) -t $(IMAGE) .cache/image

clean:
	rm -rf bin .cache dist

## clients: regenerate the Go client (examples/sipclient) from the OpenAPI document
.PHONY: clients
clients:
	GOBIN=$(CURDIR)/.cache/bin $(GO) install github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2
	SIP_OAPI_CODEGEN=$(CURDIR)/.cache/bin/oapi-codegen $(GO) test ./examples/sipclient -run '^TestGeneratedClientIsCurrent$$' -count=1 -update
