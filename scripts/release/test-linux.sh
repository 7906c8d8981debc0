#!/usr/bin/env bash
# The Linux artifacts of scripts/release/linux.sh OUT, installed as a person
# installs them and then used: scripts/release/test-linux.sh OUT.
#  - Carrier.tar.xz unpacked, `make install` into a scratch PREFIX: the
#    desktop entry there validates, the installed carrier passes
#    scripts/release/smoke.py (version, sandbox, a send, the window), and
#    `make uninstall` leaves no file in PREFIX but keeps the person's data;
#  - Carrier.deb through scripts/deb/test.sh: validated, dpkg -i, the same
#    smoke test on /usr/bin/carrier, dpkg -r.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUT" >&2; exit 2; }
out=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL release (Linux): $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version=$("$here/version.sh")

tar -xJf "$out/Carrier.tar.xz" -C "$work" || fail "Carrier.tar.xz does not unpack"
src=$work/carrier-$version
[ -f "$src/Makefile" ] || fail "Carrier.tar.xz has no carrier-$version/Makefile"
prefix=$work/prefix
make -s -C "$src" install PREFIX="$prefix" || fail "make install of the tarball failed"
desktop-file-validate "$prefix/share/applications/app.carrier.desktop.desktop" || fail "the tarball's desktop entry does not validate"
cmp -s "$prefix/bin/carrier" "$out/carrier" || fail "the tarball installed a carrier other than the release binary"
"$here/smoke.py" "$prefix/bin/carrier" tarball "$work/home" || fail "the carrier the tarball installed failed its first use"
make -s -C "$src" uninstall PREFIX="$prefix" || fail "make uninstall of the tarball failed"
left=$(find "$prefix" -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
[ -f "$work/home/.local/share/carrier/sandbox/token" ] || fail "make uninstall took the person's data"
echo "ok Carrier.tar.xz: installed into a scratch prefix, used, uninstalled (the person's data kept)"

"$here/../deb/test.sh" "$out/Carrier.deb"
