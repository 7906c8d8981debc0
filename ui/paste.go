package ui

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/lang"

	"carrier/internal/app"
)

// Paste files: Ctrl+V of files copied in a file manager attaches them
// (to the message, or to Media's batch when Media shows). Fyne's clipboard
// gives text only, so this is what the text of such a copy looks like:
// text/uri-list (RFC 2483: file:// URIs, one a line, "#" comments), GNOME's
// x-special/gnome-copied-files ("copy" or "cut", then the URIs; GNOME's
// Files of 3.x puts "x-special/nautilus-clipboard" first in its text), or,
// from other programs, plain absolute paths, one a line. On X11, Fyne
// (GLFW) asks the clipboard for UTF8_STRING, then STRING, never for
// text/uri-list or x-special/gnome-copied-files: a file manager's copy
// arrives as the text it offers besides those (scripts/e2e_open.py offers
// all three, as a file manager does, and checks which one is read). Only what names a
// file on this computer is taken; the rest is said in words. Nothing is
// read but what the text names, and nothing is ever run.

// maxPasted bounds what is read as files: a larger text is not a copy of
// files a person made, and goes where any text goes.
const (
	maxPastedBytes = 1 << 20
	maxPastedFiles = 1000
)

// pastedFiles is what a clipboard's text names: the files to attach, and
// words for each thing named that is not one.
type pastedFiles struct {
	paths   []string
	refused []string
}

// filesOnClipboard reads text as files copied in a file manager (a
// folder among them is Compose's to refuse and Media's to walk). ok is
// false when the text is not such a copy (ordinary text, to paste as
// text). withPaths takes plain absolute paths too, when every line is one
// of an existing file or folder; a text field pastes those as text.
func filesOnClipboard(text string, withPaths bool) (pf pastedFiles, ok bool) {
	if len(text) > maxPastedBytes || strings.TrimSpace(text) == "" {
		return pf, false
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, "\r\x00 \t")
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return pf, false
	}
	// GNOME's Files of 3.x gave its copies as text with this line first.
	if lines[0] == "x-special/nautilus-clipboard" {
		lines = lines[1:]
		if len(lines) == 0 {
			return pf, false
		}
	}
	gnome := lines[0] == "copy" || lines[0] == "cut"
	if gnome {
		lines = lines[1:]
		if len(lines) == 0 {
			return pf, false
		}
	}
	first := slices.IndexFunc(lines, func(l string) bool { return !strings.HasPrefix(l, "#") })
	uriList := gnome || first >= 0 && isFileURI(lines[first])
	if !uriList {
		if !withPaths || !plainPaths(lines) {
			return pf, false
		}
	}
	names := 0
	for _, l := range lines {
		if uriList && strings.HasPrefix(l, "#") {
			continue // a text/uri-list comment
		}
		if names++; names > maxPastedFiles {
			return pastedFiles{refused: []string{lang.X("paste.toomany", "More than {{.Count}} files were pasted: none was attached.", w{"Count": maxPastedFiles})}}, true
		}
		p, refusal := pastedPath(l, uriList)
		if refusal != "" {
			pf.refused = append(pf.refused, refusal)
			continue
		}
		switch fi, err := os.Stat(p); {
		case err != nil:
			pf.refused = append(pf.refused, lang.X("paste.missing", "{{.Name}}: there is no such file", w{"Name": app.Printable(p)}))
		case !fi.Mode().IsRegular() && !fi.IsDir():
			pf.refused = append(pf.refused, lang.X("paste.special", "{{.Name}}: is not a regular file", w{"Name": app.Printable(p)}))
		case !slices.Contains(pf.paths, p):
			pf.paths = append(pf.paths, p)
		}
	}
	return pf, len(pf.paths) > 0 || len(pf.refused) > 0
}

// isFileURI reports whether line is a file: URI.
func isFileURI(line string) bool {
	scheme, _, ok := strings.Cut(line, ":")
	return ok && strings.EqualFold(scheme, "file")
}

// plainPaths reports whether every line is an absolute path that exists.
func plainPaths(lines []string) bool {
	for _, l := range lines {
		if !filepath.IsAbs(l) || hasParent(filepath.ToSlash(l)) {
			return false
		}
		if _, err := os.Stat(l); err != nil {
			return false
		}
	}
	return true
}

// pastedPath is the file a line names, or words saying why it names none.
func pastedPath(line string, uri bool) (string, string) {
	name := app.Printable(line)
	if !uri {
		return filepath.Clean(line), ""
	}
	u, err := url.Parse(line)
	switch {
	case err != nil || u.Scheme == "":
		if filepath.IsAbs(line) {
			return "", lang.X("paste.notaddress", "{{.Name}}: is not a file address", w{"Name": name})
		}
		return "", lang.X("paste.relative", "{{.Name}}: is not a full path", w{"Name": name})
	case !strings.EqualFold(u.Scheme, "file"):
		return "", lang.X("paste.notfile", "{{.Name}}: is not a file on this computer", w{"Name": name})
	case u.Host != "" && !strings.EqualFold(u.Host, "localhost"):
		return "", lang.X("paste.elsewhere", "{{.Name}}: is on another computer", w{"Name": name})
	case u.Opaque != "" || u.Path == "":
		return "", lang.X("paste.relative", "{{.Name}}: is not a full path", w{"Name": name})
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", lang.X("paste.notaddress", "{{.Name}}: is not a file address", w{"Name": name})
	case hasParent(u.Path):
		return "", lang.X("paste.parent", "{{.Name}}: names a parent folder (..)", w{"Name": name})
	}
	p := nativePath(u.Path)
	if !filepath.IsAbs(p) {
		return "", lang.X("paste.relative", "{{.Name}}: is not a full path", w{"Name": name})
	}
	return filepath.Clean(p), ""
}

// hasParent reports whether a slash path has a ".." element.
func hasParent(p string) bool { return slices.Contains(strings.Split(p, "/"), "..") }

// pasteFiles attaches the files on the clipboard, in Compose or Media
// (UI thread); it reports whether the clipboard held files, so that a
// text field pastes ordinary text as text. fromField: the paste came to a
// text field, which takes plain paths as text.
func (u *UI) pasteFiles(clip fyne.Clipboard, fromField bool) bool {
	media := u.tabs.Selected() == u.timelineTab
	if !media && u.tabs.Selected() != u.composeTab {
		return false
	}
	if clip == nil {
		clip = u.app.Clipboard()
	}
	pf, ok := filesOnClipboard(clip.Content(), !fromField)
	if !ok {
		return false
	}
	if len(pf.paths) > 0 {
		if media {
			u.timeline.addFiles(pf.paths...)
		} else {
			u.compose.attach(pf.paths...)
		}
	}
	if len(pf.refused) > 0 {
		u.showError(lang.X("paste.refused.title", "Not attached"), strings.Join(pf.refused, "\n"))
	}
	return true
}

// pasteShortcut is Ctrl+V on the window, for when no text field has the
// focus: files on the clipboard are attached.
func (u *UI) pasteShortcut(s fyne.Shortcut) {
	var clip fyne.Clipboard
	if p, ok := s.(*fyne.ShortcutPaste); ok {
		clip = p.Clipboard
	}
	u.pasteFiles(clip, false)
}
