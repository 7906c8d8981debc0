package ui

import (
	"context"
	"errors"
	"image"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/auth"
	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/app/message"
	"carrier/internal/app/photos"
	"carrier/transfer"
)

// The Media screen (once the Timeline screen) posts pictures and videos to
// Google Photos, where a person's timeline lives since Google retired the
// Mirror API (2023): many files at once (picked, or folders dropped, walked
// whole: mediawalk.go), an optional new album and description, each
// file's type read from its bytes and checked against Photos' limits
// before anything is queued, and the account's storage and the day's quota
// before the first byte. The batch is the app's job graph
// (photos.Queue.PhotosUpload); the screen follows it, a bar per file
// (media.go), and Transfers has a row per job.
//
// The Mirror timeline, where Carrier once posted, is offered beside Photos
// only on the embedded sandbox, labelled as retired: Google stopped
// serving it in 2023, so with a real account it could only fail. Posting
// there is the Mirror recipe (app.Post, as `carrier timeline`): one item
// per file, pictures, videos and sounds up to its 10 MB.

// photosOutbox is what the screen asks of Deps.Outbox: the app's Queue's
// Google Photos side has it (photosOf); an Outbox without it cannot post
// to Photos.
type photosOutbox interface {
	PhotosUpload(ctx context.Context, p photos.Photos, paths []string, opts photos.PhotosOptions, settings func(*transfer.Spec)) (*photos.PhotosBatch, error)
	DriveUpload(ctx context.Context, d app.Drive, p string, share message.Share, who []string, expiry time.Duration, settings func(*transfer.Spec)) ([]string, error)
}

// photosOf is out's Google Photos side: the app's Queue's (photos.Of),
// or out itself when it has one.
func photosOf(out Outbox) (photosOutbox, bool) {
	if q, ok := out.(*app.Queue); ok {
		return photos.Of(q), true
	}
	po, ok := out.(photosOutbox)
	return po, ok
}

type timelineScreen struct {
	u           *UI
	files       []*compose.PhotosMedia
	refused     []string                 // files Photos refuses by type or size, for Drive if asked
	photosWords []string                 // why Photos refuses the files it refuses
	mirror      []*compose.TimelineMedia // the files the Mirror timeline takes
	mirrorWords []string                 // why it refuses the others
	to          *choices                 // Photos or the retired Mirror timeline; shown on the sandbox only
	elseDrive   *namedCheck
	dest        *widget.Label
	list        *pagedList // a row per file chosen, or per file of the batch
	batch       *mediaBatch
	batchState  *wrapLabel // the batch's state in words
	reading     int        // folders being read in the background
	info        *wrapLabel
	album       *namedEntry
	albums      *focusButton
	description *namedEntry
	post        *focusButton
	clearFiles  *focusButton
	// quotaClock is set once the quota's wait has the screen's clock
	// (startQuota); quotaAsked are the resets asked for before (UI
	// thread).
	quotaClock  bool
	quotaAsked  []time.Time
	pickBtn     *focusButton // Add pictures or videos…
	addFolder   *focusButton
	status      *wrapLabel
	albumChoice *widget.Select // the open list of Carrier's albums, for tests
	content     fyne.CanvasObject
	now         func() time.Time
	after       func(time.Duration) <-chan time.Time // the wait for the quota's reset; tests give their own
	quota       *photos.QuotaWait                    // the jobs the daily quota stopped, sent on at its reset
	waitingAt   time.Time                            // the reset jobs from an earlier Carrier wait for; zero: none

	// The chosen pictures' thumbnails (thumbs.go), touched on the UI
	// thread only: made small once each, by path (nil: unreadable).
	thumbs       map[string]image.Image
	thumbWant    []thumbJob
	thumbReading bool
	thumbGen     int
}

func newTimelineScreen(u *UI) *timelineScreen {
	t := &timelineScreen{u: u, now: time.Now, after: time.After, thumbs: map[string]image.Image{}}
	t.dest = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	t.list = newPagedList("item")
	t.list.built = t.drawBatch // a batch's rows made as they come into view show where they stand
	t.batchState = newWrapLabel("")
	t.info = newWrapLabel("")
	t.album = newNamedEntry(lang.X("photos.album", "Album"), false)
	t.album.SetPlaceHolder(display(lang.X("photos.album.hint", "Album (optional): a new one's name, or one Carrier made")))
	t.albums = newFocusButton(lang.X("photos.albums", "Carrier's albums…"), theme.FolderIcon(), t.pickAlbum)
	t.description = newNamedEntry(lang.X("photos.description", "Description"), true)
	t.description.SetPlaceHolder(display(lang.X("photos.description.hint", "Description for every item (optional)")))
	t.description.SetMinRowsVisible(2)
	for _, e := range []*namedEntry{t.album, t.description} {
		e.onPaste = func(clip fyne.Clipboard) bool { return u.pasteFiles(clip, true) }
	}
	t.elseDrive = newNamedCheck(lang.X("photos.elsedrive", "Send what Google Photos refuses to Google Drive instead"), func(bool) { t.show() })
	t.post = newFocusButton(lang.X("photos.post", "Post to Google Photos"), theme.UploadIcon(), t.submit)
	t.post.Importance = widget.HighImportance
	t.clearFiles = newFocusButton(lang.X("photos.clear", "Clear"), theme.ContentClearIcon(), t.clear)
	t.to = newChoices(lang.X("media.to", "Post to"), []string{
		lang.X("media.to.photos", "Google Photos"),
		lang.X("media.to.mirror", "Mirror timeline (retired by Google; sandbox only)"),
	}, func(int) { t.destinationChosen() })
	t.status = newWrapLabel("")
	t.pickBtn = newFocusButton(lang.X("photos.add", "Add pictures or videos…"), theme.FileImageIcon(), t.pick)
	t.addFolder = newFocusButton(lang.X("photos.addfolder", "Add a folder…"), theme.FolderOpenIcon(), t.pickFolder)
	t.content = container.NewPadded(container.NewBorder(
		container.NewVBox(
			t.dest,
			t.to.Object,
			mirrorRTL(container.NewHBox(t.pickBtn, t.addFolder, newLabel(lang.X("media.drop", "or drop pictures, videos or whole folders on the window")))),
		),
		container.NewVBox(t.batchState, t.info, mirrorRTL(container.NewBorder(nil, nil, nil, t.albums, t.album)), t.description, t.elseDrive,
			mirrorRTL(container.NewHBox(t.clearFiles, layout.NewSpacer(), t.post)), t.status),
		nil, nil, t.list.Object))
	t.clear()
	if u.deps.Uploads != nil {
		t.quota = photos.NewQuotaWait(u.deps.Uploads)
		t.quota.Go = u.goBackground
		t.startQuota()
	}
	return t
}

// mirrorOffered says whether the retired Mirror timeline is offered: on
// the embedded sandbox only, the one server that still serves it.
func (t *timelineScreen) mirrorOffered() bool {
	return t.u.deps.Account == nil || t.u.deps.Account().Sandbox
}

// toMirror says whether posts go to the Mirror timeline.
func (t *timelineScreen) toMirror() bool {
	return t.to.chosen == 1 && t.mirrorOffered()
}

// destinationChosen shows the files for the destination just chosen:
// each was read for both when it was added.
func (t *timelineScreen) destinationChosen() {
	if t.batch != nil {
		t.batch = nil
		t.idleState()
	}
	t.show()
	t.sayRefused(t.refusedWords())
}

// refusedWords are why the destination chosen refuses files.
func (t *timelineScreen) refusedWords() []string {
	if t.toMirror() {
		return t.mirrorWords
	}
	return t.photosWords
}

// destination names where posts go: the sandbox's Photos or Mirror
// timeline, or the signed-in account's Photos.
func (t *timelineScreen) destination() string {
	if t.mirrorOffered() {
		t.to.Object.Show()
	} else {
		t.to.Object.Hide()
	}
	if t.toMirror() {
		return lang.X("media.dest.mirror", "Post to the Mirror timeline (the sandbox's, on this computer)")
	}
	if t.u.deps.Account != nil {
		if a := t.u.deps.Account(); !a.Sandbox && a.Address != "" {
			return lang.X("photos.dest.account", "Post to Google Photos as {{.Address}}", w{"Address": a.Address})
		}
	}
	return lang.X("photos.dest.sandbox", "Post to Google Photos (the sandbox's, on this computer)")
}

func (t *timelineScreen) clear() {
	t.files, t.refused, t.batch = nil, nil, nil
	t.forgetThumbs()
	t.photosWords, t.mirror, t.mirrorWords = nil, nil, nil
	t.idleState()
	t.empty()
}

// empty shows no file chosen, and what the destination takes.
func (t *timelineScreen) empty() {
	setLabel(t.dest, t.destination())
	t.setRows(0, nil, lang.X("photos.none", "No pictures or videos chosen"))
	if t.toMirror() {
		setLabel(t.info, lang.X("media.mirror.limits", "The Mirror timeline takes pictures, videos and sounds up to {{.Limit}} each, one item a file. Google retired it in 2023: only the sandbox serves it.", w{"Limit": humanSize(compose.LimitTimeline)}))
		t.post.SetText(display(lang.X("media.mirror.post", "Post to the Mirror timeline")))
	} else {
		setLabel(t.info, lang.X("photos.limits", "Pictures up to {{.Pictures}}, videos up to {{.Videos}}; the type is read from the file, not its name.", w{"Pictures": humanSize(compose.PhotosPictureLimit), "Videos": humanSize(compose.PhotosVideoLimit)}))
		t.post.SetText(display(lang.X("photos.post", "Post to Google Photos")))
	}
	mirror := t.toMirror()
	for _, o := range []fyne.CanvasObject{t.album, t.albums, t.elseDrive} {
		if mirror {
			o.Hide()
		} else {
			o.Show()
		}
	}
	t.post.Disable()
	t.clearFiles.Disable()
}

func (t *timelineScreen) pick() {
	t.u.showFileDialog(dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return
		}
		r.Close()
		t.addFiles(localPath(r.URI()))
	}, t.u.win))
}

func (t *timelineScreen) pickFolder() {
	t.u.showFileDialog(dialog.NewFolderOpen(func(l fyne.ListableURI, err error) {
		if err != nil || l == nil {
			return
		}
		t.addFiles(localPath(l))
	}, t.u.win))
}

// readingStep is how many files addFiles reads between two words of how
// far it is.
var readingStep = 500

// addFiles adds what was dropped or picked: files, and folders walked
// whole (mediaWalk). The walk and the check of each file's first bytes run
// off the UI thread, since a folder may hold hundreds; each file Photos
// takes is listed, the others named with the reason (and kept for Drive,
// should the person ask for it).
func (t *timelineScreen) addFiles(paths ...string) {
	t.reading++
	t.post.Disable()
	t.say(lang.X("media.reading", "Reading what was added…"), widget.MediumImportance)
	mirror := t.mirrorOffered()
	t.u.goBackground(func(ctx context.Context) {
		files, problems := mediaWalk(paths)
		var r mediaRead
		for _, err := range problems {
			r.refused = append(r.refused, problemText(err))
			r.mirrorRefused = append(r.mirrorRefused, problemText(err))
		}
		for i, f := range files {
			if ctx.Err() != nil {
				return
			}
			if i > 0 && i%readingStep == 0 {
				// A camera roll takes seconds to read: say how far.
				words := lang.XN("media.reading.count", "Reading what was added… {{.Done}} of {{.Count}} files", len(files), w{"Done": groupCount(i), "Count": groupCount(len(files))})
				t.u.do(func() {
					if t.reading > 0 {
						t.say(words, widget.MediumImportance)
					}
				})
			}
			if mirror {
				r.checkMirror(f)
			}
			m, err := compose.CheckPhotos(f)
			if err != nil {
				if errors.Is(err, compose.ErrNotForPhotos) {
					r.notFor = append(r.notFor, f)
				}
				r.refused = append(r.refused, strings.TrimPrefix(err.Error(), compose.ErrNotForPhotos.Error()+": "))
				continue
			}
			r.took = append(r.took, m)
		}
		r.empty = len(files) == 0 && len(problems) == 0
		t.u.do(func() { t.added(r) })
	})
}

// mediaRead is what addFiles read: the files each destination takes and
// why it refuses the others.
type mediaRead struct {
	took          []*compose.PhotosMedia
	notFor        []string // files Photos refuses by type or size
	refused       []string // why Photos refuses files
	mirror        []*compose.TimelineMedia
	mirrorRefused []string
	empty         bool // nothing there to read
}

// checkMirror checks a file against the Mirror timeline (the recipe's own
// check: a picture, video or sound under its 10 MB).
func (r *mediaRead) checkMirror(path string) {
	m, err := compose.CheckTimelineMedia(path)
	if err == nil {
		r.mirror = append(r.mirror, m)
		return
	}
	name := filepath.Base(path)
	var size *compose.SizeError
	var input *compose.InputError
	var words string
	switch {
	case errors.As(err, &size):
		words = lang.X("media.mirror.toolarge", "{{.Name}} is {{.Size}}; the Mirror timeline takes at most {{.Limit}} a file", w{"Name": name, "Size": humanSize(size.Size), "Limit": humanSize(size.Limit)})
	case errors.As(err, &input) && !strings.Contains(err.Error(), "cannot read"):
		words = lang.X("media.mirror.type", "{{.Name}} is no picture, video or sound", w{"Name": name})
	default:
		words = problemText(err)
	}
	r.mirrorRefused = append(r.mirrorRefused, words)
}

// added puts the files read by addFiles on the list (UI thread).
func (t *timelineScreen) added(r mediaRead) {
	took, notFor, refused, empty := r.took, r.notFor, r.refused, r.empty
	t.reading--
	if t.batch != nil {
		// New files start a new selection: the batch on screen goes on,
		// and the Transfers screen keeps showing it.
		t.batch = nil
		t.idleState()
	}
	for _, f := range notFor {
		if !slices.Contains(t.refused, f) {
			t.refused = append(t.refused, f)
		}
	}
	for _, m := range took {
		if !slices.ContainsFunc(t.files, func(o *compose.PhotosMedia) bool { return o.Path == m.Path }) {
			t.files = append(t.files, m)
		}
	}
	for _, m := range r.mirror {
		if !slices.ContainsFunc(t.mirror, func(o *compose.TimelineMedia) bool { return o.Path == m.Path }) {
			t.mirror = append(t.mirror, m)
		}
	}
	t.photosWords = appendNew(t.photosWords, refused)
	t.mirrorWords = appendNew(t.mirrorWords, r.mirrorRefused)
	t.show()
	if t.toMirror() {
		refused = r.mirrorRefused
	}
	switch {
	case len(refused) > 0:
		t.sayRefused(refused)
	case empty:
		t.say(lang.X("media.empty", "No file there: only hidden ones, or none at all."), widget.MediumImportance)
	default:
		t.say("", widget.MediumImportance)
	}
}

// appendNew adds to list the words it does not hold yet.
func appendNew(list, words []string) []string {
	for _, s := range words {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// sayRefused names the files the destination refuses, and why: five at
// most, then how many more.
func (t *timelineScreen) sayRefused(refused []string) {
	if len(refused) == 0 {
		t.say("", widget.MediumImportance)
		return
	}
	list := strings.Join(refused[:min(len(refused), 5)], "; ")
	if len(refused) > 5 {
		list += "; " + lang.X("photos.more", "and {{.Count}} more", w{"Count": groupCount(len(refused) - 5)})
	}
	words := lang.X("photos.refused", "Not for Google Photos: {{.Files}}", w{"Files": list})
	if t.toMirror() {
		words = lang.X("media.mirror.refused", "Not for the Mirror timeline: {{.Files}}", w{"Files": list})
	}
	t.say(app.Printable(words), widget.DangerImportance)
}

// setRows shows n rows on the list, row(i) making the i-th as it comes
// into view, or with none the words given.
func (t *timelineScreen) setRows(n int, row func(i int) *mediaRow, none string) {
	if n == 0 {
		label := newLabel(none)
		t.list.SetRows(1, func(int) fyne.CanvasObject { return label })
		return
	}
	t.list.SetRows(n, func(i int) fyne.CanvasObject { return row(i).object })
}

// show lists the files chosen and what they add up to.
func (t *timelineScreen) show() {
	setLabel(t.dest, t.destination())
	if t.toMirror() {
		t.showMirror()
		return
	}
	toDrive := t.toDrive()
	if len(t.files) == 0 && len(toDrive) == 0 && t.batch != nil {
		return // the batch on screen stays (the Drive box ticked meanwhile)
	}
	if len(t.files) == 0 && len(toDrive) == 0 {
		t.empty()
		if len(t.refused) > 0 || len(t.mirror) > 0 {
			t.clearFiles.Enable()
		}
		return
	}
	t.empty() // the destination's fields and words
	var total int64
	videos := 0
	for _, m := range t.files {
		total += m.Size
		if m.Video {
			videos++
		}
	}
	files := t.files
	t.setRows(len(files)+len(toDrive), func(i int) *mediaRow {
		if i < len(files) {
			m := files[i]
			return mediaFileRow(m, t.thumbFor(m), func() { t.removeFile(m.Path) })
		}
		return newMediaRow(app.Printable(filepath.Base(toDrive[i-len(files)])), lang.X("media.row.drive", "to Google Drive"))
	}, "")
	info := mediaSummary(len(t.files), videos, total)
	if len(toDrive) > 0 {
		info += " · " + lang.XN("photos.summary.drive", "{{.Count}} more to Google Drive", len(toDrive), w{"Count": groupCount(len(toDrive))})
	}
	setLabel(t.info, info)
	setEnabled(t.post, t.reading == 0)
	t.clearFiles.Enable()
}

// removeFile takes one chosen file off the files to post, for either
// destination (UI thread).
func (t *timelineScreen) removeFile(path string) {
	t.files = slices.DeleteFunc(t.files, func(m *compose.PhotosMedia) bool { return m.Path == path })
	t.mirror = slices.DeleteFunc(t.mirror, func(m *compose.TimelineMedia) bool { return m.Path == path })
	t.show()
}

// showMirror lists the files the Mirror timeline takes.
func (t *timelineScreen) showMirror() {
	t.empty()
	if len(t.mirror) == 0 {
		if len(t.files) > 0 || len(t.refused) > 0 {
			t.clearFiles.Enable()
		}
		return
	}
	var total int64
	for _, m := range t.mirror {
		total += m.Size
	}
	mirror := t.mirror
	t.setRows(len(mirror), func(i int) *mediaRow {
		m := mirror[i]
		r := newMediaRow(app.Printable(filepath.Base(m.Path)), lang.X("media.row.chosen", "{{.Kind}} · {{.Size}}", w{"Kind": mirrorKind(m.MediaType), "Size": humanSize(m.Size)}))
		r.removable(app.Printable(filepath.Base(m.Path)), nil, func() { t.removeFile(m.Path) })
		return r
	}, "")
	n := len(t.mirror)
	setLabel(t.info, lang.XN("media.mirror.summary", "{{.Count}} files · {{.Total}} in all · each its own item on the Mirror timeline, up to {{.Limit}} a file", n, w{"Count": groupCount(n), "Total": humanSize(total), "Limit": humanSize(compose.LimitTimeline)}))
	setEnabled(t.post, t.reading == 0)
	t.clearFiles.Enable()
}

// mirrorKind names a timeline file's kind from its media type.
func mirrorKind(mediaType string) string {
	switch {
	case strings.HasPrefix(mediaType, "video/"):
		return lang.X("media.kind.video", "video")
	case strings.HasPrefix(mediaType, "audio/"):
		return lang.X("media.kind.sound", "sound")
	}
	return lang.X("media.kind.picture", "picture")
}

// postMirror queues an item on the sandbox's Mirror timeline for each
// file, its caption the description: the recipe `carrier timeline` uses.
func (t *timelineScreen) postMirror() {
	media := slices.Clone(t.mirror)
	caption := t.description.Text
	target := t.u.deps.Target()
	t.post.Disable()
	t.u.goBackground(func(ctx context.Context) {
		var ids []string
		for _, m := range media {
			if ctx.Err() != nil {
				return
			}
			id, err := t.u.deps.Outbox.PostTimeline(target, m, compose.TimelineItem{Media: m.Path, Text: caption})
			if err != nil {
				t.failed(err)
				// The items queued so far go on; Transfers shows them.
				t.u.do(func() {
					for _, id := range ids {
						t.u.transfers.ensureRow(id)
					}
				})
				return
			}
			ids = append(ids, id)
		}
		t.u.do(func() {
			t.clear()
			t.description.SetText("")
			for _, id := range ids {
				t.u.transfers.ensureRow(id)
			}
			t.say(lang.XN("media.mirror.queued", "Posting {{.Count}} files to the Mirror timeline; Transfers shows each one.", len(ids), w{"Count": groupCount(len(ids))}), widget.SuccessImportance)
		})
	})
}

// mediaSummary says what the files chosen add up to: "41 files (40
// pictures, 1 video) · …". Each count takes its own plural form, since
// the forms differ by number in each language (Arabic has six).
func mediaSummary(count, videos int, total int64) string {
	pictures := count - videos
	return lang.XN("media.summary", "{{.Count}} files ({{.Pictures}}, {{.Videos}}) · {{.Total}} in all · they appear in Google Photos in this order", count, w{
		"Count":    groupCount(count),
		"Pictures": lang.XN("media.count.pictures", "{{.Count}} pictures", pictures, w{"Count": groupCount(pictures)}),
		"Videos":   lang.XN("media.count.videos", "{{.Count}} videos", videos, w{"Count": groupCount(videos)}),
		"Total":    humanSize(total),
	})
}

// toDrive are the files Photos refuses that go to Drive: none unless the
// person ticked the box.
func (t *timelineScreen) toDrive() []string {
	if !t.elseDrive.Checked {
		return nil
	}
	return t.refused
}

func (t *timelineScreen) say(words string, imp widget.Importance) {
	setLabel(t.status, words)
	t.status.Importance = imp
	t.status.Refresh()
}

func (t *timelineScreen) submit() {
	if t.toMirror() {
		if t.u.deps.Outbox == nil {
			t.say(lang.X("media.mirror.cannot", "This window cannot post to the Mirror timeline."), widget.DangerImportance)
			return
		}
		if len(t.mirror) > 0 {
			t.postMirror()
		}
		return
	}
	if len(t.files) == 0 && len(t.toDrive()) == 0 {
		return
	}
	out, ok := photosOf(t.u.deps.Outbox)
	if !ok {
		t.say(lang.X("photos.cannot", "This window cannot post to Google Photos."), widget.DangerImportance)
		return
	}
	var paths []string
	for _, m := range t.files {
		paths = append(paths, m.Path)
	}
	media := slices.Clone(t.files)
	opts := photos.PhotosOptions{Album: strings.TrimSpace(t.album.Text), Description: t.description.Text}
	p := t.photos()
	toDrive := slices.Clone(t.toDrive())
	t.post.Disable()
	t.say(lang.X("media.checking", "Checking Google storage and today's quota…"), widget.MediumImportance)
	t.u.goBackground(func(ctx context.Context) {
		// Ticking the box asked for Drive: its permission is asked for
		// here, in the browser, when the sign-in lacks it.
		if may := t.u.deps.May; may != nil && len(toDrive) > 0 {
			var na *app.NotAllowedError
			if err := may(ctx, auth.Links); errors.As(err, &na) && t.u.deps.Allow != nil {
				t.u.do(func() {
					t.say(lang.X("media.drive.browser", "Waiting for the browser to allow Google Drive…"), widget.MediumImportance)
				})
				err = t.u.deps.Allow(ctx, auth.Links)
			}
			if err := may(ctx, auth.Links); err != nil {
				t.failed(err)
				return
			}
		}
		var driveJobs []string
		for _, f := range toDrive {
			jobs, err := out.DriveUpload(ctx, p.Drive, f, message.ShareRecipients, nil, 0, nil)
			if err != nil {
				t.failed(err)
				return
			}
			driveJobs = append(driveJobs, jobs...)
		}
		if len(paths) == 0 {
			t.u.do(func() {
				t.clear()
				t.say(lang.XN("media.drive.queued", "Queued {{.Count}} files for Google Drive; Transfers shows each one.", len(toDrive), w{"Count": groupCount(len(toDrive))}), widget.SuccessImportance)
				for _, id := range driveJobs {
					t.u.queued(id)
				}
			})
			return
		}
		t.u.do(func() {
			for _, id := range driveJobs {
				t.u.queued(id)
			}
		})
		if may := t.u.deps.May; may != nil {
			var na *app.NotAllowedError
			if err := may(ctx, auth.Photos); errors.As(err, &na) {
				t.u.do(func() { t.askAllow(out, p, media, opts) })
				return
			} else if err != nil {
				t.failed(err)
				return
			}
		}
		t.queue(ctx, out, p, media, opts)
	})
}

// photos is the Photos API the window posts to.
func (t *timelineScreen) photos() photos.Photos {
	target := t.u.deps.Endpoint
	if t.u.deps.Target != nil {
		target = t.u.deps.Target()
	}
	return photos.Photos{Root: photos.PhotosRoot(target), Drive: app.Drive{Root: target, Auth: t.u.deps.Auth}}
}

// pickAlbum lists the albums Carrier made (the only ones it may add to)
// and puts the one chosen in the album's field.
func (t *timelineScreen) pickAlbum() {
	p := t.photos()
	t.albums.Disable()
	t.say(lang.X("photos.albums.reading", "Reading Carrier's albums in Google Photos…"), widget.MediumImportance)
	t.u.goBackground(func(ctx context.Context) {
		defer t.u.do(t.albums.Enable)
		if may := t.u.deps.May; may != nil {
			var na *app.NotAllowedError
			if err := may(ctx, auth.Photos); errors.As(err, &na) {
				t.u.do(func() {
					t.say(lang.X("photos.albums.notallowed", "Google Photos is not allowed yet: posting asks for it, and then Carrier's albums can be listed."), widget.MediumImportance)
				})
				return
			}
		}
		albums, err := p.Albums(ctx)
		t.u.do(func() {
			switch {
			case err != nil:
				t.say(windowText(err.Error()), widget.DangerImportance)
			case len(albums) == 0:
				t.say(lang.X("photos.albums.none", "Carrier has made no album in Google Photos yet: type a new one's name."), widget.MediumImportance)
			default:
				t.say("", widget.MediumImportance)
				t.showAlbums(albums)
			}
		})
	})
}

func (t *timelineScreen) showAlbums(albums []photos.PhotosAlbum) {
	var titles []string
	for _, a := range albums {
		if !slices.Contains(titles, a.Title) {
			titles = append(titles, a.Title)
		}
	}
	choice := newDialogSelect(titles, nil)
	choice.PlaceHolder = "Choose an album"
	t.albumChoice = &choice.Select
	t.u.showCustomConfirm("Add to an album Carrier made", "Use", "Cancel", choice, func(ok bool) {
		if ok && choice.Selected != "" {
			t.album.SetText(choice.Selected)
		}
	})
}

// askAllow says why Photos is needed and what Carrier may do there, and
// widens the sign-in when the person agrees (incremental consent).
func (t *timelineScreen) askAllow(out photosOutbox, p photos.Photos, media []*compose.PhotosMedia, opts photos.PhotosOptions) {
	t.say("", widget.MediumImportance)
	t.u.showConfirm(lang.X("photos.allow.title", "Allow Google Photos?"),
		lang.X("photos.allow", "To post these files Carrier needs your permission to upload to Google Photos and make albums there.\nIt cannot see, change or delete anything else in your library."),
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
				t.queue(ctx, out, p, media, opts)
			})
		})
}

// queue records the batch (off the UI thread: it asks Google's storage
// first) and follows it on the screen. Storage too small refuses the batch
// before a byte goes; a daily quota the journal shows used up queues it
// held, to go on by itself at the reset.
func (t *timelineScreen) queue(ctx context.Context, out photosOutbox, p photos.Photos, media []*compose.PhotosMedia, opts photos.PhotosOptions) {
	bind, as := t.u.asDefaultSender(p.Drive.Auth)
	p.Drive.Auth = as
	sctx := ctx
	if bind != nil {
		var s transfer.Spec
		bind(&s)
		sctx = transfer.WithAccount(ctx, s.Account)
	}
	if err := t.checkStorage(sctx, p.Drive, media); err != nil {
		t.failed(err)
		return
	}
	var paths []string
	for _, m := range media {
		paths = append(paths, m.Path)
	}
	quotaAt, usedUp := t.quotaUsedUp(strings.TrimRight(p.Root, "/"), t.now())
	// What is new, and what it needs of the day's quota, shows before
	// the first byte goes.
	var plan string
	opts.Announce = func(b *photos.PhotosBatch) {
		plan = batchWords(b)
		words := plan
		t.u.do(func() { t.say(words, widget.MediumImportance) })
	}
	// A camera roll takes minutes to queue (each job is written to the
	// disk first): the line says how far it is, while the first files
	// are already on their way (issue 29). Announce and Queuing are told
	// on this goroutine, one after the other.
	opts.Queuing = func(queued, total int) {
		if queued == total {
			return // the batch's own words follow at once
		}
		words := queuingWords(queued, total) + " " + plan
		t.u.do(func() { t.say(words, widget.MediumImportance) })
	}
	b, err := out.PhotosUpload(ctx, p, paths, opts, bind)
	if err != nil {
		t.failed(err)
		return
	}
	if len(b.Uploads) == 0 {
		words := batchWords(b)
		t.u.do(func() {
			t.clear()
			t.album.SetText("")
			t.description.SetText("")
			t.say(words, widget.SuccessImportance)
		})
		return
	}
	if usedUp && t.quota != nil {
		// Held, not sent: each request now would be refused, and would
		// count for nothing. The app's wait keeps them held across a
		// restart and sends them on at the reset.
		if err := t.quota.Hold(b.Uploads, quotaAt); err != nil {
			fyne.LogError("holding uploads for Google Photos' quota", err)
		}
	}
	// The rows are the files sent: those already there are not.
	byPath := map[string]*compose.PhotosMedia{}
	for _, m := range media {
		byPath[m.Path] = m
	}
	sent := make([]*compose.PhotosMedia, 0, len(b.Sent))
	for _, path := range b.Sent {
		m, ok := byPath[path]
		if !ok {
			m = &compose.PhotosMedia{Path: path, Name: filepath.Base(path)}
		}
		sent = append(sent, m)
	}
	t.u.do(func() {
		t.clear()
		t.album.SetText("")
		t.description.SetText("")
		msg := lang.XN("media.queued", "Queued {{.Count}} files for Google Photos.", len(b.Uploads), w{"Count": groupCount(len(b.Uploads))})
		switch {
		case b.AlbumID != "" && b.AlbumMade:
			msg += " " + lang.X("photos.queued.newalbum", "They go into the new album {{.Album}}.", w{"Album": app.Printable(b.AlbumTitle)})
		case b.AlbumID != "":
			msg += " " + lang.X("photos.queued.album", "They go into Carrier's album {{.Album}}.", w{"Album": app.Printable(b.AlbumTitle)})
		}
		t.say(msg+" "+batchWords(b), widget.SuccessImportance)
		for _, id := range b.Jobs() {
			t.u.transfers.ensureRow(id)
		}
		var at time.Time
		if usedUp {
			at = quotaAt
		}
		t.showBatch(b, sent, at)
	})
}

func (t *timelineScreen) failed(err error) {
	words := windowText(err.Error())
	t.u.do(func() {
		t.say(words, widget.DangerImportance)
		t.post.Enable()
	})
}
