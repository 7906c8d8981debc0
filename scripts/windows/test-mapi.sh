#!/usr/bin/env bash
# Where people start a send on Windows, with the installed Carrier:
# scripts/windows/test-mapi.sh INSTALLED-CARRIER.EXE, run by test-msi.sh in
# its Wine prefix (WINEPREFIX and the rest from it) after msiexec /i.
#
# No window can open here (Wine, headless), so scripts/windows/handover
# holds the window's place, as the window does, and records what each
# launch hands it (read as the window reads it, app.Opened). Then:
#  - "Open with": the registered command, run as Explorer runs it, with a
#    file whose name has a space: the installed Carrier.exe hands the file
#    over and exits 0;
#  - "Send to": the installed SendTo shortcut started on a file does the
#    same;
#  - "Send by email": with Carrier the default mail client (set here, as
#    the person does in Settings), mapicaller calls MAPISendMailW and then
#    MAPISendMail through Wine's mapi32.dll; the DLL starts Carrier.exe
#    with a mailto: link, which hands To, Subject, body and the attachment
#    (a copy under the name the caller gave, byte for byte) to the window;
#    a file that is not there is MAPI_E_ATTACHMENT_NOT_FOUND, and Carrier
#    is not started;
#  - a message whose link is longer than a command line (a long text, 40
#    files) goes through a file in "Links from programs" that Carrier reads
#    and removes; one over 1 MiB is MAPI_E_TEXT_TOO_LARGE.
# Nothing is sent: the window's stand-in only records.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 INSTALLED-CARRIER.EXE" >&2; exit 2; }
installed=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
GO=${GO:-go}
WINE=${WINE:-$(command -v wine64 || echo /usr/lib/wine/wine64)}
: "${WINEPREFIX:?run by test-msi.sh}"
fail() { echo "FAIL mail client: $*" >&2; exit 1; }
tmp=$(mktemp -d)
rec=""
cleanup() {
	[ -z "$rec" ] || kill "$rec" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
win() { echo "Z:${1//\//\\}"; }

(cd "$root" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 "$GO" build -o "$tmp/handover.exe" ./scripts/windows/handover) ||
	fail "cannot build scripts/windows/handover"
x86_64-w64-mingw32-gcc -municode -O2 -Wall -Werror -o "$tmp/mapicaller.exe" "$here/mapi/mapicaller.c" ||
	fail "cannot build mapicaller"

# recorded OUT CMD...: the window's stand-in holds the place, CMD runs
# (and must exit 0), and what it handed over is in OUT.
recorded() {
	local out=$1
	shift
	rm -f "$out" "$out.ready"
	"$WINE" "$tmp/handover.exe" "$(win "$out")" 60 >"$out.log" 2>&1 &
	rec=$!
	for _ in $(seq 200); do [ -e "$out.ready" ] && break; kill -0 "$rec" 2>/dev/null || break; sleep 0.1; done
	[ -e "$out.ready" ] || fail "the window's stand-in did not start: $(cat "$out.log")"
	"$@" >"$out.cmd" 2>&1 || fail "$* exited $?: $(cat "$out.cmd")"
	wait "$rec" || fail "nothing was handed to the window: $(cat "$out.log")"
	rec=""
	[ -s "$out" ] || fail "the window's stand-in recorded nothing"
}

# check OUT PYTHON-EXPRESSION: the record r (JSON) makes it true.
check() {
	python3 - "$1" "$2" <<'PY' || fail "$(cat "$1")"
import json, sys
r = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2])
if not ok:
    print("not", sys.argv[2], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

# The files as people hand them, in a folder Windows sees.
mkdir -p "$tmp/My files"
head -c 300000 /dev/urandom >"$tmp/My files/a report.pdf"
head -c 120000 /dev/urandom >"$tmp/My files/photo.jpg"
report=$(win "$tmp/My files/a report.pdf")
photo=$(win "$tmp/My files/photo.jpg")

# Open with: the command Explorer runs, with %1 the file.
command=$("$WINE" reg query 'HKLM\Software\Classes\Applications\Carrier.exe\shell\open\command' /ve 2>/dev/null |
	tr -d '\r' | sed -n 's/^ *(Default) *REG_SZ *//p')
[ "$command" = '"C:\Program Files\Carrier\Carrier.exe" "%1"' ] || fail "Open with runs \"$command\""
start=$SECONDS
recorded "$tmp/open.json" "$WINE" "$installed" "$report"
check "$tmp/open.json" "r['Attachments'] == [r'''$report'''] and not r['Refused']"
echo "ok Open with: the installed Carrier.exe handed \"$report\" to the open window and exited 0 ($((SECONDS - start)) s)"

# Send to: the shortcut Explorer starts with the chosen files.
sendto=$(find "$WINEPREFIX/drive_c/users" -path '*/SendTo/Carrier.lnk' | head -1)
[ -n "$sendto" ] || fail "no Carrier in SendTo"
recorded "$tmp/sendto.json" "$WINE" start /wait /unix "$sendto" "$report" "$photo"
check "$tmp/sendto.json" "r['Attachments'] == [r'''$report''', r'''$photo'''] and not r['Refused']"
echo "ok Send to: the SendTo shortcut handed both files to the open window"

# Send by email: Carrier as the default mail client, as Settings makes it.
"$WINE" reg add 'HKLM\Software\Clients\Mail' /ve /d Carrier /f >/dev/null 2>&1 || fail "cannot make Carrier the default mail client"
subject='Quarterly report — ünïcode & 100% sure?'
body=$'Here it is.\r\nSecond line: a=b&c'
recorded "$tmp/mapiw.json" "$WINE" "$tmp/mapicaller.exe" W zoe@example.com "$subject" "$body" "$(win "$tmp/My files/a report.pdf")" 'Q3 report.pdf'
check "$tmp/mapiw.json" "r['To'] == ['zoe@example.com'] and r['Subject'] == '''$subject''' and r['Text'] == 'Here it is.\nSecond line: a=b&c' and not r['Refused'] and len(r['Attachments']) == 1 and r['Attachments'][0].endswith(r'\\Q3 report.pdf')"
copy=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Attachments"][0])' "$tmp/mapiw.json")
cmp -s "$("$WINE" winepath -u "$copy" 2>/dev/null)" "$tmp/My files/a report.pdf" || fail "the attachment Carrier was handed ($copy) is not the file the program gave"
echo "ok MAPISendMailW through mapi32: Compose gets To, Subject, body and \"Q3 report.pdf\" (a copy, byte for byte)"

recorded "$tmp/mapia.json" "$WINE" "$tmp/mapicaller.exe" A zoe@example.com 'Scan 7' 'Scanned.' "$photo" 'scan.jpg'
check "$tmp/mapia.json" "r['To'] == ['zoe@example.com'] and r['Subject'] == 'Scan 7' and r['Text'] == 'Scanned.' and not r['Refused'] and len(r['Attachments']) == 1 and r['Attachments'][0].endswith(r'\\scan.jpg')"
copy=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Attachments"][0])' "$tmp/mapia.json")
cmp -s "$("$WINE" winepath -u "$copy" 2>/dev/null)" "$tmp/My files/photo.jpg" || fail "the attachment Carrier was handed ($copy) is not the file the program gave"
echo "ok MAPISendMail (ANSI, SMTP: address) through mapi32: Compose gets the message and \"scan.jpg\""

# A message too long for a command line (32767 characters): a long text
# and 40 files. The DLL writes its link to a file in Carrier's "Links from
# programs" and starts Carrier.exe --mail-link-file with it; Carrier reads
# it, removes it and hands the whole message over.
data=$(find "$WINEPREFIX/drive_c/users" -maxdepth 5 -type d -path '*/AppData/Local' | head -1)/Carrier
line="Zoë's line, ünïcode & 100%."
recorded "$tmp/long.json" "$WINE" "$tmp/mapicaller.exe" M zoe@example.com 'Many files' 500 "$photo" 'scan.jpg' 40
check "$tmp/long.json" "len(r['Items']) == 1 and len(r['Items'][0]) > 32767 and r['To'] == ['zoe@example.com'] and r['Subject'] == 'Many files' and r['Text'] == '''$line\\n''' * 500 and not r['Refused'] and [a.rsplit('\\\\', 1)[1] for a in r['Attachments']] == ['%d-scan.jpg' % i for i in range(1, 41)]"
for i in 0 39; do
	copy=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Attachments"][int(sys.argv[2])])' "$tmp/long.json" $i)
	cmp -s "$("$WINE" winepath -u "$copy" 2>/dev/null)" "$tmp/My files/photo.jpg" || fail "the long message's attachment $copy is not the file the program gave"
done
[ -d "$data/Links from programs" ] || fail "no \"Links from programs\" in $data: the link did not go through a file"
left=$(find "$data/Links from programs" -type f | wc -l)
[ "$left" = 0 ] || fail "Carrier left the link's file in \"Links from programs\" ($left files)"
echo "ok MAPISendMailW of a message too long for a command line ($(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["Items"][0]))' "$tmp/long.json") characters, 40 files): through a file Carrier read and removed"

# A link over 1 MiB, which Carrier would refuse: MAPI_E_TEXT_TOO_LARGE
# (18), no file left, Carrier not started.
rm -f "$tmp/huge.json" "$tmp/huge.json.ready"
"$WINE" "$tmp/handover.exe" "$(win "$tmp/huge.json")" 5 >"$tmp/huge.log" 2>&1 &
rec=$!
for _ in $(seq 200); do [ -e "$tmp/huge.json.ready" ] && break; kill -0 "$rec" 2>/dev/null || break; sleep 0.1; done
[ -e "$tmp/huge.json.ready" ] || fail "the window's stand-in did not start: $(cat "$tmp/huge.log")"
rc=0
"$WINE" "$tmp/mapicaller.exe" M zoe@example.com 'Too long' 20000 "$photo" 'scan.jpg' 1 >/dev/null 2>&1 || rc=$?
[ "$rc" = 18 ] || fail "MAPISendMailW with a link over 1 MiB returned $rc, not MAPI_E_TEXT_TOO_LARGE (18)"
if wait "$rec"; then
	fail "Carrier was started for a link over 1 MiB: $(cat "$tmp/huge.json")"
fi
rec=""
left=$(find "$data/Links from programs" -type f | wc -l)
[ "$left" = 0 ] || fail "a link over 1 MiB left $left files in \"Links from programs\""
echo "ok MAPISendMailW of a link over 1 MiB: MAPI_E_TEXT_TOO_LARGE, Carrier not started"

# A file that is not there: MAPI_E_ATTACHMENT_NOT_FOUND (11) to the
# program, which keeps its document, and Carrier is not started.
rm -f "$tmp/none.json" "$tmp/none.json.ready"
"$WINE" "$tmp/handover.exe" "$(win "$tmp/none.json")" 5 >"$tmp/none.log" 2>&1 &
rec=$!
for _ in $(seq 200); do [ -e "$tmp/none.json.ready" ] && break; kill -0 "$rec" 2>/dev/null || break; sleep 0.1; done
[ -e "$tmp/none.json.ready" ] || fail "the window's stand-in did not start: $(cat "$tmp/none.log")"
rc=0
"$WINE" "$tmp/mapicaller.exe" W zoe@example.com 'No file' 'none' 'C:\no\such\report.pdf' report.pdf >/dev/null 2>&1 || rc=$?
[ "$rc" = 11 ] || fail "MAPISendMailW with a file that is not there returned $rc, not MAPI_E_ATTACHMENT_NOT_FOUND (11)"
if wait "$rec"; then
	fail "Carrier was started for a message whose file is not there: $(cat "$tmp/none.json")"
fi
rec=""
echo "ok MAPISendMailW with a file that is not there: MAPI_E_ATTACHMENT_NOT_FOUND, Carrier not started"
"$WINE" reg delete 'HKLM\Software\Clients\Mail' /ve /f >/dev/null 2>&1 || true
