# Carrier. `make run` starts it on the embedded sandbox; `make test` runs
# every test. Both install what they need first.

GO        ?= go
export PATH := $(PATH):/usr/local/go/bin:$(HOME)/go/bin
BIN       := bin/carrier
# The desktop tests run the release binary, the one the packages hold
# (scripts/release/linux.sh --binary), not a build of their own.
REL_OUT   := artifacts/release
REL_BIN   := $(REL_OUT)/carrier
# System packages: what building Carrier needs (cgo and Fyne's OpenGL
# driver), and what the tests add (a virtual X server, a drag source,
# screenshots, a window closed as a window manager closes it).
RUN_PKGS  := gcc pkg-config libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev \
             libxi-dev libxxf86vm-dev libwayland-dev libxkbcommon-dev
TEST_PKGS := $(RUN_PKGS) curl xvfb xdotool imagemagick python3-gi gir1.2-gtk-3.0 dbus-daemon python3-dbusmock python3-xlib \
             libglib2.0-bin shared-mime-info \
             $(DEB_PKGS)
# The Debian package: built by dpkg-deb with its dependencies from
# dpkg-shlibdeps (dpkg-dev), checked by desktop-file-utils and appstream.
DEB_PKGS  := dpkg-dev desktop-file-utils appstream
FUZZTIME  ?= 30s
# Windows from this Linux: tests under Wine, the app cross-built with
# mingw-w64, the installer built by wixl (scripts/windows/).
WIN_PKGS  := wine64 gcc-mingw-w64-x86-64 msitools wixl curl xvfb xdotool imagemagick
WIN_OUT   := artifacts/windows
WIN_ENV   := GOOS=windows GOARCH=amd64 CGO_ENABLED=1 CC=x86_64-w64-mingw32-gcc

.PHONY: all build release-bin run test test-desktop test-desktop-open test-desktop-fa test-accounts test-media test-package test-keyring test-windows deps-run deps-test deps-windows deps-deb vet vet-cross fmt-check bench bench-cpu soak fuzz \
        package package-windows build-windows clean bench-net bench-net-serialized bench-photos bench-scale demo-accounts demo-photos mutation mutation-delivery

all: build

deps-run:
	@scripts/deps.sh $(RUN_PKGS)

deps-test:
	@scripts/deps.sh $(TEST_PKGS)
	$(GO) mod download

deps-windows:
	@scripts/deps.sh $(WIN_PKGS)

deps-deb:
	@scripts/deps.sh $(DEB_PKGS)

build: deps-run
	$(GO) build -o $(BIN) .

# The Linux release binary alone (what Carrier.tar.xz and Carrier.deb hold).
release-bin: deps-run
	GO="$(GO)" scripts/release/linux.sh --binary $(REL_OUT)

# Opens Carrier's window on the embedded sandbox in the user's data folder.
run: build
	./$(BIN)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Every package but main builds and vets for Windows and macOS as well
# (without cgo; ui needs cgo on macOS, where Fyne's own files use it).
vet-cross:
	GOOS=windows CGO_ENABLED=0 $(GO) vet $$($(GO) list ./... | grep -vx carrier)
	GOOS=darwin CGO_ENABLED=0 $(GO) vet $$($(GO) list ./... | grep -vx 'carrier\|carrier/ui')
	GOOS=freebsd CGO_ENABLED=0 $(GO) vet $$($(GO) list ./... | grep -vx 'carrier\|carrier/ui')
	GOOS=openbsd CGO_ENABLED=0 $(GO) vet $$($(GO) list ./transfer ./internal/...)

test: deps-test fmt-check vet vet-cross
	$(GO) test -race -timeout 15m ./...
	@$(MAKE) --no-print-directory test-desktop
	@$(MAKE) --no-print-directory test-desktop-open
	@$(MAKE) --no-print-directory test-desktop-fa
	@$(MAKE) --no-print-directory test-accounts
	@$(MAKE) --no-print-directory test-media
	@$(MAKE) --no-print-directory test-package
	@$(MAKE) --no-print-directory test-keyring
	@$(MAKE) --no-print-directory test-windows

# The real binary under a virtual X server: a file dragged from another
# program onto the window is sent; screenshots go to artifacts/screenshots.
test-desktop: release-bin
	/usr/bin/python3 scripts/e2e_desktop.py $(REL_BIN)

# Send from wherever the file is (issue 30): the desktop entry installed in
# scratch XDG folders and registered with gio (mailto and file types), a
# mail link as xdg-email hands it opened by gio fills Compose and goes
# with its file; a second `carrier a.pdf b.jpg` hands both to the open
# window and exits 0 within a second. About 10 s.
test-desktop-open: release-bin
	/usr/bin/python3 scripts/e2e_open.py $(REL_BIN)

# A folder of 40 pictures and a 128 MiB video dragged onto the Media
# screen from another program, posted into a new album: the sandbox's
# Photos must hold exactly those 41 files, byte for byte; screenshots under
# way and done in artifacts/screenshots/media-*.png. About 40 s.
test-media: release-bin
	/usr/bin/python3 scripts/e2e_media.py $(REL_BIN)

# The same binary started in Persian (LANGUAGE=fa), both themes: every
# screen photographed to artifacts/screenshots/fa-*.png, to be looked at.
test-desktop-fa: release-bin
	/usr/bin/python3 scripts/e2e_persian.py $(REL_BIN)

# The Google set-up assistant walked in the real window (about 60 s): the
# embedded sandbox stands in for Google (CARRIER_SANDBOX_SIGNIN=1), a
# gnome-keyring on a private bus keeps the sign-in; a broken file and a
# web client's JSON are refused in words read back from the window, the
# sandbox's client signs in through its consent page, and the account is
# listed; then a message with a Drive link, its account signed out
# ("Keep them waiting") and in again mid-upload, goes once. Screenshots in
# artifacts/screenshots/accounts-*.png.
test-accounts: release-bin
	@scripts/deps.sh xvfb xdotool imagemagick python3-gi gir1.2-gtk-3.0 dbus-daemon gnome-keyring
	/usr/bin/python3 scripts/e2e_accounts.py $(REL_BIN)

# What Carrier ships for Linux (scripts/release/linux.sh: the release
# binary built by the fyne tool, Carrier.tar.xz and Carrier.deb around it,
# exactly as make package builds them), installed as a person installs them
# and then used (scripts/release/test-linux.sh): the tarball's make install
# into a scratch prefix and the .deb's dpkg -i, each installed carrier
# saying its version, serving the sandbox, sending a message with an
# attachment that arrives once, opening its window on a virtual X server
# (screenshots artifacts/screenshots/release-*.png); then make uninstall and
# dpkg -r, which leave no program file and keep the person's data.
test-package: deps-test
	GO="$(GO)" scripts/release/linux.sh $(REL_OUT)
	scripts/release/test-linux.sh $(REL_OUT)

# Sign-in against a real Secret Service: a private D-Bus session, an
# unlocked gnome-keyring-daemon and a scratch HOME that is then searched for
# tokens (scripts/test-keyring.sh installs what it needs).
test-keyring:
	GO="$(GO)" scripts/test-keyring.sh

# Windows: every package's tests built for Windows and run under Wine in a
# private prefix (scripts/windows/test.sh; logs in artifacts/windows/logs),
# then what ships: Carrier.exe and Carrier.msi built exactly as make
# package builds them (scripts/windows/release.sh), the exe's DLL imports
# checked against what Windows has (scripts/windows/imports.sh), and the
# .msi installed with msiexec in a fresh prefix, the installed exe run as a
# command (its version; a send through its embedded sandbox; carrier
# sandbox, send, kill -9 of an upload and two resumes at once:
# scripts/windows/test-cli.sh) and uninstalled, the person's data kept
# (scripts/windows/test-msi.sh). The window is tested on the same release
# build without -tags accessibility, since Wine 8.0 aborts on a UI
# Automation call it lacks (UiaRaiseStructureChangedEvent): a message typed
# and sent, screenshots in artifacts/screenshots/windows-*.png
# (scripts/windows/test-window.sh).
test-windows: deps-windows
	GO="$(GO)" scripts/windows/test.sh
	GO="$(GO)" scripts/windows/release.sh $(WIN_OUT)/release
	scripts/windows/imports.sh $(WIN_OUT)/release/Carrier.exe
	scripts/windows/test-msi.sh $(WIN_OUT)/release/Carrier.msi $(WIN_OUT)/release/Carrier.exe
	@$(MAKE) --no-print-directory build-windows
	scripts/windows/imports.sh $(WIN_OUT)/window/Carrier.exe
	scripts/windows/test-window.sh $(WIN_OUT)/window/Carrier.exe

# The release build for Windows without -tags accessibility, which the
# window test runs under Wine 8.0 (see test-windows).
build-windows: deps-windows
	GO="$(GO)" scripts/windows/release.sh $(WIN_OUT)/window ""

# docs/PERFORMANCE.md and docs/performance.png (go run ./bench: the same
# file uploaded by curl, carrier upload and the official Go client to the
# sandbox, durable and with --fsync=false; about 15 minutes for 1 GiB; its
# flags through BENCHFLAGS, e.g. BENCHFLAGS="-size 64MiB -rounds 1"), then
# the packages' Go micro-benchmarks, then bench-net. The bench run ends with
# the CPU part (issue 16): CPU-seconds per GiB beside curl and the official
# client for Storage and Drive, composing a message with a 25 MiB
# attachment, and the desktop app at rest against a bare Fyne window under
# Xvfb. `make bench-cpu` runs that part alone (about 5 minutes) and replaces
# only its section of docs/PERFORMANCE.md; its flags through BENCHFLAGS too.
bench: deps-test
	GO="$(GO)" $(GO) run ./bench -out docs $(BENCHFLAGS)
	$(GO) test -run '^$$' -bench . -benchmem ./...
	@$(MAKE) --no-print-directory bench-net
	@$(MAKE) --no-print-directory bench-scale

# Issue 13's and 33's network figures (go run ./bench/netbench, about 20
# minutes), each case replacing its own section of docs/PERFORMANCE.md:
# through Shopify's toxiproxy, progress truth (rate, ETA, "sent" against
# what the sandbox holds) through a slow buffering link and the flaky link
# (every connection reset every 4 s) against the undisturbed one; a silent
# blackhole (-blackhole, a private network namespace); NetworkManager
# saying online after an offline spell (-nm-online) and a Wi-Fi switch
# (-wifi-switch), the carrier binary on a private D-Bus bus with
# python-dbusmock's NetworkManager; the flaky link for Carrier beside a
# paced reference client and curl (-reference). Flags through
# NETBENCHFLAGS (given to every case).
bench-net:
	@scripts/deps.sh dbus-daemon python3-dbusmock curl iproute2
	$(GO) run ./bench/netbench -out docs/PERFORMANCE.md -rounds 3 $(NETBENCHFLAGS)
	$(GO) run ./bench/netbench -out docs/PERFORMANCE.md -blackhole 20s -rounds 3 $(NETBENCHFLAGS)
	GO="$(GO)" $(GO) run ./bench/netbench -out docs/PERFORMANCE.md -nm-online 20s -rounds 3 $(NETBENCHFLAGS)
	GO="$(GO)" $(GO) run ./bench/netbench -out docs/PERFORMANCE.md -wifi-switch -rounds 3 $(NETBENCHFLAGS)
	$(GO) run ./bench/netbench -out docs/PERFORMANCE.md -reference -size 64MiB -rate 4000 -latency 80 -rounds 3 $(NETBENCHFLAGS)

# Issue 33's dead-path cases (the blackhole, NetworkManager's online, the
# Wi-Fi switch) against a sandbox that serialises each session's requests
# (-serialize: a status query waits behind a stalled request, up to its
# 2-minute body timeout), each into its own section beside the default's.
# About 25 minutes: the Wi-Fi switch waits out that timeout every round.
bench-net-serialized:
	@scripts/deps.sh dbus-daemon python3-dbusmock iproute2
	$(GO) run ./bench/netbench -out docs/PERFORMANCE.md -blackhole 20s -serialize -rounds 3 $(NETBENCHFLAGS)
	GO="$(GO)" $(GO) run ./bench/netbench -out docs/PERFORMANCE.md -nm-online 20s -serialize -rounds 3 $(NETBENCHFLAGS)
	GO="$(GO)" $(GO) run ./bench/netbench -out docs/PERFORMANCE.md -wifi-switch -serialize -rounds 3 $(NETBENCHFLAGS)

# Issue 29's scale part (go run ./bench/scale, about 10 minutes): the built
# binary posts 200, 2,000 and 20,000 small generated pictures to a sandbox
# of its own, each from a fresh state folder, then the same folder again;
# wall, CPU and peak RSS of the carrier process, journal size, requests per
# file, `carrier jobs --all`, and the window's start-up over 20,000 finished
# jobs (the ui package's CARRIER_MEASURE test); its section of
# docs/PERFORMANCE.md is replaced, the goals beside the figures. Flags
# through SCALEFLAGS, e.g. SCALEFLAGS="-counts 200,2000".
bench-scale:
	GO="$(GO)" $(GO) run ./bench/scale -out docs/PERFORMANCE.md $(SCALEFLAGS)

# Mutation testing of transfer/ (scripts/mutation; not in make test): small
# deliberate bugs put in the package's files one at a time, through go's
# -overlay (the tree is never changed), each run against the tests of its
# file (scripts/mutation/transfer.runs); prints the score per file and the
# mutants that lived. Go alone is needed. By default the engine's edge
# files, 10 mutants of each (a little over an hour on two busy cores);
# MUTATION_FILES= (empty) for every file, MUTATIONFLAGS for -sample,
# -workers, -base COMMIT (the tests as they were then), -prior LOG.
MUTATION_FILES ?= acked.go,checksum.go,deps.go,errors.go,events.go,googupload.go,http.go,limit.go,intake.go,jobs.go,minspeed.go,oneshot.go,readrecord.go,resumable.go,source.go,knock.go,usefile.go,answer.go
MUTATIONFLAGS  ?= -sample 10 -timeout-factor 3 -min-timeout 20s
mutation:
	$(GO) run ./scripts/mutation -pkg ./transfer -runs scripts/mutation/transfer.runs \
		-equivalent scripts/mutation/transfer.equivalent -files "$(MUTATION_FILES)" $(MUTATIONFLAGS)

# The same for internal/delivery (every file; its tests take seconds, so
# each file runs them all: scripts/mutation/delivery.runs).
mutation-delivery:
	$(GO) run ./scripts/mutation -pkg ./internal/delivery -runs scripts/mutation/delivery.runs \
		-equivalent scripts/mutation/delivery.equivalent $(MUTATIONFLAGS)

bench-cpu: deps-test
	GO="$(GO)" $(GO) run ./bench -cpu-only -out docs $(BENCHFLAGS)

# Issue 19's Photos part alone: a 1 GiB video to the sandbox's Google Photos
# by `carrier photos` beside the same file to Cloud Storage; replaces its
# section of docs/PERFORMANCE.md.
bench-photos:
	GO="$(GO)" $(GO) run ./bench -photos-only -out docs $(BENCHFLAGS)

# Issue 19's Show (go run ./soak/photosdemo, a few minutes; not in make
# test): the built binary posts 40 pictures and a 2 GiB video into a new
# album of the embedded sandbox, is killed with -9 during the video and
# again with batchCreate's answer unread, sleeps and wakes through a
# simulated logind (python-dbusmock on a private system bus), and is
# resumed; the album is then checked through the sandbox's Photos API
# (exactly 41 items, bytes identical to the files') and the bytes that
# arrived are set against the files'. Its flags through DEMOFLAGS, e.g.
# DEMOFLAGS="-video-size 268435456 -keep". Figures: docs/RELIABILITY.md.
demo-photos: build
	@scripts/deps.sh dbus-daemon python3-dbusmock
	$(GO) run ./soak/photosdemo -bin $(BIN) $(DEMOFLAGS)

# The reliability soak of docs/RELIABILITY.md (go run ./soak: uploads under
# faults, the same through toxiproxy's faults, kill -9 and resume of the
# real binary, sandbox restarts, wake latency; its flags through SOAKFLAGS, e.g. SOAKFLAGS="-uploads 50"), then
# the packages' own soak tests made longer: CARRIER_SOAK is an upload count
# for transfer's and an on-switch for sandbox's. Both steps always run.
soak: deps-test
	$(GO) build -o $(BIN) .
	st=0; $(GO) run ./soak -bin $(BIN) -json artifacts/soak.json $(SOAKFLAGS) || st=1; \
	CARRIER_SOAK=200 $(GO) test -race -timeout 60m -run 'Soak' -v ./... || st=1; exit $$st

# Issue 20's first Show, measured (go run ./soak/accounts, not in make
# test; a few minutes): the real binary uploads a 2 GiB file to the
# sandbox's Drive with 30 s access tokens, the refresh token is revoked
# part way, the job must park (exit 4, no retry spent), `carrier login` and
# `carrier resume` must finish it on the same session with at most 1.01x
# the file on the wire; with the session-needs-token switch off and on,
# and with a kill -9 of the resume holding the parked job. It runs in a
# private D-Bus session with its own gnome-keyring (soak/accounts/run.sh).
# Its table goes in docs/RELIABILITY.md by hand; flags through DEMOFLAGS.
demo-accounts:
	$(GO) build -o $(BIN) .
	$(GO) build -o bin/demo-accounts ./soak/accounts
	soak/accounts/run.sh bin/demo-accounts -bin $(BIN) $(DEMOFLAGS)

fuzz: deps-test
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

# What Carrier ships, in dist/: Carrier.tar.xz and Carrier.deb (the Linux
# release binary, scripts/release/linux.sh), Carrier.msi (the release
# Carrier.exe with -tags accessibility, scripts/windows/release.sh) and
# SHA256SUMS. The same scripts build what make test installs and runs
# (test-package, test-windows); here each is checked without installing.
# Packaging leaves the tree as it was (the fyne tool's rewrite of
# FyneApp.toml is undone), so two runs stamp the same version and build.
package: deps-run deps-deb deps-windows
	GO="$(GO)" scripts/release/linux.sh dist
	scripts/deb/test.sh --no-install dist/Carrier.deb
	GO="$(GO)" scripts/windows/release.sh dist
	scripts/windows/imports.sh dist/Carrier.exe
	scripts/windows/test-msi.sh --no-install dist/Carrier.msi dist/Carrier.exe
	cd dist && sha256sum Carrier.tar.xz Carrier.deb Carrier.msi >SHA256SUMS && cat SHA256SUMS

package-windows: deps-windows
	GO="$(GO)" scripts/windows/release.sh dist
	scripts/windows/imports.sh dist/Carrier.exe
	scripts/windows/test-msi.sh --no-install dist/Carrier.msi dist/Carrier.exe

clean:
	rm -rf bin artifacts dist
