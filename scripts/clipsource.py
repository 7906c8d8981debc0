#!/usr/bin/env python3
"""Files copied as a file manager copies them, on the X clipboard (GTK3).

Usage: clipsource.py FILE...

Owns the CLIPBOARD selection with the targets GNOME's Files offers for a
copy: x-special/gnome-copied-files ("copy", then the file: URIs),
text/uri-list (the URIs, CRLF after each) and, as text (UTF8_STRING,
STRING, text/plain), "x-special/nautilus-clipboard", "copy" and the URIs,
as Files 3.x gives it. Prints "ready" once it holds the clipboard, then
"served TARGET" for each request answered, so a test sees which form the
reader took; exits when another program takes the clipboard.
"""
import sys

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, Gio, Gtk  # noqa: E402

uris = [Gio.File.new_for_path(p).get_uri() for p in sys.argv[1:]]
if not uris:
    sys.exit("usage: clipsource.py FILE...")
forms = {
    "x-special/gnome-copied-files": "copy\n" + "\n".join(uris),
    "text/uri-list": "".join(u + "\r\n" for u in uris),
}
text = "x-special/nautilus-clipboard\ncopy\n" + "".join(u + "\n" for u in uris)
for t in ("UTF8_STRING", "STRING", "TEXT", "text/plain", "text/plain;charset=utf-8"):
    forms[t] = text

owner = Gtk.Invisible()
owner.realize()
clipboard = Gdk.Atom.intern("CLIPBOARD", False)
for i, t in enumerate(forms):
    Gtk.selection_add_target(owner, clipboard, Gdk.Atom.intern(t, False), i)


def on_get(widget, data, info, time):
    target = data.get_target().name()
    body = forms.get(target)
    if body is None:
        return
    data.set(data.get_target(), 8, body.encode("utf-8"))
    print("served " + target, flush=True)


def on_clear(widget, event):
    Gtk.main_quit()


owner.connect("selection-get", on_get)
owner.connect("selection-clear-event", on_clear)
if not Gtk.selection_owner_set(owner, clipboard, Gdk.CURRENT_TIME):
    sys.exit("clipsource.py: could not take the clipboard")
print("ready", flush=True)
Gtk.main()
