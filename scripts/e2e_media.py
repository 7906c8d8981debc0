#!/usr/bin/python3
"""End-to-end test of the Media screen under a virtual X server.

The real binary starts on a scratch sandbox. A FOLDER is dragged from
another program (scripts/dragsource.py, a GTK3 drag source offering the
folder's file:// URI as a file manager does) onto the Media screen: 40
pictures, some in a subfolder, and one larger video, with a hidden file and
a text file beside them. A new album is typed and the batch posted; the
upload is photographed under way (the sandbox slowed so that it is seen)
and when the screen says it is done. The sandbox's Google Photos must then
hold the album with exactly the 41 pictures and video, each byte for byte.
Screenshots go to artifacts/screenshots/media-*.png, to be looked at.

Usage: e2e_media.py BINARY
"""
import hashlib
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PICTURES = 40
VIDEO_MIB = 128
ALBUM = "E2E folder of the trip"
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from e2e_desktop import SHOTS, api, carrier_window, drag_from_source, fail, geometry, run, scratch_dir, shot, start, wait_for, xdo, xvfb  # noqa: E402


def jpeg(size, n):
    """A picture's bytes as a camera writes them: SOI, a JFIF APP0 segment,
    then data (random: identical bytes would be one media item)."""
    head = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x48\x00\x48\x00\x00"
    head += b"\xff\xfe\x00\x10E2E picture %03d" % n
    return head + os.urandom(size - len(head) - 2) + b"\xff\xd9"


def mp4(size):
    """A video's bytes as a phone writes them: an ftyp box, then mdat."""
    ftyp = b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41"
    mdat = (size - len(ftyp)).to_bytes(4, "big") + b"mdat"
    return ftyp + mdat + os.urandom(size - len(ftyp) - len(mdat))


def make_folder(scratch):
    """The folder a person drops: pictures (some in a subfolder), a video,
    and what Photos must not get (a hidden file, a text file)."""
    top = os.path.join(scratch, "Trip to the coast")
    os.makedirs(os.path.join(top, "day 2"))
    files = []
    for i in range(PICTURES):
        sub = "day 2" if i >= 25 else ""
        p = os.path.join(top, sub, "IMG_%04d.jpg" % (i + 1))
        with open(p, "wb") as f:
            f.write(jpeg(150_000 + i * 9_000, i))
        files.append(p)
    video = os.path.join(top, "day 2", "waves.mp4")
    with open(video, "wb") as f:
        f.write(mp4(VIDEO_MIB << 20))
    files.append(video)
    with open(os.path.join(top, ".DS_Store"), "wb") as f:
        f.write(b"\x00\x00\x00\x01Bud1" + os.urandom(100))
    with open(os.path.join(top, "notes.txt"), "w") as f:
        f.write("Low tide at 4.\n")
    return top, files


def main():
    t0 = time.time()
    binary = os.path.abspath(sys.argv[1])
    scratch = scratch_dir("carrier-e2e-media-")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": scratch,
        "XDG_DATA_HOME": os.path.join(scratch, "data"),
        "XDG_STATE_HOME": os.path.join(scratch, "state"),
        "XDG_CONFIG_HOME": os.path.join(scratch, "config"),
        "XDG_CACHE_HOME": os.path.join(scratch, "cache"),
        "LANG": "C.UTF-8",
    }
    folder, files = make_folder(scratch)
    xvfb(env)
    log = open(os.path.join(scratch, "carrier.log"), "w")
    wid = carrier_window(env, start([binary], env, stdout=log, stderr=log), log)
    g = geometry(env, wid)
    wx, wy = g["X"], g["Y"]
    size = (g["WIDTH"], g["HEIGHT"])
    sandbox = os.path.join(env["XDG_DATA_HOME"], "carrier", "sandbox")
    wait_for("the sandbox's port", lambda: os.path.exists(os.path.join(sandbox, "port")))
    base = "http://127.0.0.1:" + open(os.path.join(sandbox, "port")).read().strip()
    token = open(os.path.join(sandbox, "token")).read().strip()

    def click(x, y):
        xdo(env, "mousemove", wx + x, wy + y)
        xdo(env, "click", 1)
        time.sleep(0.3)

    def type_text(text):
        xdo(env, "type", "--delay", "20", text)
        time.sleep(0.2)

    def drag(path, tx, ty):
        """Drags path from another program onto the window at (tx, ty)."""
        drag_from_source(env, path, wx + tx, wy + ty)

    time.sleep(1.5)
    click(150, 21)  # Media
    time.sleep(0.5)
    drag(folder, 550, 300)
    time.sleep(1.0)
    if geometry(env, wid)["WIDTH"] != size[0] or geometry(env, wid)["HEIGHT"] != size[1]:
        fail("the folder's 41 files resized the window from %dx%d" % size)
    click(450, 517)  # Album
    type_text(ALBUM)
    time.sleep(0.3)
    shot(env, "media-0-folder-dropped")
    # Slowed, so that the upload is seen under way (about 11 s for the
    # video), yet the test stays short.
    api(base, token, "/sandbox/v1/faults", "PUT", b"rate=12MB")
    click(995, 654)  # Post to Google Photos
    posted = time.time()

    def album():
        albums = api(base, token, "/v1/albums").get("albums", [])
        mine = [a for a in albums if a.get("title") == ALBUM]
        return mine[0] if mine else None

    made = wait_for("the new album in the sandbox's Photos", album, timeout=30)

    jdir = os.path.join(env["XDG_STATE_HOME"], "carrier", "jobs")

    def video_state():
        """The state the journal records for the video's upload."""
        for name in os.listdir(jdir) if os.path.isdir(jdir) else []:
            if not name.endswith(".json"):
                continue
            try:
                with open(os.path.join(jdir, name)) as f:
                    rec = json.load(f)
            except (OSError, ValueError):
                continue  # being replaced at this moment
            if rec.get("path", "").endswith("waves.mp4"):
                return rec.get("state")
        return None

    wait_for("the video's upload under way", lambda: video_state() == "running", timeout=30)
    time.sleep(1.0)  # a few redraws into the video
    # The video is the list's last row: the mouse wheel turns the pages.
    xdo(env, "mousemove", wx + 550, wy + 250)
    for _ in range(24):
        xdo(env, "click", 5)
        time.sleep(0.05)
    time.sleep(0.5)
    shot(env, "media-1-mid-upload")
    if video_state() != "running":
        fail("the video's upload ended before the screenshot under way: %s" % video_state())
    mid = time.time() - posted

    def full():
        a = album()
        return a if a and a.get("mediaItemsCount") == str(len(files)) else None

    made = wait_for("%d items in the album" % len(files), full, timeout=60)
    api(base, token, "/sandbox/v1/faults", "PUT", b"none")
    took = time.time() - posted
    time.sleep(1.0)  # the screen redraws four times a second
    shot(env, "media-2-done")

    if len([a for a in api(base, token, "/v1/albums").get("albums", []) if a.get("title") == ALBUM]) != 1:
        fail("the sandbox's Photos has more than one album %r" % ALBUM)
    items, page = [], ""
    while True:
        body = {"albumId": made["id"], "pageSize": 100}
        if page:
            body["pageToken"] = page
        r = api(base, token, "/v1/mediaItems:search", "POST", json.dumps(body).encode(), "application/json")
        items += r.get("mediaItems", [])
        page = r.get("nextPageToken", "")
        if not page:
            break
    want = {}
    for p in files:
        with open(p, "rb") as f:
            want[os.path.basename(p)] = (os.path.getsize(p), hashlib.sha256(f.read()).hexdigest())
    got = {}
    for it in items:
        video = it.get("mimeType", "").startswith("video/")
        data = api(base, token, it["baseUrl"][len(base):] + ("=dv" if video else "=d"), timeout=60)
        got[it["filename"]] = (len(data), hashlib.sha256(data).hexdigest())
    if len(items) != len(files) or got != want:
        missing = sorted(set(want) - set(got))
        extra = sorted(set(got) - set(want))
        wrong = sorted(k for k in set(want) & set(got) if want[k] != got[k])
        fail("the album holds %d items, want %d: missing %r, not the folder's %r, other bytes %r"
             % (len(items), len(files), missing, extra, wrong))
    total = sum(s for s, _ in want.values())
    print("ok: dragged the folder %r (%d pictures, a %d MiB video, a hidden and a text file) onto the Media "
          "screen; album %r holds exactly %d items, %d bytes, each the file's; under way at %.1f s, done %.1f s "
          "after Post, %.0f s in all; screenshots in %s"
          % (os.path.basename(folder), PICTURES, VIDEO_MIB, ALBUM, len(items), total, mid, took, time.time() - t0, SHOTS),
          flush=True)


if __name__ == "__main__":
    run(main)
