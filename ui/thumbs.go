package ui

import (
	"context"
	"image"
	_ "image/gif" // pictures the Media screen shows small
	_ "image/jpeg"
	_ "image/png"
	"os"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	xdraw "golang.org/x/image/draw"
	_ "golang.org/x/image/webp"

	"carrier/compose"
)

// Each chosen file on the Media screen shows a thumbnail (issue 32: a list
// of names alone did not show which picture was which). A picture is read
// and made small off the UI thread, one at a time so that a folder of 300
// does not take every core, and kept for the selection; a video, or a
// picture Go cannot read (HEIC), shows an icon of its kind. The row is as
// tall as before: the thumbnail is as high as its line of text.

// thumbSide is a thumbnail's side, in the window's units.
const thumbSide = 32

// thumbPixels is the side, in pixels, a picture is made small to: twice
// the side, for screens that scale by two.
const thumbPixels = 2 * thumbSide

// thumbFor is the thumbnail of a chosen file: its picture once read, an
// icon until then (UI thread).
func (t *timelineScreen) thumbFor(m *compose.PhotosMedia) *canvas.Image {
	img := canvas.NewImageFromResource(theme.FileImageIcon())
	if m.Video {
		img = canvas.NewImageFromResource(theme.FileVideoIcon())
	}
	img.FillMode = canvas.ImageFillContain
	img.SetMinSize(fyne.NewSize(thumbSide, thumbSide))
	if m.Video {
		return img
	}
	if small, ok := t.thumbs[m.Path]; ok {
		if small != nil {
			img.Resource, img.Image = nil, small
		}
		return img
	}
	// The list is made again on every change: the newest row's image is
	// the one to fill.
	for i := range t.thumbWant {
		if t.thumbWant[i].path == m.Path {
			t.thumbWant[i].img = img
			return img
		}
	}
	t.thumbWant = append(t.thumbWant, thumbJob{m.Path, img})
	t.readThumbs()
	return img
}

// thumbJob is a picture to make small, and the image that shows it.
type thumbJob struct {
	path string
	img  *canvas.Image
}

// readThumbs makes the wanted thumbnails, one at a time, in the
// background (UI thread: it only starts the reader).
func (t *timelineScreen) readThumbs() {
	if t.thumbReading || len(t.thumbWant) == 0 || t.u.ctx.Err() != nil {
		return // one at a time; none once the window closes
	}
	job := t.thumbWant[0]
	t.thumbWant = t.thumbWant[1:]
	if small, ok := t.thumbs[job.path]; ok {
		t.showThumb(job.img, small)
		t.readThumbs()
		return
	}
	t.thumbReading = true
	gen := t.thumbGen
	t.u.goBackground(func(ctx context.Context) {
		small := readThumb(job.path)
		t.u.do(func() {
			t.thumbReading = false
			if gen == t.thumbGen {
				t.thumbs[job.path] = small
				t.showThumb(job.img, small)
			}
			t.readThumbs()
		})
	})
}

// showThumb puts a picture made small in its image; nil keeps the icon.
func (t *timelineScreen) showThumb(img *canvas.Image, small image.Image) {
	if small == nil {
		return
	}
	img.Resource, img.Image = nil, small
	img.Refresh()
}

// forgetThumbs drops the thumbnails of the selection and those still
// wanted: a new selection reads its own (UI thread).
func (t *timelineScreen) forgetThumbs() {
	t.thumbGen++
	t.thumbs = map[string]image.Image{}
	t.thumbWant = nil
}

// readThumb reads a picture and makes it small; nil when it cannot be
// read (the row keeps its icon).
func readThumb(path string) image.Image {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	src, _, err := image.Decode(f)
	if err != nil {
		return nil
	}
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		return nil
	}
	scale := float64(thumbPixels) / float64(max(w, h))
	if scale >= 1 {
		return src
	}
	dst := image.NewRGBA(image.Rect(0, 0, max(1, int(float64(w)*scale)), max(1, int(float64(h)*scale))))
	xdraw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, b, xdraw.Src, nil)
	return dst
}
