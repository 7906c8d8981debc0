package ui

import (
	"context"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/compose"
)

type timelineScreen struct {
	u       *UI
	media   *compose.TimelineMedia
	preview *fyne.Container
	info    *widget.Label
	caption *namedEntry
	notify  *namedCheck
	post    *widget.Button
	status  *widget.Label
	content fyne.CanvasObject
}

func newTimelineScreen(u *UI) *timelineScreen {
	t := &timelineScreen{u: u}
	t.preview = container.NewStack()
	t.info = widget.NewLabel("")
	t.info.Wrapping = fyne.TextWrapWord
	t.caption = newNamedEntry("Caption", true)
	t.caption.SetPlaceHolder("Caption")
	t.caption.SetMinRowsVisible(3)
	t.caption.Wrapping = fyne.TextWrapWord
	t.notify = newNamedCheck("Notify (the wearer hears a chime)", nil)
	t.post = widget.NewButtonWithIcon("Post", theme.MailSendIcon(), t.submit)
	t.post.Importance = widget.HighImportance
	t.status = widget.NewLabel("")
	t.status.Wrapping = fyne.TextWrapWord
	pick := widget.NewButtonWithIcon("Choose a picture, video or sound…", theme.FolderOpenIcon(), t.pick)
	t.content = container.NewPadded(container.NewBorder(
		container.NewVBox(
			widget.NewLabelWithStyle("Post to the Mirror timeline", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
			container.NewHBox(pick, widget.NewLabel("or drop a file on the window")),
		),
		container.NewVBox(t.info, t.caption, t.notify, container.NewHBox(layout.NewSpacer(), t.post), t.status),
		nil, nil, t.preview))
	t.clear()
	return t
}

func (t *timelineScreen) clear() {
	t.media = nil
	t.preview.Objects = []fyne.CanvasObject{container.NewCenter(widget.NewLabelWithStyle("No media chosen", fyne.TextAlignCenter, fyne.TextStyle{Italic: true}))}
	t.preview.Refresh()
	t.info.SetText("")
	t.caption.SetText("")
	t.notify.SetChecked(false)
	t.post.Disable()
}

func (t *timelineScreen) pick() {
	dialog.ShowFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return
		}
		r.Close()
		t.setMedia(localPath(r.URI()))
	}, t.u.win)
}

// setMedia checks a file and shows it: pictures as a thumbnail. Anything
// but a picture, video or sound is refused with the reason.
func (t *timelineScreen) setMedia(path string) {
	m, err := compose.CheckTimelineMedia(path)
	if err != nil {
		t.status.SetText(problemText(err))
		t.status.Importance = widget.DangerImportance
		t.status.Refresh()
		return
	}
	t.status.SetText("")
	t.status.Importance = widget.MediumImportance
	t.media = m
	var shown fyne.CanvasObject
	if strings.HasPrefix(m.MediaType, "image/") {
		img := canvas.NewImageFromFile(path)
		img.FillMode = canvas.ImageFillContain
		img.SetMinSize(fyne.NewSize(320, 240))
		shown = img
	} else {
		icon := theme.FileVideoIcon()
		if strings.HasPrefix(m.MediaType, "audio/") {
			icon = theme.FileAudioIcon()
		}
		shown = container.NewCenter(container.NewVBox(widget.NewIcon(icon), widget.NewLabel(baseName(path))))
	}
	t.preview.Objects = []fyne.CanvasObject{shown}
	t.preview.Refresh()
	t.info.SetText(baseName(path) + " · " + m.MediaType + " · " + humanSize(m.Size) + " of " + humanSize(compose.LimitTimeline))
	t.post.Enable()
}

func (t *timelineScreen) submit() {
	if t.media == nil {
		return
	}
	item := compose.TimelineItem{Media: t.media.Path, Text: t.caption.Text, Notify: t.notify.Checked}
	if _, err := item.Metadata(); err != nil {
		t.status.SetText(problemText(err))
		return
	}
	m := t.media
	target := t.u.deps.Target()
	t.post.Disable()
	t.u.goBackground(func(context.Context) {
		id, err := t.u.deps.Outbox.PostTimeline(target, m, item)
		t.u.do(func() {
			if err != nil {
				t.status.SetText(windowText(err.Error()))
				t.post.Enable()
				return
			}
			t.clear()
			t.u.queued(id)
		})
	})
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}
