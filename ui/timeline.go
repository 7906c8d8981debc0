package ui

import (
	"context"
	"errors"
	"fmt"
	"fyne.io/fyne/v2/lang"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/auth"
	"carrier/compose"
	"carrier/internal/app"
	"carrier/transfer"
)

// The Timeline screen posts pictures and videos to Google Photos, where a
// person's timeline lives since Google retired the Mirror API (2023): many
// files at once (picked, or a folder dropped), an optional new album and
// description, each file's type read from its bytes and checked against
// Photos' limits before anything is queued. The batch is the app's job
// graph (app.Queue.PhotosUpload); its rows in Transfers name each file's
// upload and each step of the batch. The Mirror timeline is no longer
// offered here (`carrier timeline` still posts to the sandbox's).

// photosOutbox is what the screen asks of Deps.Outbox: the app's Queue
// has it; an Outbox without it cannot post to Photos.
type photosOutbox interface {
	PhotosUpload(ctx context.Context, p app.Photos, paths []string, opts app.PhotosOptions, settings func(*transfer.Spec)) (*app.PhotosBatch, error)
}

type timelineScreen struct {
	u           *UI
	files       []*compose.PhotosMedia
	dest        *widget.Label
	list        *widget.Label
	info        *widget.Label
	album       *namedEntry
	description *namedEntry
	post        *widget.Button
	clearFiles  *widget.Button
	status      *widget.Label
	content     fyne.CanvasObject
}

func newTimelineScreen(u *UI) *timelineScreen {
	t := &timelineScreen{u: u}
	t.dest = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	t.list = widget.NewLabel("")
	t.list.Wrapping = fyne.TextWrapWord
	t.info = widget.NewLabel("")
	t.info.Wrapping = fyne.TextWrapWord
	t.album = newNamedEntry(lang.X("photos.album", "New album"), false)
	t.album.SetPlaceHolder(display(lang.X("photos.album.hint", "New album (optional): its name")))
	t.description = newNamedEntry(lang.X("photos.description", "Description"), true)
	t.description.SetPlaceHolder(display(lang.X("photos.description.hint", "Description for every item (optional)")))
	t.description.SetMinRowsVisible(2)
	t.post = widget.NewButtonWithIcon(display(lang.X("photos.post", "Post to Google Photos")), theme.UploadIcon(), t.submit)
	t.post.Importance = widget.HighImportance
	t.clearFiles = widget.NewButtonWithIcon(display(lang.X("photos.clear", "Clear")), theme.ContentClearIcon(), t.clear)
	t.status = widget.NewLabel("")
	t.status.Wrapping = fyne.TextWrapWord
	pick := widget.NewButtonWithIcon(display(lang.X("photos.add", "Add pictures or videos…")), theme.FileImageIcon(), t.pick)
	folder := widget.NewButtonWithIcon(display(lang.X("photos.addfolder", "Add a folder…")), theme.FolderOpenIcon(), t.pickFolder)
	t.content = container.NewPadded(container.NewBorder(
		container.NewVBox(
			t.dest,
			container.NewHBox(pick, folder, newLabel(lang.X("photos.drop", "or drop files or a folder on the window"))),
		),
		container.NewVBox(t.info, t.album, t.description, container.NewHBox(t.clearFiles, layout.NewSpacer(), t.post), t.status),
		nil, nil, container.NewVScroll(t.list)))
	t.clear()
	return t
}

// destination names where posts go: the sandbox's Photos, or the
// signed-in account's.
func (t *timelineScreen) destination() string {
	if t.u.deps.Account != nil {
		if a := t.u.deps.Account(); !a.Sandbox && a.Address != "" {
			return lang.X("photos.dest.account", "Post to Google Photos as {{.Address}}", w{"Address": a.Address})
		}
	}
	return lang.X("photos.dest.sandbox", "Post to Google Photos (the sandbox's, on this computer)")
}

func (t *timelineScreen) clear() {
	t.files = nil
	setLabel(t.dest, t.destination())
	setLabel(t.list, lang.X("photos.none", "No pictures or videos chosen"))
	setLabel(t.info, lang.X("photos.limits", "Pictures up to {{.Pictures}}, videos up to {{.Videos}}; the type is read from the file, not its name.", w{"Pictures": humanSize(compose.PhotosPictureLimit), "Videos": humanSize(compose.PhotosVideoLimit)}))
	t.post.Disable()
	t.clearFiles.Disable()
}

func (t *timelineScreen) pick() {
	dialog.ShowFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return
		}
		r.Close()
		t.addFiles(localPath(r.URI()))
	}, t.u.win)
}

func (t *timelineScreen) pickFolder() {
	dialog.ShowFolderOpen(func(l fyne.ListableURI, err error) {
		if err != nil || l == nil {
			return
		}
		t.addFiles(localPath(l))
	}, t.u.win)
}

// addFiles checks each file (a folder: the files directly in it, by name)
// and adds those Photos takes; the others are named with the reason.
func (t *timelineScreen) addFiles(paths ...string) {
	var refused []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			refused = append(refused, problemText(err))
			continue
		}
		each := []string{p}
		if fi.IsDir() {
			each = nil
			entries, err := os.ReadDir(p)
			if err != nil {
				refused = append(refused, problemText(err))
				continue
			}
			for _, e := range entries {
				if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
					each = append(each, filepath.Join(p, e.Name()))
				}
			}
		}
		for _, f := range each {
			m, err := compose.CheckPhotos(f)
			if err != nil {
				refused = append(refused, strings.TrimPrefix(err.Error(), compose.ErrNotForPhotos.Error()+": "))
				continue
			}
			if !slices.ContainsFunc(t.files, func(o *compose.PhotosMedia) bool { return o.Path == m.Path }) {
				t.files = append(t.files, m)
			}
		}
	}
	t.show()
	if len(refused) > 0 {
		list := strings.Join(refused[:min(len(refused), 5)], "; ")
		if len(refused) > 5 {
			list += "; " + lang.X("photos.more", "and {{.Count}} more", w{"Count": len(refused) - 5})
		}
		words := lang.X("photos.refused", "Not for Google Photos: {{.Files}}", w{"Files": list})
		t.say(app.Printable(words), widget.DangerImportance)
	} else {
		t.say("", widget.MediumImportance)
	}
}

// show lists the files chosen and what they add up to.
func (t *timelineScreen) show() {
	setLabel(t.dest, t.destination())
	if len(t.files) == 0 {
		t.clear()
		return
	}
	var names []string
	var total int64
	videos := 0
	for _, m := range t.files {
		total += m.Size
		if m.Video {
			videos++
		}
		if len(names) < 12 {
			names = append(names, fmt.Sprintf("%s · %s · %s", m.Name, m.MimeType, humanSize(m.Size)))
		}
	}
	if len(t.files) > len(names) {
		names = append(names, lang.X("photos.more", "and {{.Count}} more", w{"Count": len(t.files) - len(names)}))
	}
	setLabel(t.list, strings.Join(names, "\n"))
	setLabel(t.info, lang.XN("photos.summary", "{{.Count}} files ({{.Pictures}} pictures, {{.Videos}} videos) · {{.Total}} in all · created in Google Photos {{.Batch}} at a time, in this order", len(t.files), w{"Count": len(t.files), "Pictures": len(t.files) - videos, "Videos": videos, "Total": humanSize(total), "Batch": app.MaxPhotosBatch}))
	t.post.Enable()
	t.clearFiles.Enable()
}

func (t *timelineScreen) say(words string, imp widget.Importance) {
	setLabel(t.status, words)
	t.status.Importance = imp
	t.status.Refresh()
}

func (t *timelineScreen) submit() {
	if len(t.files) == 0 {
		return
	}
	out, ok := t.u.deps.Outbox.(photosOutbox)
	if !ok {
		t.say(lang.X("photos.cannot", "This window cannot post to Google Photos."), widget.DangerImportance)
		return
	}
	var paths []string
	for _, m := range t.files {
		paths = append(paths, m.Path)
	}
	opts := app.PhotosOptions{Album: strings.TrimSpace(t.album.Text), Description: t.description.Text}
	target := t.u.deps.Endpoint
	if t.u.deps.Target != nil {
		target = t.u.deps.Target()
	}
	p := app.Photos{Root: app.PhotosRoot(target), Drive: app.Drive{Root: target, Auth: t.u.deps.Auth}}
	t.post.Disable()
	t.say(lang.X("photos.checking", "Checking Google storage…"), widget.MediumImportance)
	t.u.goBackground(func(ctx context.Context) {
		if may := t.u.deps.May; may != nil {
			var na *app.NotAllowedError
			if err := may(ctx, auth.Photos); errors.As(err, &na) {
				t.u.do(func() { t.askAllow(out, p, paths, opts) })
				return
			} else if err != nil {
				t.failed(err)
				return
			}
		}
		t.queue(ctx, out, p, paths, opts)
	})
}

// askAllow says why Photos is needed and what Carrier may do there, and
// widens the sign-in when the person agrees (incremental consent).
func (t *timelineScreen) askAllow(out photosOutbox, p app.Photos, paths []string, opts app.PhotosOptions) {
	t.say("", widget.MediumImportance)
	dialog.ShowConfirm(display(lang.X("photos.allow.title", "Allow Google Photos?")),
		display(lang.X("photos.allow", "To post these files Carrier needs your permission to upload to Google Photos and make albums there.\nIt cannot see, change or delete anything else in your library.")),
		func(yes bool) {
			if !yes || t.u.deps.Allow == nil {
				t.say(lang.X("photos.denied", "Not posted: Google Photos was not allowed."), widget.MediumImportance)
				t.post.Enable()
				return
			}
			t.say(lang.X("photos.browser", "Waiting for the browser…"), widget.MediumImportance)
			t.u.goBackground(func(ctx context.Context) {
				if err := t.u.deps.Allow(ctx, auth.Photos); err != nil {
					t.failed(err)
					return
				}
				t.queue(ctx, out, p, paths, opts)
			})
		}, t.u.win)
}

// queue records the batch (off the UI thread: it asks Google's storage
// first) and shows its rows.
func (t *timelineScreen) queue(ctx context.Context, out photosOutbox, p app.Photos, paths []string, opts app.PhotosOptions) {
	b, err := out.PhotosUpload(ctx, p, paths, opts, nil)
	if err != nil {
		t.failed(err)
		return
	}
	t.u.do(func() {
		t.clear()
		t.album.SetText("")
		t.description.SetText("")
		t.say(lang.XN("photos.queued", "Queued {{.Count}} files for Google Photos; Transfers shows each one.", len(b.Uploads), w{"Count": len(b.Uploads)}), widget.SuccessImportance)
		for _, id := range b.Jobs() {
			t.u.queued(id)
		}
	})
}

func (t *timelineScreen) failed(err error) {
	words := windowText(err.Error())
	t.u.do(func() {
		t.say(words, widget.DangerImportance)
		t.post.Enable()
	})
}
