#!/usr/bin/env bash
# Checks Carrier's installer as a person meets it:
# scripts/windows/test-msi.sh [--no-install] CARRIER.msi CARRIER.EXE.
# msiinfo must find its tables, the exe in File, the Start-menu entry in
# Shortcut, the icon and the version. Then, in a fresh Wine prefix (Windows
# as installed: only the bcryptprimitives.dll Windows 10 has and Wine 8.0
# lacks is added, see test.sh), msiexec /i installs it: the exe byte for
# byte in Program Files, the Start-menu entry, an entry in the uninstall
# list; the installed exe (the one shipped) says the version, sends a
# message with an attachment through its embedded sandbox, which then holds
# it once, and passes test-cli.sh (carrier sandbox, send, kill -9 and two
# resumes); Carrier is in SendTo, "Open with" and Clients\Mail with its
# Simple MAPI DLL, and test-mapi.sh has the installed Carrier.exe hand
# files to the window from Open with, Send to and a program's MAPISendMail;
# msiexec /x removes the program files and every registration and keeps
# the person's data (%LOCALAPPDATA%\Carrier). --no-install: msiinfo's
# checks only.
set -euo pipefail
install=1
[ "${1:-}" = --no-install ] && { install=0; shift; }
[ $# -eq 2 ] || { echo "usage: $0 [--no-install] CARRIER.msi CARRIER.EXE" >&2; exit 2; }
msi=$(realpath "$1")
exe=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OUT=${WINDOWS_OUT:-$root/artifacts/windows}
WINE=${WINE:-$(command -v wine64 || echo /usr/lib/wine/wine64)}
WINESERVER=${WINESERVER:-$(command -v wineserver || echo /usr/lib/wine/wineserver)}
export WINEPREFIX="$OUT/_installed" WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree=;mshtml="
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
grep -q $'\tSendToFolder\tCarrier\t.*\t\\[INSTALLDIR\\]Carrier.exe\t' <<<"$shortcuts" ||
	fail "Shortcut has no Send to entry for Carrier.exe:"$'\n'"$shortcuts"
grep -q $'^CarrierMapi\t' <<<"$files" || fail "File has no carriermapi.dll (the Simple MAPI provider)"
registry=$(msiinfo export "$msi" Registry | tr -d "\r")
for row in $'2\tSoftware\\Clients\\Mail\\Carrier\tDLLPath\t[INSTALLDIR]carriermapi.dll\t' \
	$'2\tSoftware\\Clients\\Mail\\Carrier\tDLLPathEx\t[INSTALLDIR]carriermapi.dll\t' \
	$'2\tSoftware\\Classes\\Applications\\Carrier.exe\\shell\\open\\command\t\t"[INSTALLDIR]Carrier.exe" "%1"\t' \
	$'2\tSoftware\\Clients\\Mail\\Carrier\\Protocols\\mailto\\shell\\open\\command\t\t"[INSTALLDIR]Carrier.exe" "%1"\t' \
	$'2\tSoftware\\RegisteredApplications\tCarrier\tSoftware\\Clients\\Mail\\Carrier\\Capabilities\t' \
	$'2\tSoftware\\Clients\\Mail\\Carrier\\Capabilities\\URLAssociations\tmailto\tCarrier.mailto\t'; do
	grep -qF "$row" <<<"$registry" || fail "Registry has no row ${row//$'\t'/ | }"
done
props=$(msiinfo export "$msi" Property | tr -d "\r")
version=$("$root/scripts/release/version.sh")
grep -qx $'ProductVersion\t'"$version" <<<"$props" || fail "ProductVersion is not $version"
grep -qx $'ARPPRODUCTICON\tcarrier.ico' <<<"$props" || fail "no icon in the uninstall list"
grep -qx $'UpgradeCode\t{62f1b2e4-11b0-4b46-aee9-cf007c3338d6}' <<<"$props" || fail "the UpgradeCode changed"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Exporting a table with binary columns writes them to TABLE/ in the
# current folder.
(cd "$tmp" && msiinfo export "$msi" Icon >/dev/null) || fail "no icon"
[ "$(head -c 4 "$tmp/Icon/Icon.carrier.ico" | od -An -tx1 | tr -d ' ')" = 00000100 ] || fail "carrier.ico is not an icon"
echo "ok $msi: tables, Carrier.exe, Start-menu and Send to entries, mail client and Open with keys, icon, version $version"

[ $install = 1 ] || exit 0

# A fresh prefix: nothing from the tests' own prefix may help the exe start.
"$WINESERVER" -k 2>/dev/null || true
rm -rf "$WINEPREFIX"
mkdir -p "$OUT/logs"
"$WINE" wineboot -i >"$OUT/logs/wineboot-installed.log" 2>&1 || fail "wineboot could not make a prefix"
"$WINESERVER" -w
x86_64-w64-mingw32-gcc -shared -O2 -o "$tmp/bcryptprimitives.dll" "$here/processprng.c" "$here/processprng.def" -ladvapi32
cp "$tmp/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"
code=$(grep $'^ProductCode\t' <<<"$props" | cut -f2)
installed="$WINEPREFIX/drive_c/Program Files/Carrier/Carrier.exe"
menu() { find "$WINEPREFIX/drive_c" -path '*/Start Menu/Programs/Carrier.lnk' 2>/dev/null; }
winmsi="Z:${msi//\//\\}"
"$WINE" msiexec /i "$winmsi" /qn || fail "msiexec /i exited $?"
cmp -s "$installed" "$exe" || fail "installed, but Program Files has no Carrier.exe equal to the one packaged"
[ -n "$(menu)" ] || fail "installed, but no Start-menu entry"
"$WINE" reg query "HKLM\\Software\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\$code" >/dev/null 2>&1 ||
	fail "installed, but not in the uninstall list"
# Where people start a send: keys (reg reads the 64-bit view, where the
# 64-bit msi wrote them) and the SendTo entry.
sendto() { find "$WINEPREFIX/drive_c/users" -path '*/SendTo/Carrier.lnk' 2>/dev/null; }
keys=('HKLM\Software\Clients\Mail\Carrier' 'HKLM\Software\Clients\Mail\Carrier\Protocols\mailto\shell\open\command'
	'HKLM\Software\Clients\Mail\Carrier\Capabilities\URLAssociations' 'HKLM\Software\Classes\Carrier.mailto\shell\open\command'
	'HKLM\Software\Classes\Applications\Carrier.exe\shell\open\command' 'HKLM\Software\Classes\Applications\Carrier.exe\SupportedTypes')
for k in "${keys[@]}"; do
	"$WINE" reg query "$k" >/dev/null 2>&1 || fail "installed, but $k is not in the registry"
done
"$WINE" reg query 'HKLM\Software\Clients\Mail\Carrier' /v DLLPath 2>/dev/null | grep -q 'C:\\Program Files\\Carrier\\carriermapi.dll' ||
	fail "installed, but Clients\Mail\Carrier's DLLPath is not the installed carriermapi.dll"
[ -f "$(dirname "$installed")/carriermapi.dll" ] || fail "installed, but no carriermapi.dll beside Carrier.exe"
"$WINE" reg query 'HKLM\Software\RegisteredApplications' /v Carrier >/dev/null 2>&1 || fail "installed, but not in RegisteredApplications"
[ -n "$(sendto)" ] || fail "installed, but no Carrier in SendTo"
echo "ok $msi: installed in a fresh prefix, with Send to, Open with and Carrier as a mail client"

# The installed exe, as a person starts it from a terminal. A missing DLL
# shows here: the exe exits at once (53 under Wine) and says nothing.
said=$(WINEDEBUG=err+module "$WINE" "$installed" --version 2>"$tmp/version.err") ||
	fail "the installed Carrier.exe does not start (exit $?): $(grep -i 'not found\|dll' "$tmp/version.err" | head -3)"
case "$said" in
"carrier $version "*) echo "ok installed: $said" ;;
*) fail "the installed Carrier.exe says \"$said\", the package is $version" ;;
esac
head -c 200000 /dev/urandom >"$tmp/attachment.bin"
subject="Installed from the msi $RANDOM"
"$WINE" "$installed" send --to zoe@example.com --subject "$subject" --body "sent by the installed Carrier" \
	--attach "Z:${tmp//\//\\}\\attachment.bin" >"$tmp/send.log" 2>&1 || { cat "$tmp/send.log" >&2; fail "carrier send exited $?"; }
data=$(find "$WINEPREFIX/drive_c/users" -maxdepth 5 -type d -path '*/AppData/Local/Carrier' | head -1)
[ -n "$data" ] && [ -f "$data/sandbox/token" ] || fail "carrier send made no embedded sandbox in %LOCALAPPDATA%\\Carrier"
# Read the embedded sandbox's mailbox back through the installed exe.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
token=$(cat "$data/sandbox/token")
"$WINE" "$installed" sandbox --addr "127.0.0.1:$port" --data "Z:${data//\//\\}\\sandbox" --token "$token" --quiet >"$tmp/sandbox.log" 2>&1 &
sb=$!
for _ in $(seq 100); do curl -sf -o /dev/null -H "Authorization: Bearer $token" "http://127.0.0.1:$port/gmail/v1/users/me/profile" && break; sleep 0.2; done
n=$(python3 - "http://127.0.0.1:$port" "$token" "$subject" "$tmp/attachment.bin" <<'PY'
import base64, email, email.policy, json, sys, urllib.request
base, token, subject, want = sys.argv[1], sys.argv[2], sys.argv[3], open(sys.argv[4], "rb").read()
def get(path):
    req = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token})
    return json.load(urllib.request.urlopen(req, timeout=10))
n = 0
for m in get("/gmail/v1/users/me/messages").get("messages", []):
    raw = get("/gmail/v1/users/me/messages/%s?format=raw" % m["id"])["raw"]
    msg = email.message_from_bytes(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)), policy=email.policy.default)
    if msg["Subject"] == subject and [p.get_content() for p in msg.iter_attachments()] == [want]:
        n += 1
print(n)
PY
) || n=error
kill "$sb" 2>/dev/null || true
wait "$sb" 2>/dev/null || true
[ "$n" = 1 ] || fail "the embedded sandbox holds $n messages titled \"$subject\" with the attachment, not 1"
echo "ok installed: carrier send delivered one message with its attachment through the embedded sandbox"
"$here/test-cli.sh" "$installed" || fail "the installed Carrier.exe failed test-cli.sh"
"$here/test-mapi.sh" "$installed" || fail "the installed Carrier.exe failed test-mapi.sh"

"$WINE" msiexec /x "$winmsi" /qn || fail "msiexec /x exited $?"
[ ! -e "$installed" ] || fail "uninstalled, but Carrier.exe is still there"
[ ! -e "$(dirname "$installed")" ] || fail "uninstalled, but Program Files\\Carrier is still there"
[ -z "$(menu)" ] || fail "uninstalled, but the Start-menu entry is still there"
[ -z "$(sendto)" ] || fail "uninstalled, but Carrier is still in SendTo"
for k in "${keys[@]}" 'HKLM\Software\Classes\Applications\Carrier.exe' 'HKLM\Software\Classes\Carrier.mailto'; do
	! "$WINE" reg query "$k" >/dev/null 2>&1 || fail "uninstalled, but $k is still in the registry"
done
! "$WINE" reg query 'HKLM\Software\RegisteredApplications' /v Carrier >/dev/null 2>&1 ||
	fail "uninstalled, but still in RegisteredApplications"
! "$WINE" reg query "HKLM\\Software\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\$code" >/dev/null 2>&1 ||
	fail "uninstalled, but still in the uninstall list"
[ -f "$data/sandbox/token" ] || fail "uninstalling took the person's data ($data)"
"$WINESERVER" -w
echo "ok $msi: uninstalled; program files and every registration gone, the person's data kept"
