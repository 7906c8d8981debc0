#!/usr/bin/python3
"""The desktop app started in Persian (LANGUAGE=fa) under a virtual X server.

The real binary opens on a scratch sandbox in each theme; a message is sent
from Compose (so Transfers has a row), and every screen is photographed
into artifacts/screenshots/fa-*.png, to be looked at: Compose mirrored, Persian
words, right-to-left lines aligned to the right, mixed lines (an address in
a Persian sentence) in the right order. The test fails when the window does
not open, or when the Persian screens look the same as the English ones
(the language was not picked).

Usage: e2e_persian.py BINARY
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_desktop as e  # noqa: E402  (its helpers: xvfb, start, carrier_window, xdo, shot)


def main():
    binary = os.path.abspath(sys.argv[1])
    scratch = e.scratch_dir("carrier-e2e-fa-")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": scratch,
        "XDG_DATA_HOME": os.path.join(scratch, "data"),
        "XDG_STATE_HOME": os.path.join(scratch, "state"),
        "XDG_CONFIG_HOME": os.path.join(scratch, "config"),
        "XDG_CACHE_HOME": os.path.join(scratch, "cache"),
        "LANG": "C.UTF-8",
    }
    e.xvfb(env)
    log = open(os.path.join(scratch, "carrier.log"), "w")

    def run(language, theme, name):
        app = e.start([binary], dict(env, LANGUAGE=language, FYNE_THEME=theme), stdout=log, stderr=log)
        e.carrier_window(env, app, log, "Carrier's window (%s)" % language)
        time.sleep(2)
        e.shot(env, name)
        app.terminate()
        app.wait(timeout=10)
        e.wait_for("the window to close", lambda: not e.window(env, "^Carrier$"), timeout=20)

    run("en", "dark", "fa-0-english-compose")
    for theme in ("dark", "light"):
        app = e.start([binary], dict(env, LANGUAGE="fa", FYNE_THEME=theme), stdout=log, stderr=log)
        e.carrier_window(env, app, log, "Carrier's window in Persian")
        time.sleep(2)
        if theme == "dark":
            # A message, so that Transfers has a row to word in Persian
            # (and, at the light theme's start, one read back from the
            # journal): Compose, mirrored, is photographed filled first.
            e.xdo(env, "type", "--delay", "20", "zoe@example.com")  # To has the focus
            for key in ("Tab", "Tab", "Tab"):  # Cc, Bcc, Subject
                e.xdo(env, "key", key)
            e.xdo(env, "type", "--delay", "20", "Report 2024")
            time.sleep(0.5)
            e.shot(env, "fa-compose-filled-%s" % theme)
            e.xdo(env, "key", "ctrl+Return")
            time.sleep(2)
        # The tabs read from the right in Persian: نوشتن at the right edge,
        # then رسانه, انتقال‌ها, صندوق پست and حساب leftwards; their places
        # are counted from the window's right edge.
        g = e.geometry(env, e.window(env, "^Carrier$"))
        right = g["X"] + g["WIDTH"]
        for back, screen in ((48, "compose"), (135, "timeline"), (228, "transfers"), (345, "mailbox"), (452, "account")):
            e.xdo(env, "mousemove", right - back, 21)
            e.xdo(env, "click", 1)
            time.sleep(1.2)
            e.shot(env, "fa-%s-%s" % (screen, theme))
        app.terminate()
        app.wait(timeout=10)
        e.wait_for("the window to close", lambda: not e.window(env, "^Carrier$"), timeout=20)
    with open(os.path.join(e.SHOTS, "fa-0-english-compose.png"), "rb") as f:
        english = f.read()
    with open(os.path.join(e.SHOTS, "fa-compose-dark.png"), "rb") as f:
        persian = f.read()
    if english == persian:
        e.fail("the window started with LANGUAGE=fa looks as it does in English")
    print("ok: Carrier in Persian; screenshots in %s/fa-*.png" % e.SHOTS, flush=True)


if __name__ == "__main__":
    e.run(main)
