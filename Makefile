# Targets CI runs. `make test` is the README's test command.
GO ?= go
STATICCHECK_VERSION ?= v0.8.2
PG_URL ?= postgres://postgres@127.0.0.1:5432/test
REDIS_URL ?= redis://127.0.0.1:6379/0

.PHONY: test test-services test-twilio-sdks lint verify run build staticcheck bench

run:
	$(GO) run ./cmd/msgsvc dev

build:
	$(GO) build -o bin/msgsvc ./cmd/msgsvc

test:
	$(GO) test -race -count=1 -timeout 30m ./...

# The suites that need PostgreSQL and Redis (see .ci/run, which starts them).
test-services:
	MSGSVC_TEST_POSTGRES_URL=$(PG_URL) MSGSVC_TEST_REDIS_URL=$(REDIS_URL) \
		$(GO) test -race -count=1 -timeout 40m ./internal/store/... ./internal/intake/... ./internal/dispatch/... ./internal/tracking/... ./internal/message/... \
		./internal/compliance/... ./internal/media/... ./internal/template/... ./internal/app/... ./internal/e2e/... ./internal/ratelimit/...

# Twilio's own SDKs (twilio-go from go.mod, npm's twilio) against the Twilio
# front, directly and through Prism validating every answer against Twilio's
# document (../shared/peers/twilio). npm installs them into a cache folder.
TWILIO_SDK_CACHE ?= $(HOME)/.cache/msgsvc/twilio-sdks
test-twilio-sdks:
	mkdir -p $(TWILIO_SDK_CACHE)
	npm install --no-audit --no-fund --prefix $(TWILIO_SDK_CACHE) twilio@6.2.0 @stoplight/prism-cli@5.16.0 >$(TWILIO_SDK_CACHE).npm.log 2>&1 \
		|| { cat $(TWILIO_SDK_CACHE).npm.log; exit 1; }
	MSGSVC_TEST_TWILIO_NODE=$(TWILIO_SDK_CACHE)/node_modules MSGSVC_TEST_PRISM=$(TWILIO_SDK_CACHE)/node_modules/.bin/prism \
		MSGSVC_TEST_POSTGRES_URL=$(PG_URL) $(GO) test -race -count=1 -timeout 10m -run '^TestTwilio(Go|Node)SDK' -v ./internal/app/

staticcheck:
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd client && $(GO) vet ./...
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...
	cd client && PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...

# Nothing in the tree is generated yet (SQL is hand-written, the OpenAPI
# document is hand-written and checked against the routes by tests); verify
# that the module graph is intact and everything builds.
verify:
	$(GO) mod verify
	$(GO) build ./...
	cd client && $(GO) build ./...

# The benchmark of docs/benchmarks.md (a node on a temporary SQLite database).
bench: build
	./bin/msgsvc bench --n 20000 --c 32
