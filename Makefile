# Carrier. `make run` starts it on the embedded sandbox; `make test` runs
# every test. Both install what they need first.

GO        ?= go
export PATH := $(PATH):/usr/local/go/bin:$(HOME)/go/bin
BIN       := bin/carrier
# System packages: what building Carrier needs, and what the tests add.
RUN_PKGS  := gcc
TEST_PKGS := $(RUN_PKGS) curl
FUZZTIME  ?= 30s

.PHONY: all build run test deps-run deps-test vet fmt-check bench soak fuzz clean

all: build

deps-run:
	@scripts/deps.sh $(RUN_PKGS)

deps-test:
	@scripts/deps.sh $(TEST_PKGS)
	$(GO) mod download

build: deps-run
	$(GO) build -o $(BIN) .

# Starts Carrier on the embedded sandbox in the user's data folder.
run: build
	./$(BIN) sandbox

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

test: deps-test fmt-check vet
	$(GO) test -race -timeout 15m ./...

bench: deps-test
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Longer runs of the fault soaks; sizes are set through the environment.
soak: deps-test
	CARRIER_SOAK=1 $(GO) test -race -timeout 60m -run 'Soak' -v ./...

fuzz: deps-test
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

clean:
	rm -rf bin
