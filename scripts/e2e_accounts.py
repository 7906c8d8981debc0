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
whoami`). Screenshots of each step go to artifacts/screenshots/accounts-*.

Usage: e2e_accounts.py BINARY
"""
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
from e2e_desktop import SHOTS, carrier_window, drag_from_source, fail, geometry, pixel, run, shot, start, wait_for, xdo, xvfb  # noqa: E402

# Where things are in the 1100x720 window (looked up on the screenshots).
ACCOUNT_TAB = (475, 21)
SET_UP = (550, 201)         # Set up Google sign-in…
PASTE = (470, 550)          # the assistant's paste box, under the scrolled text
VERDICT_AREA = (186, 580, 728, 58)  # x, y, width, height: the verdict's two lines under the paste box
SIGN_IN = (273, 658)        # Sign in with Google
COPY = (832, 658)           # Copy these words, at the same row's right end


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

    # The browser: the consent page the window opened, answered Allow.
    url = wait_for("the window to open the sign-in page", lambda: os.path.exists(opened) and open(opened).read().strip())
    if not url.startswith(base + "/o/oauth2/v2/auth?"):
        fail("the window opened %r, not the sandbox's sign-in page" % url)
    shot(env, "accounts-6-waiting-for-browser")
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

    # Signed in: the keychain holds the account (read by another Carrier,
    # as a terminal would), and the window lists it.
    def whoami():
        r = subprocess.run([binary, "whoami", "--endpoint", base], env=env, capture_output=True, text=True, timeout=30)
        return r.stdout if r.returncode == 0 and r.stdout.startswith("you@carrier.sandbox at " + base) else None

    wait_for("the account in the keychain", whoami)
    time.sleep(1)
    shot(env, "accounts-7-signed-in")
    print("ok: the assistant refused a broken file and a web client in words, and signed you@carrier.sandbox in; "
          "screenshots in %s" % SHOTS, flush=True)

if __name__ == "__main__":
    run(main, lambda: shutil.rmtree(SCRATCH, ignore_errors=True))
