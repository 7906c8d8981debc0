#!/usr/bin/env python3
"""Carrier on the macOS desktop: the bundle's document types and URL
scheme. `fyne package -os darwin` (which needs a Mac) writes the app's
Contents/Info.plist without them; this adds them, so Finder's "Open With"
lists Carrier for the files people send and Carrier can be chosen as the
mail app (mailto: links). Run on the built bundle:

    scripts/macos/bundle-types.py Carrier.app

It changes Info.plist in place and is idempotent. `--check PLIST` says
whether a plist carries them (exit 1 if not). Not run on a Mac yet: the
keys are Apple's documented ones (CFBundleDocumentTypes with
LSItemContentTypes, CFBundleURLTypes), checked here with plistlib only.
Launch Services hands the files to the app as open-document events,
which Fyne 2.8 does not pass on to Carrier (it reads the command line);
until it does, Open With starts Carrier without the files.
"""

import os
import plistlib
import sys

# The kinds of files people send, as uniform type identifiers; public.data
# last, so any file may be opened with Carrier (rank Alternate: Carrier
# never claims to be a file's owner).
TYPES = [
    ("Documents", ["com.adobe.pdf", "public.plain-text", "public.rtf", "public.comma-separated-values-text",
                   "org.openxmlformats.wordprocessingml.document", "org.openxmlformats.spreadsheetml.sheet",
                   "org.openxmlformats.presentationml.presentation", "com.microsoft.word.doc",
                   "com.microsoft.excel.xls", "com.microsoft.powerpoint.ppt",
                   "org.oasis-open.opendocument.text", "org.oasis-open.opendocument.spreadsheet",
                   "org.oasis-open.opendocument.presentation"]),
    ("Pictures", ["public.image"]),
    ("Videos", ["public.movie"]),
    ("Audio", ["public.audio"]),
    ("Archives", ["public.zip-archive", "org.gnu.gnu-zip-archive", "public.tar-archive", "org.7-zip.7-zip-archive"]),
    ("Any file", ["public.data"]),
]


def document_types():
    return [{"CFBundleTypeName": name, "CFBundleTypeRole": "Viewer", "LSHandlerRank": "Alternate",
             "LSItemContentTypes": utis} for name, utis in TYPES]


def url_types():
    return [{"CFBundleURLName": "Email Address URL", "CFBundleURLSchemes": ["mailto"]}]


def add(plist):
    plist["CFBundleDocumentTypes"] = document_types()
    plist["CFBundleURLTypes"] = url_types()
    return plist


def carries(plist):
    docs = plist.get("CFBundleDocumentTypes", [])
    utis = {u for d in docs for u in d.get("LSItemContentTypes", [])}
    schemes = {s for u in plist.get("CFBundleURLTypes", []) for s in u.get("CFBundleURLSchemes", [])}
    return "public.data" in utis and "public.image" in utis and "mailto" in schemes


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        with open(argv[2], "rb") as f:
            ok = carries(plistlib.load(f))
        print("%s: %s" % (argv[2], "document types and mailto present" if ok else "missing the document types or mailto"))
        return 0 if ok else 1
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: bundle-types.py APP.app | --check PLIST", file=sys.stderr)
        return 2
    path = os.path.join(argv[1], "Contents", "Info.plist")
    try:
        with open(path, "rb") as f:
            plist = plistlib.load(f)
    except (OSError, plistlib.InvalidFileException) as e:
        print("bundle-types: %s is not an app bundle's Info.plist: %s" % (path, e), file=sys.stderr)
        return 1
    with open(path + ".tmp", "wb") as f:
        plistlib.dump(add(plist), f)
    os.replace(path + ".tmp", path)
    print("bundle-types: %s opens documents and mailto: links" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
