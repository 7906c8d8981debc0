#!/usr/bin/env bash
# Runs every package's tests built for Windows (GOOS=windows, no cgo) under
# Wine, in a private prefix (artifacts/windows/_prefix); logs go to
# artifacts/windows/logs/PACKAGE.log. Usage: scripts/windows/test.sh
# [PACKAGE...] (default: every package with tests). Needs wine64 and
# gcc-mingw-w64-x86-64 (make test-windows installs them).
#
# Two gaps of Debian's Wine 8.0 are filled here, for the tests only:
#  - Go 1.24 and later load ProcessPrng from bcryptprimitives.dll at start,
#    which Wine 8.0 lacks: processprng.c builds one (through RtlGenRandom)
#    into the prefix's system32.
#  - Go 1.26's os.RemoveAll deletes through FileDispositionInformationEx,
#    which Wine 8.0 answers with STATUS_NOT_IMPLEMENTED where Windows before
#    10 1607 answers STATUS_INVALID_INFO_CLASS; Go falls back to the older
#    call only on the latter, so every t.TempDir cleanup failed. The test
#    binaries are built with an -overlay of the standard library's
#    internal/syscall/windows/at_windows.go that takes the fallback on
#    Wine's answers too: the cleanups really run and really delete, the
#    tests are unchanged, and the app is never built with it.
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go}
OUT=${WINDOWS_OUT:-$PWD/artifacts/windows}
WINE=${WINE:-$(command -v wine64 || echo /usr/lib/wine/wine64)}
WINESERVER=${WINESERVER:-$(command -v wineserver || echo /usr/lib/wine/wineserver)}
TIMEOUT=${WINDOWS_TEST_TIMEOUT:-10m}
mkdir -p "$OUT/bin" "$OUT/logs" "$OUT/_overlay" # _: go list ./... skips them
export WINEPREFIX="$OUT/_prefix" WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree=;mshtml="
unset DISPLAY WAYLAND_DISPLAY # headless: no test opens a window

t0=$SECONDS
if [ ! -f "$WINEPREFIX/system.reg" ]; then
	echo "wine: making the prefix $WINEPREFIX"
	"$WINE" wineboot -i >"$OUT/logs/wineboot.log" 2>&1
	"$WINESERVER" -w
fi
dll="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -f "$dll" ] || [ scripts/windows/processprng.c -nt "$dll" ]; then
	x86_64-w64-mingw32-gcc -shared -O2 -o "$OUT/bcryptprimitives.dll" \
		scripts/windows/processprng.c scripts/windows/processprng.def -ladvapi32
	cp "$OUT/bcryptprimitives.dll" "$dll"
fi

overlay=()
at="$("$GO" env GOROOT)/src/internal/syscall/windows/at_windows.go"
pattern=$'^\tcase STATUS_INVALID_INFO_CLASS, // the operating system doesn.t support FileDispositionInformationEx$'
if [ -f "$at" ] && grep -q "$pattern" "$at"; then
	sed "s|$pattern|\tcase NTStatus(0xC0000002), NTStatus(0xC0000010), STATUS_INVALID_INFO_CLASS, // and Wine 8.0's STATUS_NOT_IMPLEMENTED, STATUS_INVALID_DEVICE_REQUEST|" \
		"$at" >"$OUT/_overlay/at_windows.go"
	printf '{"Replace":{"%s":"%s"}}\n' "$at" "$OUT/_overlay/at_windows.go" >"$OUT/_overlay/overlay.json"
	overlay=(-overlay "$OUT/_overlay/overlay.json")
else
	echo "wine: $at no longer has the line the overlay patches; building without it (t.TempDir cleanups may fail under Wine)" >&2
fi
echo "wine: prefix ready in $((SECONDS - t0)) s"

if [ $# -eq 0 ]; then
	set -- ./...
fi
# The app itself (package main, "carrier") imports Fyne, which needs cgo:
# these test binaries are built without it, so it is left out here; the
# Windows app is the release exe that make test-windows builds, installs
# and runs.
set -- $(GOOS=windows CGO_ENABLED=0 "$GO" list -e -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' "$@" 2>/dev/null | grep -vx carrier)

status=0
summary=()
for pkg in "$@"; do
	name=${pkg//\//_}
	exe="$OUT/bin/$name.test.exe"
	log="$OUT/logs/$name.log"
	t1=$SECONDS
	if ! GOOS=windows GOARCH=amd64 CGO_ENABLED=0 "$GO" test "${overlay[@]}" -c -o "$exe" "$pkg" >"$log" 2>&1; then
		cat "$log"
		summary+=("BUILD FAILED $pkg")
		status=1
		continue
	fi
	built=$((SECONDS - t1))
	dir=$("$GO" list -f '{{.Dir}}' "$pkg")
	# As go test does: in the package's folder, so testdata/ is found.
	rc=0
	(cd "$dir" && "$WINE" "$exe" -test.v -test.timeout "$TIMEOUT" ${WINDOWS_TEST_FLAGS:-}) >>"$log" 2>&1 || rc=$?
	pass=$(grep -c -- '--- PASS' "$log" || true)
	fail=$(grep -c -- '--- FAIL' "$log" || true)
	skip=$(grep -c -- '--- SKIP' "$log" || true)
	line="$pkg: $pass passed, $fail failed, $skip skipped, subtests counted (built in ${built} s, ran in $((SECONDS - t1 - built)) s)"
	if [ "$rc" -ne 0 ]; then
		line="FAIL $line, exit $rc"
		status=1
		grep -E -- '--- FAIL|^panic|FAIL|timed out' "$log" | head -40 || true
	fi
	summary+=("$line")
	grep -B1 -- '--- SKIP' "$log" | grep -v -- '^--$' | sed 's/^/    /' || true
done
"$WINESERVER" -k 2>/dev/null || true
echo "== Windows tests under Wine ($((SECONDS - t0)) s; logs in $OUT/logs)"
printf '%s\n' "${summary[@]}"
exit $status
