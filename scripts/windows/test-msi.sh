#!/usr/bin/env bash
# Checks Carrier's installer: scripts/windows/test-msi.sh CARRIER.msi
# CARRIER.EXE. msiinfo must find its tables, the exe in File, the
# Start-menu entry in Shortcut, the icon and the version; then, under Wine
# (the prefix of scripts/windows/test.sh), msiexec installs it (the exe
# byte for byte in Program Files, the Start-menu entry, an entry in the
# uninstall list) and uninstalls it (all of them gone).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 CARRIER.msi CARRIER.EXE" >&2; exit 2; }
msi=$(realpath "$1")
exe=$(realpath "$2")
root=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${WINDOWS_OUT:-$root/artifacts/windows}
WINE=${WINE:-$(command -v wine64 || echo /usr/lib/wine/wine64)}
WINESERVER=${WINESERVER:-$(command -v wineserver || echo /usr/lib/wine/wineserver)}
export WINEPREFIX="$OUT/_prefix" WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree=;mshtml="
unset DISPLAY WAYLAND_DISPLAY
fail() { echo "FAIL $msi: $*" >&2; exit 1; }

tables=$(msiinfo tables "$msi") || fail "msiinfo cannot read it"
for t in File Component Feature Directory Shortcut Icon Property Media; do
	grep -qx "$t" <<<"$tables" || fail "no $t table"
done
files=$(msiinfo export "$msi" File | tr -d "\r")
grep -q $'^CarrierExe\tCarrierExe\tCarrier.exe\t'"$(stat -c %s "$exe")"$'\t' <<<"$files" ||
	fail "File has no Carrier.exe of $(stat -c %s "$exe") bytes:"$'\n'"$files"
shortcuts=$(msiinfo export "$msi" Shortcut | tr -d "\r")
grep -q $'\tProgramMenuFolder\tCarrier\t.*\t\\[INSTALLDIR\\]Carrier.exe\t.*\tcarrier.ico\t' <<<"$shortcuts" ||
	fail "Shortcut has no Start-menu entry for Carrier.exe:"$'\n'"$shortcuts"
props=$(msiinfo export "$msi" Property | tr -d "\r")
version=$(sed -n 's/^Version *= *"\(.*\)"/\1/p' "$root/FyneApp.toml")
grep -qx $'ProductVersion\t'"$version" <<<"$props" || fail "ProductVersion is not $version"
grep -qx $'ARPPRODUCTICON\tcarrier.ico' <<<"$props" || fail "no icon in the uninstall list"
grep -qx $'UpgradeCode\t{62f1b2e4-11b0-4b46-aee9-cf007c3338d6}' <<<"$props" || fail "the UpgradeCode changed"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Exporting a table with binary columns writes them to TABLE/ in the
# current folder.
(cd "$tmp" && msiinfo export "$msi" Icon >/dev/null) || fail "no icon"
[ "$(head -c 4 "$tmp/Icon/Icon.carrier.ico" | od -An -tx1 | tr -d ' ')" = 00000100 ] || fail "carrier.ico is not an icon"
echo "ok $msi: tables, Carrier.exe, Start-menu entry, icon, version $version"

if [ ! -f "$WINEPREFIX/system.reg" ]; then
	echo "not installed under Wine: no prefix in $WINEPREFIX (scripts/windows/test.sh makes it)"
	exit 0
fi
code=$(grep $'^ProductCode\t' <<<"$props" | cut -f2)
installed="$WINEPREFIX/drive_c/Program Files/Carrier/Carrier.exe"
menu() { find "$WINEPREFIX/drive_c" -path '*/Start Menu/Programs/Carrier.lnk' 2>/dev/null; }
winmsi="Z:${msi//\//\\}"
"$WINE" msiexec /i "$winmsi" /qn || fail "msiexec /i exited $?"
cmp -s "$installed" "$exe" || fail "installed, but Program Files has no Carrier.exe equal to the one packaged"
[ -n "$(menu)" ] || fail "installed, but no Start-menu entry"
"$WINE" reg query "HKLM\\Software\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\$code" >/dev/null 2>&1 ||
	fail "installed, but not in the uninstall list"
"$WINE" msiexec /x "$winmsi" /qn || fail "msiexec /x exited $?"
[ ! -e "$installed" ] || fail "uninstalled, but Carrier.exe is still there"
[ -z "$(menu)" ] || fail "uninstalled, but the Start-menu entry is still there"
! "$WINE" reg query "HKLM\\Software\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\$code" >/dev/null 2>&1 ||
	fail "uninstalled, but still in the uninstall list"
"$WINESERVER" -w
echo "ok $msi: installed and uninstalled under Wine"
