#!/usr/bin/env bash
# Builds what Carrier ships for Windows into OUT:
# scripts/windows/release.sh OUT [TAGS]. OUT/Carrier.exe is built by the
# fyne tool (`fyne package -os windows --release`: the icon, version and
# manifest in the exe, GUI subsystem, stripped, hardened C flags) with mingw,
# TAGS its build tags (default accessibility, what ships; the window test
# under Wine 8 builds it with none, since Wine 8 lacks the UI Automation
# call that tag makes); OUT/Carrier.msi is scripts/windows/package.sh around
# it. The fyne tool rewrites FyneApp.toml (it counts builds up); the file
# is put back as it was, so a release leaves the tree clean and stamps the
# same version and build every time.
#
# The hardened C code (-fstack-protector-strong, _FORTIFY_SOURCE) calls
# libssp, which Windows does not have: mingw's libssp.a is linked into the
# exe, never its import library for libssp-0.dll. scripts/windows/imports.sh
# checks every DLL the exe names is one Windows has.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 OUT [TAGS]" >&2; exit 2; }
out=$(realpath -m "$1")
tags=${2-accessibility}
root=$(cd "$(dirname "$0")/../.." && pwd)
GO=${GO:-go}
cd "$root"
mkdir -p "$out" bin
"$GO" build -o bin/fyne fyne.io/tools/cmd/fyne # built for this host, then run with mingw's CC
ssp=$(x86_64-w64-mingw32-gcc -print-file-name=libssp.a)
[ -f "$ssp" ] || { echo "mingw has no libssp.a ($ssp)" >&2; exit 1; }
saved=$(mktemp)
cp -p FyneApp.toml "$saved"
trap 'cp -p "$saved" FyneApp.toml; rm -f "$saved" Carrier.exe' EXIT
rm -f Carrier.exe
CC=x86_64-w64-mingw32-gcc CGO_LDFLAGS="$ssp" bin/fyne package -os windows --release ${tags:+--tags "$tags"}
mv Carrier.exe "$out/Carrier.exe"
GO="$GO" scripts/windows/package.sh "$out/Carrier.exe" "$out/Carrier.msi"
