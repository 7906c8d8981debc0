#!/usr/bin/env bash
# The Windows build of Carrier as a command under Wine:
# scripts/windows/test-cli.sh CARRIER.EXE. Its own sandbox runs in the
# background (carrier sandbox).
#  1. carrier send sends a message with an attachment; the sandbox, asked
#     over HTTP, holds exactly one message with that subject, the
#     attachment's bytes included.
#  2. carrier upload, its bandwidth capped by the sandbox, is killed
#     (SIGKILL to the Wine process: no chance to clean up) once its journal
#     shows progress; the sandbox restarts; two carrier resume start
#     together: the object holds the file's bytes, one session, one
#     completion, and the bytes after the kill went up once (the job lock,
#     LockFileEx).
# Uses the prefix of scripts/windows/test.sh.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 CARRIER.EXE" >&2; exit 2; }
exe=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${WINDOWS_OUT:-$root/artifacts/windows}
WINE=${WINE:-$(command -v wine64 || echo /usr/lib/wine/wine64)}
WINESERVER=${WINESERVER:-$(command -v wineserver || echo /usr/lib/wine/wineserver)}
export WINEPREFIX="${WINEPREFIX:-$OUT/_prefix}" WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree=;mshtml="
unset DISPLAY WAYLAND_DISPLAY
[ -f "$WINEPREFIX/system.reg" ] || { echo "no Wine prefix in $WINEPREFIX: run scripts/windows/test.sh first" >&2; exit 1; }
work=$(mktemp -d)
sandbox=
cleanup() {
	if [ -n "$sandbox" ]; then
		kill "$sandbox" 2>/dev/null || true
		wait "$sandbox" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL carrier.exe under Wine: $*" >&2; [ -f "$work/sandbox.log" ] && tail -20 "$work/sandbox.log" >&2; exit 1; }
win() { echo "Z:${1//\//\\}"; } # a Unix path as Wine names it

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
token=smoke-$RANDOM$RANDOM
base=http://127.0.0.1:$port
mkdir "$work/data" "$work/state"
start_sandbox() { # FAULTS
	"$WINE" "$exe" sandbox --addr "127.0.0.1:$port" --data "$(win "$work/data")" --token "$token" --quiet \
		--faults "$1" >>"$work/sandbox.log" 2>&1 &
	sandbox=$!
	for _ in $(seq 100); do
		curl -sf -o /dev/null -H "Authorization: Bearer $token" "$base/gmail/v1/users/me/profile" && return
		kill -0 "$sandbox" 2>/dev/null || fail "carrier sandbox exited"
		sleep 0.2
	done
	fail "carrier sandbox does not answer on $base"
}
stop_sandbox() {
	kill "$sandbox"
	wait "$sandbox" 2>/dev/null || true
	sandbox=
}
stat_of() { curl -sf -H "Authorization: Bearer $token" "$base/sandbox/v1/stats" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
start_sandbox ""

head -c 300000 /dev/urandom >"$work/attachment.bin"
subject="from Wine $RANDOM"
CARRIER_TOKEN=$token "$WINE" "$exe" send --endpoint "$base" --to zoe@example.com --subject "$subject" \
	--body "sent by the Windows build" --attach "$(win "$work/attachment.bin")" >"$work/send.log" 2>&1 ||
	{ cat "$work/send.log" >&2; fail "carrier send exited $?"; }

list=$(curl -sf -H "Authorization: Bearer $token" "$base/gmail/v1/users/me/messages") || fail "cannot list messages"
ids=$(python3 -c 'import json,sys; print(" ".join(m["id"] for m in json.loads(sys.argv[1]).get("messages", [])))' "$list")
found=0
for id in $ids; do
	curl -sf -o "$work/message.json" -H "Authorization: Bearer $token" "$base/gmail/v1/users/me/messages/$id?format=raw" ||
		fail "cannot read message $id"
	python3 - "$work/message.json" "$subject" "$work/attachment.bin" <<'PY' && found=$((found + 1)) || true
import base64, email, email.policy, json, sys
raw = base64.urlsafe_b64decode(json.load(open(sys.argv[1]))["raw"] + "==")
msg = email.message_from_bytes(raw, policy=email.policy.default)
if msg["Subject"] != sys.argv[2]:
    sys.exit(1)
want = open(sys.argv[3], "rb").read()
got = [p.get_content() for p in msg.iter_attachments()]
sys.exit(0 if got == [want] else 2)
PY
done
[ "$found" -eq 1 ] || fail "the sandbox holds $found messages titled \"$subject\" with the attachment, not 1"
echo "ok carrier.exe under Wine: carrier sandbox served, carrier send delivered one message with its attachment"

# 2. kill -9 during an upload, then two resumes at once.
stop_sandbox
start_sandbox "rate=1MB"
chunk=262144
head -c $((32 * chunk + 123)) /dev/urandom >"$work/big.bin"
CARRIER_TOKEN=$token "$WINE" "$exe" upload --url "$base/upload/storage/v1/b/wine/o?name=killed" --file "$(win "$work/big.bin")" \
	--content-type application/octet-stream --chunk-size $chunk --state-dir "$(win "$work/state")" >"$work/upload.log" 2>&1 &
upload=$!
confirmed() { # the most the journal says was confirmed
	python3 - "$work/state/jobs" <<'PY'
import glob, json, sys
n = 0
for f in glob.glob(sys.argv[1] + "/*.json") + glob.glob(sys.argv[1] + "/*.progress"):
    try:
        n = max(n, json.load(open(f)).get("confirmed", 0))
    except (OSError, ValueError):
        pass
print(n)
PY
}
for _ in $(seq 300); do
	[ "$(confirmed)" -ge $((4 * chunk)) ] && break
	kill -0 "$upload" 2>/dev/null || { cat "$work/upload.log" >&2; fail "carrier upload ended before it could be killed"; }
	sleep 0.1 # polling another process's files: there is no event to wait on
done
at_kill=$(confirmed)
[ "$at_kill" -ge $((4 * chunk)) ] || fail "no progress in the journal"
kill -KILL "$upload"
wait "$upload" 2>/dev/null || true
"$WINESERVER" -k 2>/dev/null || true # what is left of it, and the sandbox, gone at once
wait "$sandbox" 2>/dev/null || true
sandbox=
start_sandbox "rate=1MB"
sessions_before=$(stat_of sessionsCreated)
for i in 1 2; do
	CARRIER_TOKEN=$token "$WINE" "$exe" resume --endpoint "$base" --state-dir "$(win "$work/state")" >"$work/resume$i.log" 2>&1 &
	eval "resume$i=\$!"
done
rc1=0 rc2=0
wait "$resume1" || rc1=$?
wait "$resume2" || rc2=$?
[ "$rc1" -eq 0 ] || [ "$rc2" -eq 0 ] || { cat "$work"/resume*.log >&2; fail "both carrier resume failed ($rc1, $rc2)"; }
curl -sf -o "$work/back.bin" -H "Authorization: Bearer $token" "$base/storage/v1/b/wine/o/killed?alt=media" || fail "no object after resume"
cmp -s "$work/back.bin" "$work/big.bin" || fail "the object's bytes are not the file's"
size=$(stat -c %s "$work/big.bin")
received=$(stat_of bytesReceived)
[ "$(stat_of completions)" -eq 1 ] || fail "$(stat_of completions) completions after the restart, want 1"
[ "$(stat_of sessionsCreated)" -eq "$sessions_before" ] || fail "a new session was started: resume must finish the killed one"
[ "$received" -le $((size - at_kill + chunk)) ] ||
	fail "$received bytes arrived after the restart; at most $((size - at_kill + chunk)) if they went once (resumes exited $rc1 and $rc2)"
for i in 1 2; do grep -v '^[ {}]' "$work/resume$i.log" | sed -n '1p;$p' | sed "s/^/    resume $i: /"; done
echo "ok carrier.exe under Wine: killed at $at_kill bytes confirmed; two resumes (exit $rc1, $rc2) finished the same session, $received bytes sent after the restart for $((size - at_kill)) left"
