#!/usr/bin/python3
"""End-to-end test of the Google set-up assistant, under a virtual X server.

The real binary starts with a fresh configuration, its embedded sandbox
standing in for Google (CARRIER_SANDBOX_SIGNIN=1), a Secret Service of its
own (gnome-keyring-daemon on a private session bus) and a "browser" that
hands the sign-in address to this script (an xdg-open first in PATH). On
the Account screen the assistant opens; a broken client file is dropped on
it from another program and refused in words, a web client's JSON is
pasted and refused in words (each read back from the window: the verdict
is selected and copied, as a person would copy it); then the sandbox's
own Desktop client file is dropped, Sign in with Google is pressed, the
sandbox's consent page is answered over HTTP, and the account is listed
as signed in (the window's list, and the keychain through `carrier
whoami`). Then a message whose file goes as a Google Drive link (over
Gmail's limit) is sent at the window's 256 KiB/s (Drive, not asked for at
the first sign-in, is allowed in the browser when the window asks); once
part of the file is on Drive the account is signed out with "Keep them
waiting" (nothing is sent meanwhile), signed in again from its row (the
sign-in must ask for Drive's scope again; the window says why), and the
message must finish once: one message in the sandbox, its link's file on
Drive with the file's bytes. Screenshots of each step go to
artifacts/screenshots/accounts-*.

Usage: e2e_accounts.py BINARY
"""
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

SCRATCH = tempfile.mkdtemp(prefix="carrier-e2e-accounts-")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from e2e_desktop import SHOTS, api, carrier_window, drag_from_source, fail, geometry, pixel, run, shot, start, wait_for, xdo, xvfb  # noqa: E402

# Where things are in the 1100x720 window (looked up on the screenshots).
ACCOUNT_TAB = (475, 21)
SET_UP = (550, 201)         # Set up Google sign-in…
PASTE = (470, 550)          # the assistant's paste box, under the scrolled text
VERDICT_AREA = (186, 580, 728, 58)  # x, y, width, height: the verdict's two lines under the paste box
SIGN_IN = (273, 658)        # Sign in with Google
COPY = (832, 658)           # Copy these words, at the same row's right end
SIGN_OUT = (1037, 162)      # Sign out… on the signed-in account's row
KEEP_WAITING = (380, 406)   # Keep them waiting, in the question before signing out
SIGN_IN_AGAIN = (1048, 201)  # Sign in, on the signed-out account's row
SPEED_NO_LIMIT = (136, 106)  # the Transfers screen's upload speeds
SPEED_256K = (237, 106)
# Compose with an account signed in (a From row above To).
COMPOSE_TO = (585, 110)
COMPOSE_SUBJECT = (585, 297)
COMPOSE_BODY = (550, 420)
COMPOSE_SEND = (1054, 685)
ALLOW_DRIVE = (768, 423)    # Allow…, when sending asks for Drive


def clipboard(env, text=None):
    """Sets the X clipboard to text (owned by a helper until the next
    call) or, with none, returns what it holds: what a person pastes, or
    what the window copied."""
    code = """
import sys, gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, Gtk
cb = Gtk.Clipboard.get(Gdk.SELECTION_CLIPBOARD)
if len(sys.argv) > 1:
    cb.set_text(sys.argv[1], -1)
    cb.store()
    print("ready", flush=True)
    Gtk.main()
else:
    t = cb.wait_for_text()
    sys.stdout.write(t or "")
"""
    if text is None:
        return subprocess.run(["/usr/bin/python3", "-c", code], env=env, capture_output=True, text=True, timeout=20).stdout
    p = start(["/usr/bin/python3", "-c", code, text], env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if p.stdout.readline().strip() != "ready":
        fail("the clipboard helper did not start")
    return p


def main():
    binary = os.path.abspath(sys.argv[1])
    scratch = SCRATCH
    bindir = os.path.join(scratch, "bin")
    runtime = os.path.join(scratch, "run")
    for d in (bindir, runtime):
        os.makedirs(d, mode=0o700)
    # The "browser": the address Carrier opens lands in a file this
    # script reads, and the script answers the consent page itself.
    opened = os.path.join(scratch, "browser.log")
    with open(os.path.join(bindir, "xdg-open"), "w") as f:
        f.write('#!/bin/sh\nprintf "%%s\\n" "$1" >> "%s"\n' % opened)
    os.chmod(os.path.join(bindir, "xdg-open"), 0o755)
    env = {
        "PATH": bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": scratch,
        "XDG_DATA_HOME": os.path.join(scratch, "data"),
        "XDG_STATE_HOME": os.path.join(scratch, "state"),
        "XDG_CONFIG_HOME": os.path.join(scratch, "config"),
        "XDG_CACHE_HOME": os.path.join(scratch, "cache"),
        "XDG_RUNTIME_DIR": runtime,
        "LANG": "C.UTF-8",
    }
    xvfb(env)
    # A keychain of its own: a private session bus with an unlocked
    # gnome-keyring, so no one's own keychain is touched.
    bus = start(["dbus-daemon", "--session", "--nofork", "--print-address"], env,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    env["DBUS_SESSION_BUS_ADDRESS"] = bus.stdout.readline().strip()
    keyring = start(["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"], env,
                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    keyring.stdin.write("scratch-password")
    keyring.stdin.close()

    def bus_has(name):
        r = subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                            "org.freedesktop.DBus.NameHasOwner", "string:" + name], env=env, capture_output=True, text=True)
        return "boolean true" in r.stdout

    wait_for("the Secret Service", lambda: bus_has("org.freedesktop.secrets"))

    log = open(os.path.join(scratch, "carrier.log"), "w")
    env["CARRIER_SANDBOX_SIGNIN"] = "1"
    wid = carrier_window(env, start([binary], env, stdout=log, stderr=log), log)
    g = geometry(env, wid)
    wx, wy = g["X"], g["Y"]
    sandbox = os.path.join(env["XDG_DATA_HOME"], "carrier", "sandbox")
    base = "http://127.0.0.1:" + wait_for("the sandbox's port", lambda: os.path.exists(os.path.join(sandbox, "port"))
                                          and open(os.path.join(sandbox, "port")).read().strip())

    def click(x, y, button=1):
        xdo(env, "mousemove", wx + x, wy + y)
        xdo(env, "click", button)
        time.sleep(0.3)

    def drag(path, tx, ty):
        """Drags path from another program onto the window at (tx, ty);
        the drag ends when the window has taken the file."""
        drag_from_source(env, path, wx + tx, wy + ty, wait_end=True)

    def verdict_top():
        """The y of the verdict's first line, under the paste box (a room of
        two lines; a longer verdict grows upwards). Found in a screenshot as the
        topmost row of the verdict's own colours (the theme's error red or
        success green), which no other text of the assistant has."""
        x, y, w, h = VERDICT_AREA
        raw = subprocess.run(["import", "-window", "root", "-crop", "%dx%d+%d+%d" % (w, h, wx + x, wy + y), "-depth", "8",
                              "rgb:-"], env=env, capture_output=True, check=True).stdout
        for row in range(h):
            line = raw[row * w * 3:(row + 1) * w * 3]
            for i in range(0, len(line), 3):
                r, g_, b = line[i], line[i + 1], line[i + 2]
                if (r > 180 and g_ < 140 and b < 140) or (g_ > 150 and r < 150 and b < 150):
                    return y + row
        return None

    def verdict():
        """The assistant's verdict as the window has it: its Copy button
        puts the words on the clipboard, read from there."""
        wait_for("the verdict on screen", verdict_top, timeout=10)
        click(*COPY)
        time.sleep(0.2)
        return " ".join(clipboard(env).split())

    def refused(what, words):
        """Waits for the verdict to refuse in words; returns them."""
        said = []

        def check():
            said[:] = [verdict()]
            return said[0] if said[0].startswith("Not this file:") and all(w in said[0] for w in words) else None

        deadline = time.time() + 20
        while time.time() < deadline:
            v = check()
            if v:
                return v
            time.sleep(0.2)
        fail("%s: the assistant says %r, want a refusal naming %r" % (what, said[0] if said else "", words))

    def differ(a, b):
        return pixel(env, wx + a[0], wy + a[1]) != pixel(env, wx + b[0], wy + b[1])

    time.sleep(1.5)
    click(*ACCOUNT_TAB)
    # A chosen tab is filled with the theme's primary colour.
    wait_for("the Account screen", lambda: differ((ACCOUNT_TAB[0] - 45, 8), (600, 8)), timeout=20)
    shot(env, "accounts-1-no-account")
    click(*SET_UP)
    # The dialog's face differs from the dimmed window around it.
    wait_for("the assistant", lambda: differ((250, 650), (100, 650)), timeout=20)
    time.sleep(0.5)
    shot(env, "accounts-2-assistant")

    # A broken file (a download cut short), dropped from another program.
    broken = os.path.join(scratch, "client_secret_cut_short.json")
    with open(broken, "w") as f:
        f.write('{"installed":{"client_id":"1234-abc.apps.googleusercontent.com","auth_uri":"https://acc')
    drag(broken, 550, 300)
    said = refused("a broken file", ["not the JSON Google Cloud Console downloads", '"Desktop app"'])
    shot(env, "accounts-3-broken-file-refused")
    print("a broken file: " + said, flush=True)

    # A web application's client, pasted into the assistant.
    web = json.dumps({"web": {"client_id": "1234-web.apps.googleusercontent.com", "project_id": "carrier-e2e",
                              "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                              "token_uri": "https://oauth2.googleapis.com/token", "client_secret": "GOCSPX-e2e",
                              "redirect_uris": ["https://example.com/callback"]}})
    holder = clipboard(env, web)
    click(*PASTE)
    xdo(env, "key", "ctrl+v")
    said = refused("a web client", ['"Web application"', "cannot come back to Carrier", '"Desktop app"'])
    shot(env, "accounts-4-web-client-refused")
    print("a web client: " + said, flush=True)
    holder.terminate()
    holder.wait()
    # Emptied, the assistant waits for a file again.
    click(*PASTE)
    xdo(env, "key", "ctrl+a")
    xdo(env, "key", "Delete")

    # The sandbox's own Desktop client, as Cloud Console would download
    # one: its client and OAuth addresses are the sandbox's.
    good = os.path.join(scratch, "client_secret_carrier-sandbox.json")
    with open(good, "w") as f:
        json.dump({"installed": {"client_id": "carrier-sandbox", "project_id": "carrier-e2e",
                                 "auth_uri": base + "/o/oauth2/v2/auth", "token_uri": base + "/token",
                                 "redirect_uris": ["http://localhost"]}}, f)
    drag(good, 550, 300)

    def accepted():
        v = verdict()
        return v if v.startswith("A Desktop app client (carrier-sandbox)") else None

    said = wait_for("the sandbox's client file accepted", accepted, timeout=20)
    print("the sandbox's client: " + said, flush=True)
    shot(env, "accounts-5-client-accepted")
    click(*SIGN_IN)

    def answer(nth, before=None):
        """The browser: the nth consent page the window opened, answered
        Allow; returns its address (before, if given, runs first)."""
        def nth_url():
            lines = open(opened).read().split() if os.path.exists(opened) else []
            return lines[nth - 1] if len(lines) >= nth else None

        url = wait_for("the window to open sign-in page %d" % nth, nth_url)
        if not url.startswith(base + "/o/oauth2/v2/auth?"):
            fail("the window opened %r, not the sandbox's sign-in page" % url)
        if before:
            before(url)
        with urllib.request.urlopen(url, timeout=10) as r:
            page = r.read().decode()
        m = re.search(r'name="id" value="([^"]+)"', page)
        if not m:
            fail("the sandbox's consent page has no form: %r" % page[:400])
        form = urllib.parse.urlencode({"id": m.group(1), "decision": "allow"}).encode()
        # The sandbox answers with the way back to Carrier's listener, whose
        # page says how the sign-in ended.
        with urllib.request.urlopen(urllib.request.Request(base + "/o/oauth2/v2/consent", data=form), timeout=30) as r:
            done = r.read().decode()
        if "you@carrier.sandbox" not in done:
            fail("Carrier's page after consent: %r" % done[:400])
        return url

    answer(1, lambda url: shot(env, "accounts-6-waiting-for-browser"))

    # Signed in: the keychain holds the account (read by another Carrier,
    # as a terminal would), and the window lists it.
    def whoami():
        r = subprocess.run([binary, "whoami", "--endpoint", base], env=env, capture_output=True, text=True, timeout=30)
        return r.stdout if r.returncode == 0 and r.stdout.startswith("you@carrier.sandbox at " + base) else None

    wait_for("the account in the keychain", whoami)
    time.sleep(1)
    shot(env, "accounts-7-signed-in")
    # A message whose file goes as a Google Drive link, sent slowly
    # (the window's 256 KiB/s); the account signed out while part of the
    # file is on Drive, its message kept waiting; signed in again, the
    # sign-in asks for Drive again and says why, and the message goes,
    # once.
    def type_text(text):
        xdo(env, "type", "--delay", "20", text)
        time.sleep(0.2)

    def at(point):
        """The colour of the window at point: what stands there changes it."""
        return pixel(env, wx + point[0], wy + point[1])

    token = open(os.path.join(sandbox, "token")).read().strip()

    def messages():
        return api(base, token, "/gmail/v1/users/me/messages").get("messages", [])

    if messages():
        fail("the sandbox holds messages before one was sent: %r" % messages())
    click(270, 21)  # Transfers
    click(*SPEED_256K)
    click(60, 21)  # Compose
    time.sleep(0.5)
    click(*COMPOSE_TO)
    type_text("zoe@example.com")
    click(*COMPOSE_SUBJECT)
    type_text("The film, while signed out")
    click(*COMPOSE_BODY)
    type_text("It waited for the account.")
    film = os.path.join(scratch, "signed out film.mp4")
    with open(film, "wb") as f:
        f.write(os.urandom(26_000_000))
    drag(film, *COMPOSE_BODY)
    time.sleep(0.5)
    shot(env, "accounts-8-compose-drive-link")
    was = at(ALLOW_DRIVE)
    click(*COMPOSE_SEND)
    # Drive was not asked for at the first sign-in: the window asks now,
    # and Allow… opens the browser.
    wait_for("the question about Drive", lambda: at(ALLOW_DRIVE) != was, timeout=20)
    time.sleep(0.5)
    shot(env, "accounts-9-allow-drive")
    click(*ALLOW_DRIVE)
    answer(2)
    jobs = os.path.join(env["XDG_STATE_HOME"], "carrier", "jobs")

    def film_job(pred):
        for n in os.listdir(jobs) if os.path.isdir(jobs) else []:
            if not n.endswith(".json"):
                continue
            try:
                with open(os.path.join(jobs, n)) as f:
                    j = json.load(f)
            except (OSError, ValueError):
                continue
            if j.get("path") == film and pred(j):
                return j
        return None

    wait_for("part of the film on Drive", lambda: film_job(lambda j: j.get("confirmed", 0) > 0), timeout=90)
    click(270, 21)  # Transfers
    time.sleep(0.5)
    shot(env, "accounts-10-transfers-drive-link")
    click(*ACCOUNT_TAB)
    time.sleep(0.5)
    was, was_row = at(KEEP_WAITING), at(SIGN_IN_AGAIN)
    click(*SIGN_OUT)
    wait_for("the question before signing out", lambda: at(KEEP_WAITING) != was, timeout=20)
    time.sleep(0.5)
    shot(env, "accounts-11-sign-out-asks")
    click(*KEEP_WAITING)
    # Signed out, the account's row stays, with Sign in.
    wait_for("the signed-out account's Sign in", lambda: at(SIGN_IN_AGAIN) != was_row, timeout=20)
    wait_for("the keychain without the account", lambda: not whoami(), timeout=20)
    time.sleep(0.5)
    shot(env, "accounts-12-signed-out-waiting")
    if messages():
        fail("the film's message went while its account was signed out")
    click(*SIGN_IN_AGAIN)

    def asks_drive(url):
        scope = urllib.parse.parse_qs(urllib.parse.urlparse(url).query).get("scope", [""])[0].split()
        if "https://www.googleapis.com/auth/drive.file" not in scope:
            fail("signing in again with a Drive link waiting asks for %r, not Drive" % scope)
        time.sleep(1.5)
        shot(env, "accounts-13-sign-in-again-asks-drive")

    answer(3, asks_drive)
    click(270, 21)  # Transfers
    click(*SPEED_NO_LIMIT)
    wait_for("the film's message sent", messages, timeout=90)
    wait_for("the film's upload done", lambda: film_job(lambda j: j.get("state") == "done"), timeout=30)
    time.sleep(1)
    shot(env, "accounts-14-sent-once")
    sent = messages()
    if len(sent) != 1:
        fail("the film went as %d messages" % len(sent))
    files = api(base, token, "/drive/v3/files?fields=files(id,name,size,sha256Checksum)").get("files", [])
    with open(film, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if len(files) != 1 or files[0]["name"] != "signed out film.mp4" or files[0].get("sha256Checksum") != digest:
        fail("Drive holds %r, want the film's bytes once" % files)
    raw = api(base, token, "/gmail/v1/users/me/messages/%s?format=raw" % sent[0]["id"])["raw"]
    raw = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("utf-8", "replace")
    if "/file/d/%s/view" % files[0]["id"] not in raw:
        fail("the film's message has no link to it")
    print("ok: the assistant refused a broken file and a web client in words, and signed you@carrier.sandbox in; "
          "a message with a Drive link went once across a sign-out and a sign-in; "
          "screenshots in %s" % SHOTS, flush=True)

if __name__ == "__main__":
    run(main, lambda: shutil.rmtree(SCRATCH, ignore_errors=True))
