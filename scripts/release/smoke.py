#!/usr/bin/env python3
"""What a person does first with an installed Carrier, run on the installed
program: scripts/release/smoke.py CARRIER NAME HOME.

  1. carrier --version says FyneApp.toml's version;
  2. carrier sandbox serves (its own folder, a port of its own), and carrier
     send delivers a message with an attachment to it: exactly one message
     with that subject, the attachment's bytes intact;
  3. the window opens on a virtual X server (HOME is the person's scratch
     home, whose data folder the caller checks survives the uninstall) and
     is photographed to artifacts/screenshots/release-NAME.png; it is then
     closed with SIGTERM and must exit 0.
Exits 1 naming the first step that failed."""

import base64
import email
import email.policy
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import e2e_desktop as e2e  # noqa: E402  (the desktop tests' helpers)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    carrier, name, home = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
    want = subprocess.run([os.path.join(ROOT, "scripts/release/version.sh")], capture_output=True, text=True,
                          check=True).stdout.strip()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "XDG_DATA_HOME": os.path.join(home, ".local/share"),
        "XDG_STATE_HOME": os.path.join(home, ".local/state"),
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        "LANG": "C.UTF-8",
    }
    os.makedirs(home, exist_ok=True)
    said = subprocess.run([carrier, "--version"], env=env, capture_output=True, text=True, timeout=60)
    if said.returncode != 0 or not said.stdout.startswith("carrier %s " % want):
        e2e.fail("%s --version: exit %d, %r; want carrier %s" % (carrier, said.returncode, said.stdout, want))
    print("%s: %s" % (name, said.stdout.strip()), flush=True)

    work = tempfile.mkdtemp(prefix="carrier-smoke-")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    token = "smoke-" + base64.b32encode(os.urandom(10)).decode().lower()
    base = "http://127.0.0.1:%d" % port
    log = open(os.path.join(work, "sandbox.log"), "w")
    sb = e2e.start([carrier, "sandbox", "--addr", "127.0.0.1:%d" % port, "--data", os.path.join(work, "data"),
                    "--token", token, "--quiet"], env, stdout=log, stderr=log)

    def answers():
        if sb.poll() is not None:
            e2e.fail("carrier sandbox exited %d" % sb.returncode)
        try:
            e2e.api(base, token, "/gmail/v1/users/me/profile", timeout=2)
            return True
        except OSError:
            return False

    e2e.wait_for("carrier sandbox to answer", answers)
    attachment = os.path.join(work, "report.pdf")
    data = b"%PDF-1.4\n" + os.urandom(300_000)
    with open(attachment, "wb") as f:
        f.write(data)
    subject = "From the installed %s %d" % (name, os.getpid())
    sent = subprocess.run([carrier, "send", "--endpoint", base, "--to", "zoe@example.com", "--subject", subject,
                           "--body", "Sent by the installed Carrier.", "--attach", attachment],
                          env=dict(env, CARRIER_TOKEN=token), capture_output=True, text=True, timeout=120)
    if sent.returncode != 0:
        e2e.fail("carrier send exited %d: %s" % (sent.returncode, sent.stderr[-1000:]))
    found = 0
    for m in e2e.api(base, token, "/gmail/v1/users/me/messages").get("messages", []):
        raw = e2e.api(base, token, "/gmail/v1/users/me/messages/%s?format=raw" % m["id"])["raw"]
        msg = email.message_from_bytes(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)),
                                       policy=email.policy.default)
        if msg["Subject"] == subject and [p.get_content() for p in msg.iter_attachments()] == [data]:
            found += 1
    if found != 1:
        e2e.fail("the sandbox holds %d messages titled %r with the attachment, not 1" % (found, subject))
    print("%s: carrier sandbox served; carrier send delivered one message with its %d-byte attachment"
          % (name, len(data)), flush=True)
    sb.terminate()
    sb.wait(timeout=10)

    e2e.xvfb(env)
    wlog = open(os.path.join(work, "window.log"), "w")
    app = e2e.start([carrier], env, stdout=wlog, stderr=wlog)
    wid = e2e.carrier_window(env, app, wlog, what="the installed %s's window" % name)
    time.sleep(2)
    g = e2e.geometry(env, wid)
    if g.get("WIDTH", 0) < 600 or g.get("HEIGHT", 0) < 400:
        e2e.fail("the window is %sx%s" % (g.get("WIDTH"), g.get("HEIGHT")))
    e2e.shot(env, "release-" + name)
    if app.poll() is not None:
        e2e.fail("the window closed by itself (exit %d)" % app.returncode)
    app.send_signal(signal.SIGTERM)
    try:
        code = app.wait(timeout=30)
    except subprocess.TimeoutExpired:
        e2e.fail("the window did not end within 30 s of SIGTERM")
    if code != 0:
        # What the window wrote (a panic's trace, say) is in its log,
        # which goes with the scratch folder: said here first.
        wlog.close()
        with open(os.path.join(work, "window.log"), errors="replace") as f:
            print(f.read()[-6000:], flush=True)
        e2e.fail("the window exited %d after SIGTERM" % code)
    print("%s: the window opened (%dx%d, artifacts/screenshots/release-%s.png) and closed cleanly"
          % (name, g["WIDTH"], g["HEIGHT"], name), flush=True)


if __name__ == "__main__":
    e2e.run(main)
