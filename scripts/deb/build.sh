#!/usr/bin/env bash
# Builds Carrier's Debian package around a built binary:
# scripts/deb/build.sh BIN OUT.deb (DEB_COMPRESS=none for a quick one:
# xz takes most of the time on a 37 MB binary). The package holds the binary
# (/usr/bin/carrier), its desktop entry, the icon in the hicolor sizes and
# the AppStream metainfo (laid out by stage.sh, as the tarball's); its
# version is FyneApp.toml's, which the binary must print too; its dependencies are what the binary links
# against (dpkg-shlibdeps), so they follow the build, not a list kept by hand.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BIN OUT.deb" >&2; exit 2; }
bin=$(realpath "$1")
out=$(realpath -m "$2")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
GO=${GO:-go}

version=$("$root/scripts/release/version.sh")
arch=$(dpkg --print-architecture)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pkg=$work/pkg
GO="$GO" "$here/stage.sh" "$bin" "$pkg" /usr
install -D -m 0644 /dev/null "$pkg/usr/share/doc/carrier/copyright"
printf 'Carrier\nSee the source repository for its terms.\n' >"$pkg/usr/share/doc/carrier/copyright"

# dpkg-shlibdeps reads the package's name from a debian/control beside it.
mkdir -p "$work/src/debian"
printf 'Source: carrier\n\nPackage: carrier\nArchitecture: any\n' >"$work/src/debian/control"
depends=$(cd "$work/src" && dpkg-shlibdeps -O "$pkg/usr/bin/carrier" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "dpkg-shlibdeps found no libraries for $bin" >&2; exit 1; }

size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
mkdir -p "$pkg/DEBIAN"
cat >"$pkg/DEBIAN/control" <<CONTROL
Package: carrier
Version: $version
Architecture: $arch
Maintainer: The Carrier developers <carrier@localhost>
Installed-Size: $size
Depends: $depends
Section: net
Priority: optional
Description: send mail and media to Google without losing or doubling them
 Carrier builds a message once, keeps its bytes, and uploads it to Gmail
 with Google's resumable upload protocol. Uploads report progress as the
 server confirms it and finish after a dropped connection, sleep, a crash
 or a restart, never sending the same message twice. With no Google
 account it runs against its own embedded sandbox.
CONTROL
find "$pkg" -type d -exec chmod 0755 {} +
dpkg-deb --root-owner-group -Z"${DEB_COMPRESS:-xz}" --build "$pkg" "$out" >/dev/null
echo "$out: carrier $version ($arch), $(du -h "$out" | cut -f1)"
