#!/usr/bin/env bash
# Checks Carrier's Debian package as a desktop and dpkg see it:
# scripts/deb/test.sh [--no-install] CARRIER.deb. Its desktop entry passes
# desktop-file-validate; its metainfo passes appstreamcli (alone, and
# with the tree, which checks that the launchable names the entry); the
# icon is there in every hicolor size; then it is installed with dpkg -i,
# the installed carrier prints the package's version, serves the sandbox,
# sends a message and opens its window (scripts/release/smoke.py), and
# dpkg -r leaves nothing of it but the person's own data (not with
# --no-install). Needs root or sudo, as dpkg does.
set -euo pipefail
install=1
[ "${1:-}" = --no-install ] && { install=0; shift; }
[ $# -eq 1 ] || { echo "usage: $0 [--no-install] CARRIER.deb" >&2; exit 2; }
deb=$(realpath "$1")
id=app.carrier.desktop
fail() { echo "deb test: $*" >&2; exit 1; }
sudo=""
if [ $install = 1 ] && [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || fail "dpkg -i needs root or sudo"
	sudo=sudo
fi

version=$(dpkg-deb -f "$deb" Version)
[ "$(dpkg-deb -f "$deb" Package)" = carrier ] || fail "$deb is not the carrier package"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
dpkg-deb -x "$deb" "$tree"
desktop-file-validate "$tree/usr/share/applications/$id.desktop" || fail "desktop-file-validate refused $id.desktop"
appstreamcli validate --no-net "$tree/usr/share/metainfo/$id.metainfo.xml" >/dev/null ||
	fail "appstreamcli refused the metainfo: $(appstreamcli validate --no-net "$tree/usr/share/metainfo/$id.metainfo.xml")"
appstreamcli validate-tree --no-net "$tree" >/dev/null ||
	fail "appstreamcli refused the tree: $(appstreamcli validate-tree --no-net "$tree")"
grep -q "<release version=\"$version\"" "$tree/usr/share/metainfo/$id.metainfo.xml" || fail "the metainfo's release is not $version"
for n in 16 24 32 48 64 128 256 512; do
	icon=$tree/usr/share/icons/hicolor/${n}x${n}/apps/$id.png
	[ -f "$icon" ] || fail "no ${n}x${n} icon"
	# A PNG's IHDR holds its width and height at bytes 16-23.
	[ "$(od -An -tu1 -j16 -N8 "$icon" | tr -s ' ')" = "$(printf ' 0 0 %d %d 0 0 %d %d' $((n / 256)) $((n % 256)) $((n / 256)) $((n % 256)))" ] ||
		fail "the ${n}x${n} icon is not ${n} pixels square"
done

[ $install = 1 ] || { echo "deb test: $deb validated"; exit 0; }

# The package must not replace a Carrier someone installed on purpose.
if dpkg-query -W -f='${Status}' carrier 2>/dev/null | grep -q "install ok installed"; then
	echo "deb test: SKIPPED dpkg -i/-r: a carrier package is installed on this machine already" >&2
	exit 0
fi
trap 'rm -rf "$tree" "$tree-home"; $sudo dpkg -r carrier >/dev/null 2>&1 || true' EXIT
$sudo dpkg -i "$deb" >/dev/null || fail "dpkg -i $deb failed"
said=$(env -u DISPLAY -u WAYLAND_DISPLAY /usr/bin/carrier --version) || fail "the installed carrier --version failed"
case "$said" in
"carrier $version "*) echo "installed: $said" ;;
*) fail "the installed carrier says \"$said\", the package is $version" ;;
esac
desktop-file-validate "/usr/share/applications/$id.desktop" || fail "the installed desktop entry does not validate"
home=$tree-home
"$(dirname "$0")/../release/smoke.py" /usr/bin/carrier deb "$home" || fail "the installed carrier failed its first use"
$sudo dpkg -r carrier >/dev/null || fail "dpkg -r carrier failed"
dpkg-query -W -f='${Status}' carrier 2>/dev/null | grep -q "install ok installed" && fail "carrier is still installed after dpkg -r"
for f in /usr/bin/carrier "/usr/share/applications/$id.desktop" "/usr/share/metainfo/$id.metainfo.xml" "/usr/share/icons/hicolor/48x48/apps/$id.png"; do
	[ ! -e "$f" ] || fail "$f is left after dpkg -r"
done
[ -f "$home/.local/share/carrier/sandbox/token" ] || fail "dpkg -r took the person's data ($home/.local/share/carrier)"
rm -rf "$home"
echo "deb test: $deb validated, installed, ran and removed"
