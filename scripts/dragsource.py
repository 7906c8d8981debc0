#!/usr/bin/env python3
"""A small GTK3 window whose button drags files, as a file manager would.

Usage: dragsource.py FILE... X Y   (the window is moved to X,Y)

A FILE may be a folder: its file:// URI goes as a file manager sends a
dragged folder's (scripts/e2e_media.py drops one on the Media screen).
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, Gio, Gtk  # noqa: E402

paths, x, y = sys.argv[1:-2], int(sys.argv[-2]), int(sys.argv[-1])
uris = [Gio.File.new_for_path(p).get_uri() for p in paths]

win = Gtk.Window(title="Drag source")
win.set_default_size(140, 80)
button = Gtk.Button(label="Drag me")
button.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [], Gdk.DragAction.COPY)
button.drag_source_add_uri_targets()


def on_get(widget, context, data, info, time):
    data.set_uris(uris)


def on_end(widget, context):
    print("drag-end", flush=True)


button.connect("drag-data-get", on_get)
button.connect("drag-end", on_end)
win.add(button)
win.connect("destroy", Gtk.main_quit)
win.move(x, y)
win.show_all()
print("ready", flush=True)
Gtk.main()
