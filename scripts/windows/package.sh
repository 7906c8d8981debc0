#!/usr/bin/env bash
# Builds Carrier's Windows installer around a Windows build of Carrier:
# scripts/windows/package.sh CARRIER.EXE OUT.msi. The icon comes from
# assets/icon.png, the version from FyneApp.toml; the Simple MAPI DLL
# (carriermapi.dll, Carrier as the mail client of "Send by email") is
# built here from scripts/windows/mapi with mingw; the package is
# scripts/windows/carrier.wxs, built by wixl (Debian's msitools).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 CARRIER.EXE OUT.msi" >&2; exit 2; }
exe=$(realpath "$1")
out=$(realpath -m "$2")
root=$(cd "$(dirname "$0")/../.." && pwd)
GO=${GO:-go}
version=$(sed -n 's/^Version *= *"\(.*\)"/\1/p' "$root/FyneApp.toml")
[ -n "$version" ] || { echo "no Version in FyneApp.toml" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && "$GO" run ./scripts/windows/mkico assets/icon.png "$work/carrier.ico")
# wixl takes sources by names relative to the .wxs file only.
ln -s "$exe" "$work/Carrier.exe"
x86_64-w64-mingw32-gcc -shared -O2 -Wall -Werror -s -o "$work/carriermapi.dll" \
	"$root/scripts/windows/mapi/carriermapi.c" "$root/scripts/windows/mapi/carriermapi.def"
"$root/scripts/windows/imports.sh" "$work/carriermapi.dll" >/dev/null
cp "$root/scripts/windows/carrier.wxs" "$work/"
(cd "$work" && wixl --arch x64 -D Version="$version" -D Exe=Carrier.exe -D Mapi=carriermapi.dll -D Icon=carrier.ico -o "$out" carrier.wxs)
echo "$out: Carrier $version, $(du -h "$out" | cut -f1)"
