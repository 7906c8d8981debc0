#!/usr/bin/env bash
# Lays out what a Linux install of Carrier holds, under ROOT as if ROOT
# were /: scripts/deb/stage.sh BIN ROOT PREFIX. PREFIX/bin/carrier, its
# desktop entry, the AppStream metainfo (with the version BIN prints and
# the source's date) and the icon in the hicolor sizes. The .deb
# (build.sh, PREFIX /usr) and the tarball (scripts/release/linux.sh,
# PREFIX /) are both laid out by it, so they hold the same files.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 BIN ROOT PREFIX" >&2; exit 2; }
bin=$(realpath "$1")
dest=$(realpath -m "$2")${3%/}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
GO=${GO:-go}
id=app.carrier.desktop
version=$("$here/../release/version.sh")
said=$(env -u DISPLAY -u WAYLAND_DISPLAY "$bin" --version)
case "$said" in
"carrier $version "*) ;;
*) echo "$bin says \"$said\", not version $version: build it from this tree first" >&2; exit 1 ;;
esac
# The release date is the source's, so two builds of one commit agree.
date=$(git -C "$root" log -1 --format=%cs 2>/dev/null || date -u +%F)
install -D -m 0755 "$bin" "$dest/bin/carrier"
install -D -m 0644 "$here/carrier.desktop" "$dest/share/applications/$id.desktop"
install -d "$dest/share/metainfo"
sed -e "s/@VERSION@/$version/" -e "s/@DATE@/$date/" "$here/$id.metainfo.xml" >"$dest/share/metainfo/$id.metainfo.xml"
chmod 0644 "$dest/share/metainfo/$id.metainfo.xml"
(cd "$root" && "$GO" run ./scripts/deb/mkicons assets/icon.png "$dest/share/icons/hicolor" "$id")
