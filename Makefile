# The two commands a newcomer needs: `make run` and `make test`.
# Everything else is for people working on sip itself.

GO        ?= go
BIN       := bin/sip
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
BENCHTIME ?= 5x

.PHONY: all build run test test-short bench fuzz lint fmt index docs screenshots clean

all: lint test build

## build: compile bin/sip
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/sip

## run: build sip and serve the bundled SIPs on the embedded SQLite default
ADDR ?= 127.0.0.1:8080
run: build
	@./$(BIN) validate evaluations
	@echo "Serving; stop with Ctrl-C. Database: $${SIP_DATABASE_URL:-$${XDG_DATA_HOME:-$$HOME/.local/share}/sip/registry.db}"
	./$(BIN) serve --addr $(ADDR) --log-format text

## test: every test, with the race detector
test:
	$(GO) test -race -count=1 ./...

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
	$(GO) test -run '^$$' -bench PostFloor -benchtime 1x -count 2 ./registry/sqlite ./registry/postgres
	$(GO) test -run '^$$' -bench WebhookAck -benchtime 1x ./bot
	$(GO) test -run '^$$' -bench PullRequestCheck -benchtime 10x ./bot
	$(GO) test -run '^$$' -bench . -benchtime 300x -count 3 ./registry/credential
	$(GO) build -o $(BIN) ./cmd/sip
	$(GO) run ./registry/siptest/gensips -n 1000 .cache/sips-1k
	$(GO) run ./registry/siptest/gensips -n 10000 .cache/sips-10k
	@if command -v hyperfine >/dev/null; then \
		hyperfine -w 1 -r 5 -N './$(BIN) validate .cache/sips-1k' './$(BIN) validate .cache/sips-10k'; \
	else \
		time ./$(BIN) validate .cache/sips-10k; \
	fi
	$(GO) test -run '^$$' -bench SyncState -benchtime 20000x ./registry/sqlite
	$(GO) test -run '^$$' -bench AccessLog -benchtime 100000x ./api
	$(GO) run ./tools/readbench -sip ./$(BIN) -sizes 10,50,1000

## fuzz: run each fuzz target for FUZZTIME (default 60s)
FUZZTIME ?= 60s
fuzz:
	@for t in FuzzParse FuzzValidate FuzzCursor FuzzKeyID; do \
		$(GO) test ./registry -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s || exit 1; \
	done
	@for t in FuzzParseVerdict FuzzQuoteData; do \
		$(GO) test ./registry/judge -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s || exit 1; \
	done
	$(GO) test ./bot -run '^$$' -fuzz '^FuzzEnvelope$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./bot/policy -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./registry -run '^$$' -fuzz '^FuzzBody$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./registry/internal/blob -run '^$$' -fuzz '^FuzzDecompress$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
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

clean:
	rm -rf bin .cache

## clients: regenerate the Go client (examples/sipclient) from the OpenAPI document
.PHONY: clients
clients:
	GOBIN=$(CURDIR)/.cache/bin $(GO) install github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2
	SIP_OAPI_CODEGEN=$(CURDIR)/.cache/bin/oapi-codegen $(GO) test ./examples/sipclient -run '^TestGeneratedClientIsCurrent$$' -count=1 -update
