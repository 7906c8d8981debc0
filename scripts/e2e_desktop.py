#!/usr/bin/python3
"""End-to-end test of the desktop app under a virtual X server.

The real binary starts on a scratch sandbox; a file is dragged from another
program (a GTK3 drag source) onto the window with xdotool; the message is
sent; the sandbox must then hold it with that attachment. Two pictures
dragged onto the Timeline screen go to the sandbox's Google Photos, into a
new album. After a restart
on a NetworkManager that says the connection is metered (python-dbusmock on
a private bus), a large message waits until "Send anyway", then goes at the
upload speed chosen, the tray (a mocked tray host) saying so meanwhile;
its notification (a mocked notification service on the session bus)
offers Open in Mailbox, which, invoked, shows the
Mailbox. Ten files dropped at once leave the window its size, and a
message goes from the keyboard alone. A draft saved with an attachment is
reopened from the Mailbox with Edit, edited and sent: the sandbox holds
the message with the edit and the attachment, and no draft. A message
written in Compose, its window closed as the last key is typed, is back
after a restart and goes from there. Last, a file that goes as a Google
Drive link, saved again with the same bytes (a new modification time)
while its upload runs at 256 KiB/s, stops it; the row says so and offers
"Use this file", which, pressed, sends the rest: the sandbox holds exactly
one new message, whose link's file on Drive has the file's bytes.
Screenshots of every screen are kept in artifacts/screenshots/.

Usage: e2e_desktop.py BINARY
"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOTS = os.path.join(ROOT, "artifacts", "screenshots")
procs = []


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def start(args, env, **kw):
    p = subprocess.Popen(args, env=env, **kw)
    procs.append(p)
    return p


def wait_for(what, fn, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.1)
    fail("timed out waiting for " + what)


def xdo(env, *args):
    return subprocess.run(["xdotool", *map(str, args)], env=env, capture_output=True, text=True).stdout.strip()


def xvfb(env):
    """Starts a virtual X server on a display it finds free itself (a
    number chosen beforehand may be taken meanwhile by someone else's) and
    points env's DISPLAY at it once it listens. Keys repeat only after a
    minute held: on a loaded machine xdotool's key could be held long
    enough to repeat ("zoe@example.comm"). -noreset: an X server resets
    when its last client leaves, and refuses connections meanwhile, so a
    window started just after another one closed would get no display
    ("PlatformUnavailable"; seen in 1 of 17 runs of the Persian test)."""
    x = start(["Xvfb", "-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-ardelay", "60000",
               "-noreset"], env,
              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    display = x.stdout.readline().strip()
    if not display.isdigit():
        fail("the X server did not start")
    env["DISPLAY"] = ":" + display


def window(env, name):
    out = xdo(env, "search", "--onlyvisible", "--name", name)
    return out.splitlines()[0] if out else None


def carrier_window(env, app, log, what="Carrier's window", timeout=90):
    """Waits for the window of the Carrier process app, whose output goes to
    the open file log; if app ends first, fails at once with its exit code
    and the end of what it wrote."""
    def shown():
        if app.poll() is not None:
            log.flush()
            with open(log.name, errors="replace") as f:
                fail("%s: Carrier exited (%d) before it opened; it wrote:\n%s" % (what, app.returncode, f.read()[-2000:]))
        return window(env, "^Carrier$")
    return wait_for(what, shown, timeout=timeout)


def geometry(env, wid):
    g = {}
    for line in xdo(env, "getwindowgeometry", "--shell", wid).splitlines():
        k, _, v = line.partition("=")
        g[k] = int(v) if v.isdigit() else v
    return g


def shot(env, name):
    os.makedirs(SHOTS, exist_ok=True)
    subprocess.run(["import", "-window", "root", os.path.join(SHOTS, name + ".png")], env=env, check=True)


def drag_from_source(env, paths, x, y, wait_end=False):
    """Drags paths (one or a list, at once) from another program, the GTK
    source of scripts/dragsource.py, to the screen point (x, y). With
    wait_end it waits for the source to say the drop was taken;
    otherwise it gives the window a second."""
    paths = paths if isinstance(paths, list) else [paths]
    src = start(["/usr/bin/python3", os.path.join(ROOT, "scripts", "dragsource.py"), *paths, "1130", "300"], env,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if src.stdout.readline().strip() != "ready":
        fail("the drag source did not start")
    sid = wait_for("the drag source's window", lambda: window(env, "^Drag source$"))
    time.sleep(0.5)
    sg = geometry(env, sid)
    bx, by = sg["X"] + sg["WIDTH"] // 2, sg["Y"] + sg["HEIGHT"] // 2
    xdo(env, "mousemove", bx, by)
    time.sleep(0.3)
    xdo(env, "mousedown", 1)
    for i in range(1, 16):
        xdo(env, "mousemove", bx + (x - bx) * i // 15, by + (y - by) * i // 15)
        time.sleep(0.08)
    time.sleep(0.3)
    xdo(env, "mouseup", 1)
    if wait_end:
        if src.stdout.readline().strip() != "drag-end":
            fail("the drag did not end")
    else:
        time.sleep(1.0)
    src.terminate()
    src.wait()


scratches = []


def scratch_dir(prefix):
    """A scratch folder for a test's home, files and logs: removed when the
    test passes (each holds a sandbox, a journal and their files: 100 to
    300 MB), kept and named when it fails."""
    d = tempfile.mkdtemp(prefix=prefix)
    scratches.append(d)
    return d


def run(main, cleanup=None):
    """Runs a test's main, then ends every process it started (and runs
    cleanup), whether it passed or not; its scratch folders go if it
    passed."""
    passed = False
    try:
        main()
        passed = True
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        if cleanup:
            cleanup()
        for d in scratches:
            if passed:
                shutil.rmtree(d, ignore_errors=True)
            else:
                print("kept for a look: " + d, file=sys.stderr)


def api(base, token, path, method="GET", data=None, content_type=None, timeout=10):
    headers = {"Authorization": "Bearer " + token}
    if content_type:
        headers["Content-Type"] = content_type
    req = urllib.request.Request(base + path, headers=headers, method=method, data=data)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        body = r.read()
        return json.loads(body) if body.strip().startswith(b"{") else body


# Compose's Save as draft; Send while Compose edits a draft (its note
# under the buttons lifts them); a draft's Edit in the Mailbox's first row
# (the newest item), in a 1100x720 window.
SAVE_DRAFT = (822, 693)
SEND_EDITED_DRAFT = (1054, 655)
EDIT_FIRST_DRAFT = (392, 130)


def pixel(env, x, y):
    """The colour of the screen at (x, y)."""
    return subprocess.run(["import", "-window", "root", "-crop", "1x1+%d+%d" % (x, y), "-depth", "8", "rgb:-"],
                          env=env, capture_output=True, check=True).stdout


def headers(msg):
    return {h["name"]: h["value"] for h in msg["payload"]["headers"]}


def plain_text(msg):
    """The text/plain parts of a message read with format=full."""
    texts = []

    def walk(p):
        if p.get("mimeType") == "text/plain" and p["body"].get("data"):
            texts.append(base64.urlsafe_b64decode(p["body"]["data"] + "=" * (-len(p["body"]["data"]) % 4)).decode())
        for c in p.get("parts", []):
            walk(c)

    walk(msg["payload"])
    return texts


def close_window(env, wid):
    """Asks the window to close as a window manager does when its close
    button is pressed: the WM_DELETE_WINDOW message of ICCCM."""
    from Xlib import X, display, protocol
    d = display.Display(env["DISPLAY"])
    w = d.create_resource_object("window", int(wid))
    ev = protocol.event.ClientMessage(window=w, client_type=d.intern_atom("WM_PROTOCOLS"),
                                      data=(32, [d.intern_atom("WM_DELETE_WINDOW"), X.CurrentTime, 0, 0, 0]))
    w.send_event(ev, event_mask=X.NoEventMask)
    d.flush()
    d.close()


def unfinished_jobs(env):
    """The ids and states of the journal's jobs not done, failed or
    cancelled (a record torn mid-write is skipped: it is read again)."""
    jobs = os.path.join(env["XDG_STATE_HOME"], "carrier", "jobs")
    out = []
    for n in os.listdir(jobs) if os.path.isdir(jobs) else []:
        if not n.endswith(".json"):
            continue
        try:
            with open(os.path.join(jobs, n)) as f:
                j = json.load(f)
        except (OSError, ValueError):
            continue
        if j.get("state") not in ("done", "failed", "cancelled"):
            out.append((j.get("id"), j.get("state")))
    return out


def compose_kept_across_close(env, carrier, wid, binary, log, click, drag, base, token, scratch, shot_no, suffix=""):
    """A message written in Compose (recipient, subject, body, a dropped
    file), its window closed the moment the last key is typed, comes back
    when Carrier starts again, and is sent from there with Ctrl+Enter: the
    sandbox then holds it whole. Compose opens with the focus in To, so
    nothing is clicked before typing. Returns the new Carrier and its
    window."""
    subject = "Kept while Carrier was closed"
    body = "Typed the moment before the window closed."
    kept = os.path.join(env["XDG_STATE_HOME"], "carrier", "compose.json")
    before = {m["id"] for m in api(base, token, "/gmail/v1/users/me/messages").get("messages", [])}
    click(60, 21)  # Compose
    time.sleep(0.5)
    notes = os.path.join(scratch, "kept notes.txt")
    with open(notes, "w") as f:
        f.write("notes attached before closing\n")
    drag(notes, 550, 330)
    xdo(env, "type", "--delay", "20", "zoe@example.com")
    for key in ("Tab", "Tab", "Tab"):  # Cc, Bcc, Subject
        xdo(env, "key", key)
    xdo(env, "type", "--delay", "20", subject)
    xdo(env, "key", "Tab")  # the body
    xdo(env, "type", "--delay", "20", body)
    # "Nothing uploading" is this step's premise: a job of an earlier step
    # still unfinished in the journal would rightly make Carrier ask
    # before quitting (with no tray), which is not what is tested here.
    if unfinished_jobs(env):
        print("note: jobs unfinished before closing, waited for: %r" % unfinished_jobs(env), flush=True)
        wait_for("no unfinished job before closing", lambda: not unfinished_jobs(env), timeout=60)
    close_window(env, wid)
    try:
        code = carrier.wait(timeout=30)
    except subprocess.TimeoutExpired:
        print("note: unfinished jobs 30 s after the close: %r" % unfinished_jobs(env))
        ocr = subprocess.run(["sh", "-c", "import -window root png:- | tesseract - - 2>/dev/null"], env=env,
                             capture_output=True, text=True).stdout
        print("note: the screen read 30 s after the close:\n" + ocr)
        # Seen twice in about ten runs under load (2026-11-28): Carrier still
        # running 30 s after the close, its event loop idle, every job done
        # in the journal; the cause is not found. A window still shown means
        # the close request was not acted on: it is asked once more, and the
        # test says so. A window gone means Carrier hid it in the tray,
        # counting an upload as unfinished: that fails.
        shot(env, "%d-compose-close-not-acted%s" % (shot_no, suffix))
        shown = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "^Carrier$"], env=env,
                               capture_output=True, text=True).stdout.split()
        if str(wid) not in shown:
            fail("Carrier hid its window instead of quitting when it was closed with nothing uploading")
        print("note: the first close request was not acted on within 30 s (window still shown); closing again")
        close_window(env, wid)
        try:
            code = carrier.wait(timeout=30)
        except subprocess.TimeoutExpired:
            fail("Carrier did not quit when its window was closed (twice) with nothing uploading")
    if code != 0:
        fail("Carrier exited %d when its window was closed" % code)
    if not os.path.exists(kept) or os.stat(kept).st_mode & 0o077:
        fail("Compose's copy after closing: %r" % (os.path.exists(kept) and oct(os.stat(kept).st_mode)))
    carrier = start([binary], env, stdout=log, stderr=log)
    wid = carrier_window(env, carrier, log, "Carrier's window after closing with a filled Compose")
    time.sleep(2)
    shot(env, "%d-compose-restored-after-close%s" % (shot_no, suffix))
    xdo(env, "key", "ctrl+Return")  # from To, where the focus is

    def restored_sent():
        for m in api(base, token, "/gmail/v1/users/me/messages").get("messages", []):
            if m["id"] not in before:
                msg = api(base, token, "/gmail/v1/users/me/messages/%s?format=full" % m["id"])
                if headers(msg).get("Subject") == subject:
                    return msg
        return None

    msg = wait_for("the restored message sent", restored_sent, timeout=60)
    files = []

    def walk(p):
        if p.get("filename"):
            files.append(p["filename"])
        for c in p.get("parts", []):
            walk(c)

    walk(msg["payload"])
    if [t.strip() for t in plain_text(msg)] != [body] or files != ["kept notes.txt"] or "zoe@example.com" not in headers(msg).get("To", ""):
        fail("the restored message went to %r with text %r and files %r" % (headers(msg).get("To"), plain_text(msg), files))
    wait_for("Compose's copy gone once the message was queued", lambda: not os.path.exists(kept), timeout=10)
    return carrier, wid


def draft_reopened_and_sent(env, click, type_text, drag, base, token, scratch, origin, first_shot, suffix=""):
    """A draft saved from Compose with an attachment, reopened from the
    Mailbox with Edit, edited, and sent: the sandbox then holds one sent
    message with the edit and the attachment, and the draft is gone
    (issue 14: drafts that open, edit (drafts.update) and send
    (drafts.send) from the Mailbox)."""
    def drafts():
        return api(base, token, "/gmail/v1/users/me/drafts").get("drafts", [])

    def sent_ids():
        return {m["id"] for m in api(base, token, "/gmail/v1/users/me/messages?labelIds=SENT").get("messages", [])}

    if drafts():
        fail("the sandbox holds drafts before the test saved one: %r" % drafts())
    sent_before = sent_ids()
    click(60, 21)  # Compose
    click(585, 65)  # To
    type_text("zoe@example.com")
    click(585, 258)  # Subject
    type_text("Minutes, first go")
    click(550, 330)  # body
    type_text("First words.")
    agenda = os.path.join(scratch, "agenda.pdf")
    with open(agenda, "wb") as f:
        f.write(b"%PDF-1.4\n" + os.urandom(50_000))
    drag(agenda, 550, 330)
    click(*SAVE_DRAFT)
    saved = wait_for("the draft in the sandbox", drafts, timeout=60)
    if len(saved) != 1:
        fail("one draft saved, the sandbox holds %r" % saved)
    draft_id = saved[0]["id"]
    first = api(base, token, "/gmail/v1/users/me/drafts/%s?format=full" % draft_id)["message"]
    if headers(first).get("Subject") != "Minutes, first go" or [t.strip() for t in plain_text(first)] != ["First words."]:
        fail("the draft saved reads %r %r" % (headers(first).get("Subject"), plain_text(first)))

    # The Mailbox lists the draft first, with Edit: opened, its attachment
    # comes back as a file of the state folder's "opened", and Compose
    # holds the draft.
    click(375, 21)  # Mailbox
    # Its row's buttons stand where a message's row has none.
    ox, oy = origin
    wait_for("the draft's Edit in the Mailbox", lambda: pixel(env, ox + EDIT_FIRST_DRAFT[0] - 25, oy + EDIT_FIRST_DRAFT[1] - 30)
             != pixel(env, ox + EDIT_FIRST_DRAFT[0] - 25, oy + 600), timeout=20)
    shot(env, "%d-mailbox-draft%s" % (first_shot + 0, suffix))
    click(*EDIT_FIRST_DRAFT)
    opened = os.path.join(env["XDG_STATE_HOME"], "carrier", "opened")

    def reopened():
        for d in os.listdir(opened) if os.path.isdir(opened) else []:
            p = os.path.join(opened, d, "agenda.pdf")
            if os.path.exists(p) and os.path.getsize(p) == os.path.getsize(agenda):
                return p
        return None

    wait_for("the draft's attachment opened for Compose", reopened, timeout=20)
    time.sleep(0.5)
    shot(env, "%d-compose-draft-reopened%s" % (first_shot + 1, suffix))
    # Edited: the subject replaced, words added after the body's own.
    click(585, 258)  # Subject
    xdo(env, "key", "ctrl+a")
    type_text("Minutes, final")
    click(550, 330)  # body
    xdo(env, "key", "ctrl+End")
    type_text(" Finished in Carrier.")
    time.sleep(0.3)
    shot(env, "%d-compose-draft-edited%s" % (first_shot + 2, suffix))
    click(*SEND_EDITED_DRAFT)

    def sent():
        new = sent_ids() - sent_before
        return new if new and not drafts() else None

    new = wait_for("the edited draft sent and gone from the drafts", sent, timeout=60)
    if len(new) != 1:
        fail("the draft went as %d messages" % len(new))
    msg = api(base, token, "/gmail/v1/users/me/messages/%s?format=full" % new.pop())
    h = headers(msg)
    text = [t.strip() for t in plain_text(msg)]
    files = []

    def walk(p):
        if p.get("filename"):
            files.append((p["filename"], p["body"]["size"]))
        for c in p.get("parts", []):
            walk(c)

    walk(msg["payload"])
    if (h.get("Subject") != "Minutes, final" or text != ["First words. Finished in Carrier."]
            or "zoe@example.com" not in h.get("To", "") or files != [("agenda.pdf", os.path.getsize(agenda))]):
        fail("the draft went as subject %r, to %r, text %r, files %r: want the edit and the agenda"
             % (h.get("Subject"), h.get("To"), text, files))
    if "DRAFT" in msg.get("labelIds", []):
        fail("the sent draft is labelled %r" % msg.get("labelIds"))
    try:
        api(base, token, "/gmail/v1/users/me/drafts/%s" % draft_id)
        fail("the draft %s is still there after it was sent" % draft_id)
    except urllib.error.HTTPError as e:
        if e.code != 404:
            raise
    click(270, 21)  # Transfers
    time.sleep(1.0)
    shot(env, "%d-transfers-draft-sent%s" % (first_shot + 3, suffix))


# Where the metered row's "Send anyway" button is, in the light restart.
SEND_ANYWAY = (850, 214)
# The Transfers screen's upload speeds; a stopped message's "Use this
# file", on the first row.
SPEED_NO_LIMIT = (136, 106)
SPEED_256K = (237, 106)
USE_THIS_FILE = (760, 214)


def changed_file_used(env, click, compose, base, token, shot_no, suffix=""):
    """A file that goes as a Google Drive link (over Gmail's limit),
    saved again with the same bytes while its upload runs (a new
    modification time, the same content), stops its upload; the row says
    the file was saved again and offers Use this file (issue 32), which,
    pressed, sends the rest: the sandbox then holds exactly one new
    message, whose Drive link's file has the file's bytes. The upload
    goes at 256 KiB/s until it stops, so that the save falls inside it."""
    def messages():
        return {m["id"] for m in api(base, token, "/gmail/v1/users/me/messages").get("messages", [])}

    def drive_files():
        return api(base, token, "/drive/v3/files?fields=files(id,name,size,sha256Checksum)").get("files", [])

    msgs_before = messages()
    files_before = {f["id"] for f in drive_files()}
    click(270, 21)  # Transfers
    click(*SPEED_256K)
    cut = compose("The film, cut", "Saved again while it went.", "film cut.mp4", os.urandom(26_000_000))
    click(1054, 695)  # Send
    jobs = os.path.join(env["XDG_STATE_HOME"], "carrier", "jobs")

    def cut_job(pred):
        for n in os.listdir(jobs) if os.path.isdir(jobs) else []:
            if not n.endswith(".json"):
                continue
            try:
                with open(os.path.join(jobs, n)) as f:
                    j = json.load(f)
            except (OSError, ValueError):
                continue
            if j.get("path") == cut and pred(j):
                return j
        return None

    wait_for("part of the cut film on Drive", lambda: cut_job(lambda j: j.get("confirmed", 0) > 0), timeout=90)
    # Saved again: the same bytes, a new modification time.
    was = os.stat(cut).st_mtime_ns
    os.utime(cut, ns=(was + 3_000_000_000, was + 3_000_000_000))
    stopped = wait_for("the cut film's upload stopped for a changed file", lambda: cut_job(
        lambda j: j.get("state") == "failed" and (j.get("failure") or {}).get("code") == "source-changed"), timeout=60)
    if stopped.get("confirmed", 0) >= os.path.getsize(cut):
        fail("the cut film went whole before it was saved again")
    click(*SPEED_NO_LIMIT)
    # The row looks at the file in the background, then shows Use this
    # file: its button's edge stands where the row's name leaves the
    # window's background.
    bx, by = USE_THIS_FILE
    wait_for("Use this file on the stopped row", lambda: pixel(env, bx - 50, by - 29) != pixel(env, 590, by - 29), timeout=30)
    time.sleep(0.5)
    shot(env, "%d-transfers-file-saved-again%s" % (shot_no, suffix))
    click(*USE_THIS_FILE)

    def cut_sent():
        new = messages() - msgs_before
        return new if new else None

    new = wait_for("the cut film's message sent", cut_sent, timeout=90)
    time.sleep(1.0)
    shot(env, "%d-transfers-file-used%s" % (shot_no + 1, suffix))
    new = messages() - msgs_before
    if len(new) != 1:
        fail("the cut film went as %d messages" % len(new))
    files = [f for f in drive_files() if f["id"] not in files_before]
    with open(cut, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if len(files) != 1 or files[0]["name"] != "film cut.mp4" or files[0].get("sha256Checksum") != digest:
        fail("Drive's new files are %r, want the cut film's bytes" % files)
    raw = api(base, token, "/gmail/v1/users/me/messages/%s?format=raw" % new.pop())["raw"]
    raw = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("utf-8", "replace")
    if "/file/d/%s/view" % files[0]["id"] not in raw:
        fail("the cut film's message has no link to it")


def main():
    binary = os.path.abspath(sys.argv[1])
    scratch = scratch_dir("carrier-e2e-")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": scratch,
        "XDG_DATA_HOME": os.path.join(scratch, "data"),
        "XDG_STATE_HOME": os.path.join(scratch, "state"),
        "XDG_CONFIG_HOME": os.path.join(scratch, "config"),
        "XDG_CACHE_HOME": os.path.join(scratch, "cache"),
        "LANG": "C.UTF-8",
    }
    # With no display at all, the app says so in words and exits 1 (it
    # would otherwise log a line of Fyne's and stop).
    headless = dict(env)
    r = subprocess.run([binary], env=headless, capture_output=True, text=True, timeout=60)
    if r.returncode != 1 or "window cannot open" not in r.stderr or "carrier --help" not in r.stderr:
        fail("without a display: exit %d, stderr %r" % (r.returncode, r.stderr[-400:]))
    xvfb(env)
    log = open(os.path.join(scratch, "carrier.log"), "w")
    wid = carrier_window(env, start([binary], env, stdout=log, stderr=log), log)
    g = geometry(env, wid)
    wx, wy = g["X"], g["Y"]

    def click(x, y):
        xdo(env, "mousemove", wx + x, wy + y)
        xdo(env, "click", 1)
        time.sleep(0.3)

    def type_text(text):
        xdo(env, "type", "--delay", "20", text)
        time.sleep(0.2)

    time.sleep(1.5)
    click(585, 65)  # To
    type_text("zoe@example.com")
    click(585, 258)  # Subject
    type_text("Dropped from another program")
    click(550, 360)  # body
    type_text("The attachment came by drag and drop.")

    attachment = os.path.join(scratch, "r\u00e9sum\u00e9 e2e.pdf")
    with open(attachment, "wb") as f:
        f.write(b"%PDF-1.4\n" + os.urandom(200_000))

    def drag(path, tx, ty):
        """Drags path (or a list of paths, at once) from another program
        onto the window at (tx, ty)."""
        drag_from_source(env, path, wx + tx, wy + ty)

    def compose(subject, body, name, data):
        """Writes a message to zoe on a fresh Compose screen with a file
        of data dropped on it; returns the file's path."""
        click(60, 21)  # Compose
        time.sleep(0.5)
        click(585, 65)  # To
        type_text("zoe@example.com")
        click(585, 258)  # Subject
        type_text(subject)
        click(550, 330)  # body
        type_text(body)
        path = os.path.join(scratch, name)
        with open(path, "wb") as f:
            f.write(data)
        drag(path, 550, 330)
        return path

    drag(attachment, 550, 360)
    shot(env, "1-compose-with-dropped-file")

    click(1054, 695)  # Send
    sandbox = os.path.join(env["XDG_DATA_HOME"], "carrier", "sandbox")
    base = "http://127.0.0.1:" + open(os.path.join(sandbox, "port")).read().strip()
    token = open(os.path.join(sandbox, "token")).read().strip()

    def sent():
        msgs = api(base, token, "/gmail/v1/users/me/messages").get("messages", [])
        return msgs[0]["id"] if msgs else None

    mid = wait_for("the message in the sandbox", sent, timeout=60)
    time.sleep(0.5)
    shot(env, "2-transfers")
    full = api(base, token, "/gmail/v1/users/me/messages/%s?format=full" % mid)
    names = []

    def walk(p):
        if p.get("filename"):
            names.append((p["filename"], p["body"]["size"]))
        for c in p.get("parts", []):
            walk(c)

    walk(full["payload"])
    # Once the message is sent, its spool file is gone.
    spool = os.path.join(env["XDG_STATE_HOME"], "carrier", "spool")
    wait_for("an empty spool after sending", lambda: os.path.isdir(spool) and not os.listdir(spool))
    subject = [h["value"] for h in full["payload"]["headers"] if h["name"] == "Subject"]
    if subject != ["Dropped from another program"]:
        fail("subject %r" % subject)
    if names != [("r\u00e9sum\u00e9 e2e.pdf", os.path.getsize(attachment))]:
        fail("the sandbox's message has attachments %r, want the dragged file" % names)

    # The Timeline screen posts to Google Photos: two pictures dragged on
    # it at once go into a new album, and the sandbox's Photos then holds
    # both, byte for byte, in that album.
    click(165, 21)
    picture = os.path.join(scratch, "carrier icon.png")
    shutil.copy(os.path.join(ROOT, "assets", "icon.png"), picture)
    # Identical bytes would be one media item: the second picture differs
    # after the PNG's end, where no viewer reads.
    second = os.path.join(scratch, "second picture.png")
    with open(picture, "rb") as f, open(second, "wb") as g:
        g.write(f.read() + os.urandom(64))
    drag([picture, second], 550, 300)
    click(450, 517)  # Album
    type_text("E2E holiday")
    time.sleep(0.5)
    shot(env, "3-timeline-photos-two-pictures")
    click(995, 654)  # Post to Google Photos

    def album():
        albums = api(base, token, "/v1/albums").get("albums", [])
        done = [a for a in albums if a.get("title") == "E2E holiday" and a.get("mediaItemsCount") == "2"]
        return done[0] if done else None

    made = wait_for("two pictures in the album in the sandbox's Photos", album, timeout=90)
    if len(api(base, token, "/v1/albums").get("albums", [])) != 1:
        fail("the sandbox's Photos has more than one album")
    found = api(base, token, "/v1/mediaItems:search", "POST", json.dumps({"albumId": made["id"]}).encode(),
                "application/json").get("mediaItems", [])
    got = {}
    for it in found:
        got[it["filename"]] = api(base, token, it["baseUrl"][len(base):] + "=d")
    want = {}
    for p in (picture, second):
        with open(p, "rb") as f:
            want[os.path.basename(p)] = f.read()
    if got != want:
        fail("the album holds %r, want the two pictures' bytes" % sorted(got))
    click(270, 21)  # Transfers
    time.sleep(1.0)
    shot(env, "4-transfers-photos-batch")

    click(375, 21)  # Mailbox
    time.sleep(1.5)
    click(200, 130)  # the sent message
    time.sleep(1.5)
    shot(env, "5-mailbox-message")
    click(475, 21)
    time.sleep(0.8)
    shot(env, "6-account")

    # A file over 25 MB goes as a Google Drive link: Compose says so before
    # sending, Transfers shows the upload to Drive under the message, and
    # the sandbox then holds the message with the link and the file on
    # its Drive, shared with the recipient.
    film = compose("The holiday film", "Too large for mail: it comes as a link.",
                   "holiday film.mp4", os.urandom(40_000_000))
    time.sleep(0.5)
    shot(env, "9-compose-drive-link")
    # Slowed to about 16 MB/s, so that the upload is seen under way.
    api(base, token, "/sandbox/v1/faults", "PUT", b"rate=16MB")
    click(1054, 695)  # Send
    time.sleep(1.5)
    shot(env, "10-transfers-drive-parts")

    def film_sent():
        msgs = api(base, token, "/gmail/v1/users/me/messages").get("messages", [])
        return msgs[0]["id"] if len(msgs) == 2 else None

    fid = wait_for("the message with the Drive link", film_sent, timeout=90)
    api(base, token, "/sandbox/v1/faults", "PUT", b"none")
    time.sleep(1.0)
    shot(env, "11-transfers-drive-sent")
    files = api(base, token, "/drive/v3/files?fields=files(id,name,size,sha256Checksum)").get("files", [])
    if len(files) != 1 or files[0]["name"] != "holiday film.mp4" or int(files[0]["size"]) != os.path.getsize(film):
        fail("Drive holds %r, want the film" % files)
    with open(film, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if files[0].get("sha256Checksum") != digest:
        fail("the file on Drive is not the film: %r" % files[0])
    perms = api(base, token, "/drive/v3/files/%s/permissions?fields=permissions(type,emailAddress)" % files[0]["id"]).get("permissions", [])
    if not any(p.get("type") == "user" and p.get("emailAddress") == "zoe@example.com" for p in perms):
        fail("the film is not shared with zoe: %r" % perms)
    raw = api(base, token, "/gmail/v1/users/me/messages/%s?format=raw" % fid)["raw"]
    raw = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("utf-8", "replace")
    if "/file/d/%s/view" % files[0]["id"] not in raw:
        fail("the message has no link to the film")
    full = api(base, token, "/gmail/v1/users/me/messages/%s?format=full" % fid)
    names = []
    walk(full["payload"])
    if names:
        fail("the message with the link has attachments %r" % names)

    # Restarted in the light theme: the journal keeps the transfers, and
    # a crash's leftovers in the spool (older than the sweep's grace of an
    # hour) are swept.
    procs[1].terminate()
    procs[1].wait(timeout=10)
    leftovers = [os.path.join(spool, n) for n in ("msg-crashed.eml.tmp", "msg-orphan.eml")]
    for p in leftovers:
        with open(p, "w") as f:
            f.write("From: a crash\r\n")
        os.utime(p, (time.time() - 7200, time.time() - 7200))
    # The restarted app hears a NetworkManager (python-dbusmock on a
    # private bus standing in for the system bus) that will say the
    # connection is metered.
    bus = start(["dbus-daemon", "--session", "--nofork", "--print-address"], env,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    bus_addr = bus.stdout.readline().strip()
    start(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "networkmanager"],
          dict(env, DBUS_SYSTEM_BUS_ADDRESS=bus_addr), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import dbus
    nm_bus = dbus.bus.BusConnection(bus_addr)
    wait_for("the mocked NetworkManager", lambda: nm_bus.name_has_owner("org.freedesktop.NetworkManager"))
    nm = nm_bus.get_object("org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager")
    nm.AddProperty("org.freedesktop.NetworkManager", "Metered", dbus.UInt32(2), dbus_interface="org.freedesktop.DBus.Mock")
    # The same bus as the session's, where the desktop's notification
    # service lives: Carrier sends its notifications with actions there.
    start(["/usr/bin/python3", "-m", "dbusmock", "--session", "--template", "notification_daemon",
           "--parameters", '{"capabilities": "body actions"}'],
          dict(env, DBUS_SESSION_BUS_ADDRESS=bus_addr), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for("the mocked notification service", lambda: nm_bus.name_has_owner("org.freedesktop.Notifications"))
    # And a tray host (a mocked StatusNotifierWatcher): Carrier's tray menu
    # and tooltip are then read over the bus, as a panel reads them.
    start(["/usr/bin/python3", "-m", "dbusmock", "--session", "org.kde.StatusNotifierWatcher", "/StatusNotifierWatcher",
           "org.kde.StatusNotifierWatcher"],
          dict(env, DBUS_SESSION_BUS_ADDRESS=bus_addr), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for("the mocked tray host", lambda: nm_bus.name_has_owner("org.kde.StatusNotifierWatcher"))
    watcher = nm_bus.get_object("org.kde.StatusNotifierWatcher", "/StatusNotifierWatcher")
    watcher.AddMethod("org.kde.StatusNotifierWatcher", "RegisterStatusNotifierItem", "s", "", "",
                      dbus_interface="org.freedesktop.DBus.Mock")
    watcher.AddProperty("org.kde.StatusNotifierWatcher", "IsStatusNotifierHostRegistered", True,
                        dbus_interface="org.freedesktop.DBus.Mock")
    env2 = dict(env, FYNE_THEME="light", DBUS_SYSTEM_BUS_ADDRESS=bus_addr, DBUS_SESSION_BUS_ADDRESS=bus_addr)
    carrier2 = start([binary], env2, stdout=log, stderr=log)
    wid = carrier_window(env2, carrier2, log, "Carrier's window after a restart")
    time.sleep(2)
    click(270, 21)
    time.sleep(1)
    shot(env2, "7-transfers-after-restart-light")
    if any(os.path.exists(p) for p in leftovers):
        fail("the spool's leftovers survived a restart: %r" % os.listdir(spool))
    # Clear finished forgets both jobs; nothing of them stays but the
    # person's own picture.
    click(1028, 61)
    jobs = os.path.join(env["XDG_STATE_HOME"], "carrier", "jobs")
    wait_for("the journal emptied by Clear finished",
             lambda: not [n for n in os.listdir(jobs) if n.endswith(".json")], timeout=10)
    time.sleep(0.5)
    shot(env2, "8-transfers-cleared-light")
    if os.listdir(spool) or not os.path.exists(picture):
        fail("after Clear finished: spool %r, picture kept %r" % (os.listdir(spool), os.path.exists(picture)))

    # On a metered connection a large message waits, says so, and goes
    # when the person says "Send anyway", at the upload speed chosen.
    nm.SetProperty("/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager", "Metered",
                   dbus.UInt32(1), dbus_interface="org.freedesktop.DBus.Mock")
    click(438, 106)  # Upload speed: 4 MiB/s
    compose("Scans for the notary", "Sent over a phone's hotspot.", "scans.pdf",
            b"%PDF-1.4\n" + os.urandom(20_000_000))
    time.sleep(0.5)
    click(1054, 695)  # Send
    time.sleep(1.5)
    shot(env2, "12-transfers-metered-light")
    jobs_now = [json.load(open(os.path.join(jobs, n))) for n in os.listdir(jobs) if n.endswith(".json")]
    if len(jobs_now) != 1 or api(base, token, "/gmail/v1/users/me/messages").get("resultSizeEstimate", 0) != 2:
        fail("on a metered connection: jobs %r, or the sandbox got the large message" % [j.get("state") for j in jobs_now])

    def tray():
        """The tray's tooltip and its menu's labels, as a panel reads them."""
        items = [n for n in nm_bus.list_names() if str(n).startswith("org.kde.StatusNotifierItem")]
        if not items:
            return None
        item = nm_bus.get_object(items[0], "/StatusNotifierItem")
        tip = item.Get("org.kde.StatusNotifierItem", "ToolTip", dbus_interface="org.freedesktop.DBus.Properties")
        menu = nm_bus.get_object(items[0], "/StatusNotifierItem/menu")
        _, (_, _, children) = menu.GetLayout(0, -1, ["label"], dbus_interface="com.canonical.dbusmenu")
        return str(tip[2]), [str(c[1].get("label", "")) for c in children]

    def tray_says(words):
        t = tray()
        return t if t and t[0] == "Carrier: " + words and t[1][:1] == [words] else None

    tip, labels = wait_for("the tray to say one upload waits", lambda: tray_says("1 upload · 0%"), timeout=20)
    if "Pause all" not in labels or "Resume all" not in labels or "Upload speed" not in labels:
        fail("the tray's menu: %r" % labels)
    click(SEND_ANYWAY[0], SEND_ANYWAY[1])
    time.sleep(2.0)
    shot(env2, "13-transfers-send-anyway-limited-light")

    def scans_sent():
        msgs = api(base, token, "/gmail/v1/users/me/messages").get("messages", [])
        return msgs[0]["id"] if len(msgs) == 3 else None

    wait_for("the large message sent anyway", scans_sent, timeout=120)
    wait_for("the tray to say nothing is left", lambda: tray_says("No uploads"), timeout=20)

    # Its notification offers Open in Mailbox; pressed, the window shows
    # the Mailbox.
    notifier = nm_bus.get_object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")

    def scans_notified():
        """The notification's id (the mock numbers them from 1) and its
        Notify arguments."""
        notes = [args for _, method, args in notifier.GetCalls(dbus_interface="org.freedesktop.DBus.Mock")
                 if method == "Notify"]
        for i, args in enumerate(notes):
            if "Scans for the notary" in str(args[4]):
                return i + 1, args
        return None

    notify_id, args = wait_for("the sent message's notification", scans_notified, timeout=20)
    actions = [str(a) for a in args[5]]
    if str(args[3]) != "Carrier: sent" or "mailbox" not in actions[::2] or "Open in Mailbox" not in actions[1::2]:
        fail("the sent message's notification: %r %r" % (str(args[3]), actions))
    notifier.EmitSignal("org.freedesktop.Notifications", "ActionInvoked", "us", [dbus.UInt32(notify_id), "mailbox"],
                        dbus_interface="org.freedesktop.DBus.Mock")
    time.sleep(2.0)
    shot(env2, "14-mailbox-from-notification-light")

    # Ten files dropped at once leave the window its size, every control
    # on screen (the list turns pages), and a message goes from the
    # keyboard: one click into To, then Tab to Subject and the body, and
    # Ctrl+Enter from inside the body, which a text field used to swallow.
    nm.SetProperty("/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager", "Metered",
                   dbus.UInt32(2), dbus_interface="org.freedesktop.DBus.Mock")
    click(60, 21)  # Compose
    time.sleep(0.5)
    before = geometry(env2, wid)
    pages = []
    for i in range(10):
        p = os.path.join(scratch, "page %02d.pdf" % (i + 1))
        with open(p, "wb") as f:
            f.write(b"%PDF-1.4\n" + os.urandom(30_000 + i))
        pages.append(p)
    drag(pages, 550, 330)
    after = geometry(env2, wid)
    if (after["WIDTH"], after["HEIGHT"]) != (before["WIDTH"], before["HEIGHT"]):
        fail("ten attachments resized the window from %dx%d to %dx%d" % (before["WIDTH"], before["HEIGHT"], after["WIDTH"], after["HEIGHT"]))
    click(585, 65)  # To
    type_text("zoe@example.com")
    for key in ("Tab", "Tab", "Tab"):  # Cc, Bcc, Subject
        xdo(env2, "key", key)
    type_text("Ten pages, sent from the keyboard")
    xdo(env2, "key", "Tab")  # the body
    type_text("Sent with Ctrl+Enter.")
    # Tab leaves the body (typing no tab character), Shift+Tab comes back.
    xdo(env2, "key", "Tab")
    xdo(env2, "key", "shift+Tab")
    time.sleep(0.5)
    shot(env2, "15-compose-ten-files-keyboard-light")
    xdo(env2, "key", "ctrl+Return")

    def keyboard_sent():
        msgs = api(base, token, "/gmail/v1/users/me/messages").get("messages", [])
        return msgs[0]["id"] if len(msgs) == 4 else None

    kid = wait_for("the message sent with Ctrl+Enter", keyboard_sent, timeout=60)
    time.sleep(0.5)
    shot(env2, "16-transfers-keyboard-sent-light")
    full = api(base, token, "/gmail/v1/users/me/messages/%s?format=full" % kid)
    subject = [h["value"] for h in full["payload"]["headers"] if h["name"] == "Subject"]
    names = []
    walk(full["payload"])
    if subject != ["Ten pages, sent from the keyboard"] or sorted(n for n, _ in names) != sorted(os.path.basename(p) for p in pages):
        fail("the keyboard's message: subject %r, attachments %r" % (subject, names))
    texts = []

    def text_of(p):
        if p.get("mimeType") == "text/plain" and p["body"].get("data"):
            texts.append(base64.urlsafe_b64decode(p["body"]["data"] + "=" * (-len(p["body"]["data"]) % 4)).decode())
        for c in p.get("parts", []):
            text_of(c)

    text_of(full["payload"])
    if len(texts) != 1 or texts[0].strip() != "Sent with Ctrl+Enter.":
        fail("the keyboard's message reads %r: Tab or Ctrl+Enter typed into the body" % texts)

    # A draft saved, reopened from the Mailbox, edited and sent.
    draft_reopened_and_sent(env2, click, type_text, drag, base, token, scratch, (wx, wy), 17, "-light")

    # A filled Compose, its window closed: nothing is asked, nothing lost.
    compose_kept_across_close(env2, carrier2, wid, binary, log, click, drag, base, token, scratch, 21, "-light")

    # A file going as a Drive link, saved again unchanged under its
    # upload: Use this file sends it on, one message.
    changed_file_used(env2, click, compose, base, token, 22, "-light")
    print("ok: dragged %s onto Carrier, sent it; the sandbox holds message %s with it; screenshots in %s"
          % (os.path.basename(attachment), mid, SHOTS), flush=True)


if __name__ == "__main__":
    run(main)
