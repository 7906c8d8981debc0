package ui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"carrier/transfer"
)

// inLanguage makes the window speak code for the test, and English again
// after it.
func inLanguage(t *testing.T, code string) {
	t.Helper()
	t.Cleanup(func() {
		useLanguage("")
		if err := LoadTranslations(); err != nil {
			t.Error(err)
		}
	})
	useLanguage(code)
	if err := LoadTranslations(); err != nil {
		t.Fatal(err)
	}
}

// composePlaces are where Compose's To label and field, Send, Save as
// draft, the attachments' heading and Attach… lie in the window.
type composePlaces struct {
	toLabel, to, send, draft, heading, attach fyne.Position
	toSize, sendSize                          fyne.Size
}

func placesOfCompose(t *testing.T, h *harness) composePlaces {
	t.Helper()
	c := h.u.compose
	h.w.Resize(fyne.NewSize(1100, 720))
	var toLabel *widget.Label
	for i, o := range c.form.Objects {
		if l, ok := o.(*widget.Label); ok && i+1 < len(c.form.Objects) {
			if box, ok := c.form.Objects[i+1].(*fyne.Container); ok && len(box.Objects) > 0 && box.Objects[0] == c.to {
				toLabel = l
			}
		}
	}
	if toLabel == nil {
		t.Fatal("no label beside To")
	}
	at := fyne.CurrentApp().Driver().AbsolutePositionForObject
	return composePlaces{
		toLabel: at(toLabel), to: at(c.to), send: at(c.sendBtn), draft: at(c.draftBtn),
		heading: at(c.attHeading), attach: at(c.attachBtn), toSize: c.to.Size(), sendSize: c.sendBtn.Size(),
	}
}

// In Persian, Compose is mirrored as the other screens are: each label on
// the right of its field, Send at the bottom left with Save as draft on
// its right, the attachments' heading on the right and Attach… on the
// left; Tab still goes To, Cc, Bcc, Subject. In English nothing moved.
func TestComposeMirroredInPersian(t *testing.T) {
	english := placesOfCompose(t, newHarness(t))
	if english.toLabel.X >= english.to.X || english.send.X <= english.draft.X || english.heading.X >= english.attach.X {
		t.Fatalf("English Compose is not as it was: %+v", english)
	}

	inLanguage(t, "fa")
	h := newHarness(t)
	p := placesOfCompose(t, h)
	if p.toLabel.X < p.to.X+p.toSize.Width {
		t.Errorf("To's label at x=%v is not right of its field (x=%v, %v wide)", p.toLabel.X, p.to.X, p.toSize.Width)
	}
	if p.send.X >= p.draft.X {
		t.Errorf("Send at x=%v is not left of Save as draft at x=%v", p.send.X, p.draft.X)
	}
	if p.send.X > 40 {
		t.Errorf("Send at x=%v, not at the left edge", p.send.X)
	}
	if p.heading.X <= p.attach.X {
		t.Errorf("the attachments' heading at x=%v is not right of Attach… at x=%v", p.heading.X, p.attach.X)
	}
	// Send's paper plane points left, the way a right-to-left line goes.
	if c := string(h.u.compose.sendBtn.Icon.Content()); !strings.Contains(c, `matrix(-1 0 0 1`) {
		t.Errorf("Send's icon is not mirrored: %.120s", c)
	}
	c := h.u.compose
	h.w.Canvas().Focus(c.to)
	for _, next := range []fyne.Focusable{c.cc, c.bcc, c.subject} {
		h.w.Canvas().FocusNext()
		if h.w.Canvas().Focused() != next {
			t.Fatalf("Tab went to %T, not the next field in reading order", h.w.Canvas().Focused())
		}
	}
}

// englishLeft finds the English words of the catalogue-less row text the
// issue saw in Persian rows: the route ("Gmail · send"), the place
// ("sandbox, on this computer"), the label's joints ("to", "shared
// with") and the size's unit ("bytes").
var englishLeft = regexp.MustCompile(`\b(to|send|sandbox|on this computer|bytes|shared|with|anyone|link|subject|Uploading|left|of)\b`)

// A Persian window words every Transfers row in Persian, jobs read back
// from the journal included, whose labels the recipes stored in English:
// only names, addresses and Google's product names stay Latin. The
// progress line keeps its numbers apart: the rate and the minutes are not
// run together ("KiB/s · 2 502.8").
func TestTransfersRowsInPersian(t *testing.T) {
	inLanguage(t, "fa")
	root := "http://127.0.0.1:9"
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"m1": {ID: "m1", Label: "Quarterly report · to zoe@example.com", URL: root + "/upload/gmail/v1/users/me/messages/send?uploadType=resumable",
			State: transfer.StateRunning, Size: 20 << 20, Confirmed: 10 << 20, Rate: 502.8 * 1024, Created: time.Unix(1, 0)},
		"m2": {ID: "m2", Label: "(no subject) · to ali@example.ir", URL: root + "/upload/gmail/v1/users/me/drafts?uploadType=resumable",
			State: transfer.StateQueued, Size: 700, Confirmed: 300, Created: time.Unix(2, 0)},
		"d1": {ID: "d1", Label: "holiday.zip · to Google Drive", URL: root + "/upload/drive/v3/files?uploadType=resumable",
			State: transfer.StatePaused, Size: 900, Created: time.Unix(3, 0)},
		"s1": {ID: "s1", Label: "holiday.zip · shared with anyone with the link", URL: root + "/drive/v3/files/abc/permissions", Type: transfer.Call,
			State: transfer.StateQueued, Created: time.Unix(4, 0)},
	}}
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, make(chan transfer.Event, 8) })
	for id, r := range h.u.transfers.rows {
		for _, l := range []*widget.Label{r.name, r.dest, r.amount} {
			said := fyneShows(t, l.Text)
			said = strings.NewReplacer("zoe@example.com", "", "ali@example.ir", "", "holiday.zip", "", "Quarterly report", "").Replace(said)
			if m := englishLeft.FindString(said); m != "" {
				t.Errorf("row %s says %q in a Persian window: %q", id, m, said)
			}
		}
		if m := englishLeft.FindString(r.state.AccessibilityLabel()); m != "" {
			t.Errorf("row %s's state says %q: %q", id, m, r.state.AccessibilityLabel())
		}
	}
	if len(h.u.transfers.rows) != 4 {
		t.Fatalf("%d rows, want 4", len(h.u.transfers.rows))
	}
	// "Uploading · 502.8 KiB/s · 20 min left", drawn in Persian order:
	// read from the right, the rate and then the time, each whole.
	state := fyneShows(t, h.u.transfers.rowOf("m1").state.Text)
	if !strings.Contains(state, " · 502.8 KiB/s · ") || strings.Contains(state, "KiB/s · 2") {
		t.Errorf("the progress line is drawn %q: the rate and the time run together", state)
	}
	if f := fence(stateWords(jobView{snap: fu.recs["m1"]}, time.Now())); !strings.Contains(f, "\u2068502.8 KiB/s\u2069") || !strings.Contains(f, "\u206820\u2069") {
		t.Errorf("the progress line's numbers are not isolated: %q", f)
	}
}

// The page counter reads "1–3 of 16 uploads" in Persian order: from the
// right, the range as written, then "of", the total and the noun; it was
// drawn "بارگذاری 16 از 3–1", the range backwards.
func TestPageCounterInPersian(t *testing.T) {
	inLanguage(t, "fa")
	v, rtl := visualText(placeWords("upload", 1, 3, 16))
	if got, want := fyneShows(t, v), "یراذگراب 16 زا 1–3"; got != want || !rtl {
		t.Errorf("the page counter is drawn %q (rtl %v), want %q", got, rtl, want)
	}
}

// Numbers are written in Latin digits in every language, as the
// numbers Carrier makes (sizes, counts, times) are: a catalogue that
// wrote some in Persian or Arabic-Indic digits mixed the two on one
// screen ("۳۰ روز" beside "12.0 KiB").
func TestCataloguesWriteLatinDigits(t *testing.T) {
	localDigit := regexp.MustCompile(`[\x{0660}-\x{0669}\x{06F0}-\x{06F9}]`)
	for _, code := range []string{"fa", "he", "ar"} {
		for key, v := range readCatalogue(t, code) {
			forms := []any{v}
			if m, ok := v.(map[string]any); ok {
				forms = nil
				for _, f := range m {
					forms = append(forms, f)
				}
			}
			for _, f := range forms {
				if s, _ := f.(string); localDigit.MatchString(s) {
					t.Errorf("%s.json: %q writes %q", code, key, localDigit.FindString(s))
				}
			}
		}
	}
}
