# Carrier. `make run` starts it on the embedded sandbox; `make test` runs
# every test. Both install what they need first.

GO        ?= go
export PATH := $(PATH):/usr/local/go/bin:$(HOME)/go/bin
BIN       := bin/carrier
# System packages: what building Carrier needs (cgo and Fyne's OpenGL
# driver), and what the tests add (a virtual X server, a drag source,
# screenshots).
RUN_PKGS  := gcc pkg-config libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev \
             libxi-dev libxxf86vm-dev libwayland-dev libxkbcommon-dev
TEST_PKGS := $(RUN_PKGS) curl xvfb xdotool imagemagick python3-gi gir1.2-gtk-3.0 dbus-daemon python3-dbusmock
FUZZTIME  ?= 30s

.PHONY: all build run test test-desktop test-keyring deps-run deps-test vet fmt-check bench soak fuzz package clean

all: build

deps-run:
	@scripts/deps.sh $(RUN_PKGS)

deps-test:
	@scripts/deps.sh $(TEST_PKGS)
	$(GO) mod download

build: deps-run
	$(GO) build -o $(BIN) .

# Opens Carrier's window on the embedded sandbox in the user's data folder.
run: build
	./$(BIN)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

test: deps-test fmt-check vet
	$(GO) test -race -timeout 15m ./...
	@$(MAKE) --no-print-directory test-desktop
	@$(MAKE) --no-print-directory test-keyring

# The real binary under a virtual X server: a file dragged from another
# program onto the window is sent; screenshots go to artifacts/screenshots.
test-desktop: build
	python3 scripts/e2e_desktop.py $(BIN)

# Sign-in against a real Secret Service: a private D-Bus session, an
# unlocked gnome-keyring-daemon and a scratch HOME that is then searched for
# tokens (scripts/test-keyring.sh installs what it needs).
test-keyring:
	GO="$(GO)" scripts/test-keyring.sh

# docs/PERFORMANCE.md and docs/performance.png (go run ./bench: the same
# file uploaded by curl, carrier upload and the official Go client to the
# sandbox, durable and with --fsync=false; about 15 minutes for 1 GiB; its
# flags through BENCHFLAGS, e.g. BENCHFLAGS="-size 64MiB -rounds 1"), then
# the packages' Go micro-benchmarks.
bench: deps-test
	GO="$(GO)" $(GO) run ./bench -out docs $(BENCHFLAGS)
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The reliability soak of docs/RELIABILITY.md (go run ./soak: uploads under
# faults, kill -9 and resume of the real binary, sandbox restarts, wake
# latency; its flags through SOAKFLAGS, e.g. SOAKFLAGS="-uploads 50"), then
# the packages' own soak tests made longer: CARRIER_SOAK is an upload count
# for transfer's and an on-switch for sandbox's. Both steps always run.
soak: deps-test
	$(GO) build -o $(BIN) .
	st=0; $(GO) run ./soak -bin $(BIN) -json artifacts/soak.json $(SOAKFLAGS) || st=1; \
	CARRIER_SOAK=200 $(GO) test -race -timeout 60m -run 'Soak' -v ./... || st=1; exit $$st

fuzz: deps-test
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

# A desktop package (Carrier.tar.xz on Linux: binary, icon, .desktop file)
# built by the fyne tool from FyneApp.toml.
package: deps-run
	$(GO) tool fyne package -os $$($(GO) env GOOS) --release
	@ls -l Carrier.* 2>/dev/null || true

clean:
	rm -rf bin artifacts
