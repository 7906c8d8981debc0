#!/usr/bin/env bash
# Builds Carrier's Windows installer around a Windows build of Carrier:
# scripts/windows/package.sh CARRIER.EXE OUT.msi. The icon comes from
# assets/icon.png, the version from FyneApp.toml; the package is
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
cp "$root/scripts/windows/carrier.wxs" "$work/"
(cd "$work" && wixl --arch x64 -D Version="$version" -D Exe=Carrier.exe -D Icon=carrier.ico -o "$out" carrier.wxs)
echo "$out: Carrier $version, $(du -h "$out" | cut -f1)"
