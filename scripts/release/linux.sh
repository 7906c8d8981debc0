#!/usr/bin/env bash
# Builds what Carrier ships for Linux into OUT: scripts/release/linux.sh OUT.
#  - OUT/carrier: the release binary, built by the fyne tool (`fyne build
#    --release`: -trimpath, stripped, the release and migrated_fynedo tags,
#    hardened C flags) from FyneApp.toml, which it leaves as it was;
#  - OUT/Carrier.tar.xz: carrier-VERSION/ holding bin/, share/ (the files
#    scripts/deb/stage.sh lays out) and a Makefile: `make install`
#    (PREFIX=/usr/local, DESTDIR honoured), `make uninstall`, and
#    user-install / user-uninstall for ~/.local;
#  - OUT/Carrier.deb: scripts/deb/build.sh around the same binary.
# The release check (scripts/release/test-linux.sh) installs both and runs
# what they installed. With --binary only OUT/carrier is built: the binary
# the desktop tests run (make test-desktop and the others).
set -euo pipefail
only=0
[ "${1:-}" = --binary ] && { only=1; shift; }
[ $# -eq 1 ] || { echo "usage: $0 [--binary] OUT" >&2; exit 2; }
out=$(realpath -m "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
GO=${GO:-go}
cd "$root"
version=$(scripts/release/version.sh)
mkdir -p "$out" bin
"$GO" build -o bin/fyne fyne.io/tools/cmd/fyne
rm -f "$out/carrier"
before=$(sha256sum FyneApp.toml)
bin/fyne build --release -o "$out/carrier"
[ "$(sha256sum FyneApp.toml)" = "$before" ] || { echo "the fyne tool changed FyneApp.toml" >&2; exit 1; }
[ $only = 0 ] || exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
top=carrier-$version
GO="$GO" scripts/deb/stage.sh "$out/carrier" "$work/$top" /
files=$(cd "$work/$top" && find bin share -type f | LC_ALL=C sort)
{
	printf '# Carrier %s. make install puts it in PREFIX (/usr/local; DESTDIR\n' "$version"
	printf '# honoured), make uninstall takes it out; user-install and\n'
	printf '# user-uninstall do the same in ~/.local for you alone. Your mail and\n'
	printf '# settings are never touched: they live in your own folders.\n'
	printf 'PREFIX ?= /usr/local\n\n'
	printf '.PHONY: default install uninstall user-install user-uninstall\n\n'
	printf 'default:\n\t@echo "make install (as root: into $(PREFIX)), or make user-install (into ~/.local)"\n\n'
	printf 'install:\n'
	for f in $files; do
		mode=0644
		[ -x "$work/$top/$f" ] && mode=0755
		printf '\tinstall -D -m %s %s $(DESTDIR)$(PREFIX)/%s\n' "$mode" "$f" "$f"
	done
	printf '\nuninstall:\n'
	for f in $files; do printf '\trm -f $(DESTDIR)$(PREFIX)/%s\n' "$f"; done
	printf '\nuser-install:\n\t$(MAKE) install PREFIX=$(HOME)/.local\n'
	printf '\nuser-uninstall:\n\t$(MAKE) uninstall PREFIX=$(HOME)/.local\n'
} >"$work/$top/Makefile"
# The same bytes from the same commit: fixed owner, order and times.
stamp=$(git log -1 --format=%ct 2>/dev/null || date +%s)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$stamp" -C "$work" -cf - "$top" | xz -T1 -6 >"$out/Carrier.tar.xz"
echo "$out/Carrier.tar.xz: carrier $version, $(du -h "$out/Carrier.tar.xz" | cut -f1)"
GO="$GO" scripts/deb/build.sh "$out/carrier" "$out/Carrier.deb"
