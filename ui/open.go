package ui

import (
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2/lang"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/app/message"
)

// Send from wherever the file is: what the desktop hands Carrier (Open
// with, a mail link, `carrier FILE...`, a second launch handing its
// arguments to this window) comes here and fills Compose, never sending
// anything by itself.

// Open takes items another program handed Carrier: mailto: URLs, file:
// URIs, full paths (message.Opened reads them, looking at each file without
// reading it); none only brings the window to the front. Files alone are
// attached as if dropped on Compose; a mail link's fields fill the form
// as a reopened message does (asking first when the form holds another
// message). What is refused is said, each thing with why. It may be
// called from any goroutine (the session bus's).
func (u *UI) Open(items []string) {
	var k *message.Composed
	var refused []error
	media := false
	if len(items) > 0 {
		k, refused = message.Opened(items)
		// Read here, off the UI thread: each file's first bytes.
		media = k != nil && allMedia(k.Attachments)
	}
	u.do(func() { u.opened(k, refused, media) })
}

// Refused brings the window to the front saying why what Carrier was
// handed was not taken (a mail link's file it would not read), as Open
// says it. It may be called from any goroutine.
func (u *UI) Refused(errs ...error) { u.do(func() { u.opened(nil, errs, false) }) }

// opened shows the window in front with k in Compose (or its files in
// Media when they are all pictures and videos, media), on the UI thread.
func (u *UI) opened(k *message.Composed, refused []error, media bool) {
	u.win.Show()
	u.win.RequestFocus()
	if k != nil {
		switch {
		case len(k.To)+len(k.Cc)+len(k.Bcc) > 0 || k.Subject != "" || k.Text != "":
			u.compose.reopen(k, lang.X("open.mailto", "From a mail link"))
		case len(k.Attachments) > 0 && media && u.openMediaInMedia():
			// Pictures and videos alone go to Media, as the person's
			// setting says (openMediaSetting).
			u.timeline.addFiles(k.Attachments...)
			u.tabs.Select(u.timelineTab)
		case len(k.Attachments) > 0:
			u.compose.attach(k.Attachments...)
			u.tabs.Select(u.composeTab)
		}
	}
	if len(refused) == 0 {
		return
	}
	var why []string
	for _, err := range refused {
		why = append(why, refusalWords(err))
	}
	u.showError(lang.X("open.refused.title", "Not opened"), strings.Join(why, "\n"))
}

// refusalWords says why something handed over was not taken, in the
// person's language.
func refusalWords(err error) string {
	var r *message.OpenRefusal
	if !errors.As(err, &r) {
		return app.Printable(err.Error())
	}
	what := w{"What": r.What}
	switch r.Kind {
	case message.RefusedNotFile:
		return lang.X("open.refused.notfile", "{{.What}} is not a file on this computer: only files on this computer can be attached.", what)
	case message.RefusedRelative:
		return lang.X("open.refused.relative", "{{.What}} is not a full path: Carrier attaches a file only when it is named in full, without '..'.", what)
	case message.RefusedMissing:
		return lang.X("open.refused.missing", "There is no file at {{.What}}.", what)
	case message.RefusedFolder:
		return lang.X("open.refused.folder", "{{.What}} is a folder: attach the files in it, or a zip of it.", what)
	case message.RefusedTooLong:
		return lang.X("open.refused.toolong", "The mail link is too long ({{.What}}): Carrier takes a text of up to {{.Body}}, {{.Recipients}} recipients and {{.Files}} attachments.",
			w{"What": r.What, "Body": fmt.Sprintf("%d KiB", message.MaxMailtoBody>>10), "Recipients": message.MaxMailtoRecipients, "Files": message.MaxMailtoAttachments})
	case message.RefusedHidden:
		return lang.X("open.refused.hidden", "{{.What}} is hidden (its name or a folder's starts with a dot): a mail link may not attach it. Attach it yourself if you mean to send it.", what)
	case message.RefusedSpecial:
		return lang.X("open.refused.special", "{{.What}} is not a plain file (a device, a pipe or a socket).", what)
	case message.RefusedLinkFile:
		return lang.X("open.refused.linkfile", "The mail link a program left for Carrier was not read ({{.What}}): Carrier reads one only from its own private folder.", what)
	case message.RefusedUnknown:
		return lang.X("open.refused.unknown", "{{.What}} is neither a file nor a mail link.", what)
	}
	return lang.X("open.refused.malformed", "{{.What}} is not a mail link Carrier can read.", what)
}

// prefOpenMedia keeps where pictures and videos opened from elsewhere go:
// 0 Media (Google Photos), 1 Compose.
const prefOpenMedia = "open-media"

// openMediaSetting is the settings' choice of where pictures and videos
// handed to Carrier (Open with, Send to, a second launch) go.
func (u *UI) openMediaSetting() *choices {
	c := newChoices(lang.X("settings.openmedia", "Pictures and videos opened with Carrier go to"),
		[]string{lang.X("settings.openmedia.media", "Media (Google Photos)"), lang.X("settings.openmedia.compose", "Compose (a message)")}, nil)
	c.set(0)
	keepChoice(u.app.Preferences(), prefOpenMedia, c)
	return c
}

func (u *UI) openMediaInMedia() bool {
	return u.app.Preferences().IntWithFallback(prefOpenMedia, 0) == 0
}

// allMedia reports whether every path is a picture or a video Google
// Photos takes (read from its first bytes, as the Media screen does).
func allMedia(paths []string) bool {
	for _, p := range paths {
		if _, err := compose.CheckPhotos(p); err != nil {
			return false
		}
	}
	return len(paths) > 0
}
