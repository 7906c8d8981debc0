#!/usr/bin/env bash
# Carrier's window, the Windows build, under Wine on a virtual X server:
# scripts/windows/test-window.sh CARRIER.EXE. A message typed into the
# compose screen and sent with its button reaches the embedded sandbox
# exactly once. Then a second Carrier.exe started with a mail link and a
# file (as a browser's link or Explorer's Open with starts it) hands them
# to the open window and exits 0; sent with the window's button, the
# message reaches the sandbox once, with the file. Screenshots go to artifacts/screenshots/windows-*.png: look
# at them. Uses the prefix of scripts/windows/test.sh, whose own Carrier
# folders are emptied first.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 CARRIER.EXE" >&2; exit 2; }
exe=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${WINDOWS_OUT:-$root/artifacts/windows}
SHOTS=$root/artifacts/screenshots
WINE=${WINE:-$(command -v wine64 || echo /usr/lib/wine/wine64)}
WINESERVER=${WINESERVER:-$(command -v wineserver || echo /usr/lib/wine/wineserver)}
export WINEPREFIX="${WINEPREFIX:-$OUT/_prefix}" WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree=;mshtml="
[ -f "$WINEPREFIX/system.reg" ] || { echo "no Wine prefix in $WINEPREFIX: run scripts/windows/test.sh first" >&2; exit 1; }
mkdir -p "$SHOTS" "$OUT/logs"
xvfb= app=
cleanup() {
	if [ -n "$app" ]; then kill "$app" 2>/dev/null || true; fi
	"$WINESERVER" -k 2>/dev/null || true
	if [ -n "$xvfb" ]; then kill "$xvfb" 2>/dev/null || true; fi
}
trap cleanup EXIT
fail() { echo "FAIL Carrier's window under Wine: $*" >&2; tail -20 "$OUT/logs/window.log" >&2; exit 1; }
shot() { import -window root "$SHOTS/windows-$1.png"; }

for n in $(seq 120 160); do [ -e /tmp/.X11-unix/X$n ] || [ -e /tmp/.X$n-lock ] || break; done
export DISPLAY=:$n
Xvfb "$DISPLAY" -screen 0 1280x800x24 -nolisten tcp 2>/dev/null &
xvfb=$!
for _ in $(seq 50); do [ -e /tmp/.X11-unix/X$n ] && break; sleep 0.1; done

# A wineserver left from a run without a display (test.sh, test-cli.sh)
# keeps its desktop process, which has no X connection: windows could not
# be made ("Failed to create helper window"). Start afresh on this display.
"$WINESERVER" -k 2>/dev/null || true
"$WINESERVER" -w
find "$WINEPREFIX/drive_c/users" -maxdepth 4 -type d -name Carrier -path '*AppData*' -exec rm -rf {} +
"$WINE" "$exe" >"$OUT/logs/window.log" 2>&1 &
app=$!
wid=
for _ in $(seq 600); do
	wid=$(xdotool search --onlyvisible --name '^Carrier$' 2>/dev/null | head -1) && [ -n "$wid" ] && break
	kill -0 "$app" 2>/dev/null || fail "Carrier exited"
	sleep 0.1
done
[ -n "$wid" ] || fail "no window"
eval "$(xdotool getwindowgeometry --shell "$wid")"
sleep 2
shot start
click() { xdotool mousemove $((X + $1)) $((Y + $2)) click 1; sleep 0.3; }
typ() { xdotool type --delay 20 "$1"; sleep 0.2; }
subject="Typed into the window under Wine $RANDOM"
click 585 65 # To (the layout of scripts/e2e_desktop.py)
typ "zoe@example.com"
click 585 258 # Subject
typ "$subject"
click 550 360 # body
typ "Sent by the Windows build."
shot compose
click 1054 695 # Send (the layout of scripts/e2e_desktop.py)

sb=$(find "$WINEPREFIX/drive_c/users" -path '*Carrier*/sandbox/token' -printf '%h\n' | head -1)
[ -n "$sb" ] || fail "no embedded sandbox folder"
base=http://127.0.0.1:$(cat "$sb/port")
token=$(cat "$sb/token")
count() { # messages with the subject (the sandbox is new: there are no others)
	local ids id n=0
	ids=$(curl -sf -H "Authorization: Bearer $token" "$base/gmail/v1/users/me/messages" |
		python3 -c 'import json,sys; print(" ".join(m["id"] for m in json.load(sys.stdin).get("messages", [])))')
	for id in $ids; do
		curl -sf -H "Authorization: Bearer $token" "$base/gmail/v1/users/me/messages/$id?format=metadata" | grep -qF "$subject" && n=$((n + 1))
	done
	echo $n
}
found=0
for _ in $(seq 60); do
	found=$(count || echo 0)
	[ "$found" -ge 1 ] && break
	sleep 0.3
done
sleep 2 # a second send would have arrived by now
found=$(count || echo 0)
shot sent
[ "$found" -eq 1 ] || fail "the sandbox holds $found messages titled \"$subject\", not 1"
echo "ok Carrier's window under Wine: a message typed and sent reached the sandbox once"

# A second launch hands a mail link with a file to this window.
handed="$OUT/handed attachment.bin"
head -c 150000 /dev/urandom >"$handed"
subject="Handed to the open window $RANDOM"
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
link="mailto:zoe@example.com?subject=$(enc "$subject")&attach=$(enc "Z:${handed//\//\\}")"
t0=$(date +%s%N)
timeout 60 "$WINE" "$exe" "$link" >"$OUT/logs/window-second.log" 2>&1 ||
	fail "the second Carrier.exe exited $? (124: it was still running after a minute, a window of its own?): $(cat "$OUT/logs/window-second.log")"
ms=$((($(date +%s%N) - t0) / 1000000))
kill -0 "$app" 2>/dev/null || fail "the window went when the second Carrier.exe started"
sleep 2
shot handed
# Send: a note under the buttons ("From a mail link") moved them up, so by
# the keys, from the Subject field.
click 585 258
xdotool key ctrl+Return
sent() { # messages with the subject and the file (the sandbox's own mailbox)
	python3 - "$base" "$token" "$subject" "$handed" <<'PY'
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
}
found=0
for _ in $(seq 60); do
	found=$(sent || echo 0)
	[ "$found" -ge 1 ] && break
	sleep 0.3
done
sleep 2
found=$(sent || echo 0)
shot handed-sent
[ "$found" -eq 1 ] || fail "after the hand-over, the sandbox holds $found messages titled \"$subject\" with the file, not 1"
echo "ok Carrier's window under Wine: a second Carrier.exe handed a mail link and a file to it and exited 0 in $ms ms; sent, it reached the sandbox once with the file; screenshots in $SHOTS/windows-*.png"
