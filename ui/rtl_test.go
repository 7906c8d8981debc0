package ui

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
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

// In Persian the screens' buttons read from the right as every other row
// does: Compose's at the right edge, each next one left of the one before;
// Tab still goes from the first to the last. In English nothing moved.
func TestTabBarMirroredInPersian(t *testing.T) {
	xs := func(h *harness) []float32 {
		h.w.Resize(fyne.NewSize(1100, 720))
		at := fyne.CurrentApp().Driver().AbsolutePositionForObject
		var out []float32
		for _, it := range h.u.tabs.Items {
			out = append(out, at(it.button).X)
		}
		return out
	}
	english := xs(newHarness(t))
	for i := 1; i < len(english); i++ {
		if english[i] <= english[i-1] {
			t.Fatalf("English tab %d at x=%v is not right of the one before (x=%v)", i, english[i], english[i-1])
		}
	}

	inLanguage(t, "fa")
	h := newHarness(t)
	p := xs(h)
	first := h.u.tabs.Items[0].button
	if right := p[0] + first.Size().Width; right < 1100-40 {
		t.Errorf("the first screen's button ends at x=%v, not at the right edge", right)
	}
	for i := 1; i < len(p); i++ {
		if p[i] >= p[i-1] {
			t.Errorf("tab %d at x=%v is not left of the one before (x=%v)", i, p[i], p[i-1])
		}
	}
	h.w.Canvas().Focus(first)
	for _, next := range h.u.tabs.Items[1:] {
		h.w.Canvas().FocusNext()
		if h.w.Canvas().Focused() != next.button {
			t.Fatalf("Tab went to %T, not the next screen's button", h.w.Canvas().Focused())
		}
	}
}

// In Persian, Media's rows of buttons read from the right as Compose's
// do: Add pictures or videos… at the right with Add a folder… on its
// left, Carrier's albums… left of the album's name, and Post at the
// bottom left with Clear at the right. In English nothing moved.
func TestMediaMirroredInPersian(t *testing.T) {
	type places struct{ add, folder, albums, album, post, clear float32 }
	of := func(h *harness) places {
		h.u.tabs.Select(h.u.timelineTab)
		h.w.Resize(fyne.NewSize(1100, 720))
		m := h.u.timeline
		x := func(o fyne.CanvasObject) float32 { return fyne.CurrentApp().Driver().AbsolutePositionForObject(o).X }
		return places{x(m.pickBtn), x(m.addFolder), x(m.albums), x(m.album), x(m.post), x(m.clearFiles)}
	}
	en := of(newHarness(t))
	if en.add >= en.folder || en.albums <= en.album || en.post <= en.clear {
		t.Fatalf("English Media is not as it was: %+v", en)
	}

	inLanguage(t, "fa")
	p := of(newHarness(t))
	if p.add <= p.folder {
		t.Errorf("Add pictures or videos… at x=%v is not right of Add a folder… at x=%v", p.add, p.folder)
	}
	if p.albums >= p.album {
		t.Errorf("Carrier's albums… at x=%v is not left of the album's name at x=%v", p.albums, p.album)
	}
	if p.post >= p.clear || p.post > 40 {
		t.Errorf("Post at x=%v is not at the bottom left, left of Clear at x=%v", p.post, p.clear)
	}
}

// In Persian the Mailbox reads from the right: its list on the right and
// the opened message on its left (where the rows' arrows point), Refresh
// at the left of the top line, an attachment's icon and name on the right
// with Open and Save… on its left; the opened item's kind is in Persian
// ("Sent" was left in English). In English nothing moved.
func TestMailboxMirroredInPersian(t *testing.T) {
	type places struct{ list, detail, refresh, icon, name, open float32 }
	of := func(h *harness) (places, string) {
		h.putMail(withAttachments([]byte("%PDF")))
		m := h.u.mailbox
		h.u.tabs.Select(h.u.mailboxTab)
		h.w.Resize(fyne.NewSize(1100, 720))
		h.until("the mailbox loaded", func() bool { return len(m.items) > 0 && !m.loading })
		m.choose(0)
		h.until("the message opened", func() bool { return strings.Contains(labelsIn(m.detail.Box), "plan.pdf") })
		at := func(o fyne.CanvasObject) float32 { return fyne.CurrentApp().Driver().AbsolutePositionForObject(o).X }
		var p places
		var walk func(o fyne.CanvasObject)
		walk = func(o fyne.CanvasObject) {
			switch o := o.(type) {
			case *widget.Icon:
				if o.Resource == theme.FileIcon() && p.icon == 0 {
					p.icon = at(o)
				}
			case *widget.Label:
				if o.Text == "plan.pdf" {
					p.name = at(o) + o.Size().Width
				}
			case *fyne.Container:
				for _, c := range o.Objects {
					walk(c)
				}
			}
		}
		walk(m.detail.Box)
		open := buttonNamed(m.detail.Box, lang.X("attach.open.name", "Open {{.Name}}", w{"Name": "plan.pdf"}))
		if open == nil || p.icon == 0 || p.name == 0 {
			t.Fatalf("no row for plan.pdf:\n%s", labelsIn(m.detail.Box))
		}
		p.open = at(open)
		p.list, p.detail, p.refresh = at(m.list.Object), at(m.detail.Object), at(m.refreshBtn)
		return p, labelsIn(m.detail.Box)
	}
	en, text := of(newHarness(t))
	if en.list >= en.detail || en.icon >= en.name || en.open <= en.name || en.refresh < 900 || !strings.HasPrefix(text, "Sent\n") {
		t.Fatalf("the English Mailbox is not as it was: %+v\n%s", en, text)
	}

	inLanguage(t, "fa")
	h := newHarness(t)
	p, text := of(h)
	if p.list <= p.detail {
		t.Errorf("the list at x=%v is not right of the opened message at x=%v", p.list, p.detail)
	}
	if p.refresh > 40 {
		t.Errorf("Refresh at x=%v, not at the left", p.refresh)
	}
	if p.icon <= p.name || p.open >= p.name {
		t.Errorf("the attachment's row is not mirrored: icon at x=%v, name ends at x=%v, Open at x=%v", p.icon, p.name, p.open)
	}
	if strings.HasPrefix(text, "Sent\n") || !strings.HasPrefix(text, display(kindName("Sent"))+"\n") {
		t.Errorf("the opened item's kind is not in Persian:\n%.200s", text)
	}
	// The attachments' count is a heading at the right, as the lines
	// around it are.
	var heading *widget.Label
	var find func(o fyne.CanvasObject)
	find = func(o fyne.CanvasObject) {
		switch o := o.(type) {
		case *widget.Label:
			if o.Text == display(attachmentCount(2)) {
				heading = o
			}
		case *fyne.Container:
			for _, c := range o.Objects {
				find(c)
			}
		}
	}
	find(h.u.mailbox.detail.Box)
	if heading == nil || heading.Alignment != fyne.TextAlignTrailing {
		t.Errorf("the attachments' count is not at the right: %+v", heading)
	}
}

// In Persian Transfers' top line reads from the right: its words on the
// right, Clear finished at the left. In English it stays at the right.
func TestTransfersTopLineMirroredInPersian(t *testing.T) {
	x := func(h *harness) float32 {
		h.u.tabs.Select(h.u.transfersTab)
		h.w.Resize(fyne.NewSize(1100, 720))
		return fyne.CurrentApp().Driver().AbsolutePositionForObject(h.u.transfers.clear).X
	}
	if en := x(newHarness(t)); en < 900 {
		t.Fatalf("English Clear finished at x=%v, not at the right", en)
	}
	inLanguage(t, "fa")
	if fa := x(newHarness(t)); fa > 40 {
		t.Errorf("Clear finished at x=%v, not at the left", fa)
	}
}

// A number grouped in thousands the Persian way ("10٬000") is drawn
// whole: Media's plan read "‘00010", its groups swapped, because the
// Arabic thousands separator cut it in two.
func TestGroupedNumberWholeInPersian(t *testing.T) {
	inLanguage(t, "fa")
	n := groupCount(10000)
	if n != "10٬000" {
		t.Fatalf("10000 grouped as %q", n)
	}
	for _, line := range []string{"4 درخواست از " + n + " درخواست روزانه", "از " + n, n + " پرونده"} {
		v, _ := visualText(line)
		if got := fyneShows(t, v); !strings.Contains(got, n) {
			t.Errorf("%q is drawn %q: the number is not whole", line, got)
		}
	}
}

// In Persian a list's pager reads from the right: Earlier at the right,
// then Later, then where the list stands, whose words are drawn in
// display order ("1–5 از 30 مورد": they were drawn as stored, the range's
// numbers and the count out of their places).
func TestPagerMirroredInPersian(t *testing.T) {
	inLanguage(t, "fa")
	h := newHarness(t)
	h.w.Resize(fyne.NewSize(1024, 700))
	h.u.tabs.Select(h.u.timelineTab)
	tl := h.u.timeline
	dir := t.TempDir()
	for i := range 30 {
		writeJPEG(t, filepath.Join(dir, fmt.Sprintf("IMG_%04d.jpg", i+1)), 600)
	}
	dropMedia(h, dir)
	h.w.Resize(fyne.NewSize(1024, 700))
	h.until("a page of rows", func() bool { return len(tl.files) == 30 && tl.list.layout.shown >= 3 && tl.list.place != "" })
	h.w.Resize(fyne.NewSize(1000, 700)) // laid out again, with the pager shown
	h.w.Resize(fyne.NewSize(1024, 700))
	shown := tl.list.layout.shown
	want := fmt.Sprintf("1–%d از 30 مورد", shown)
	if tl.list.place != want || tl.list.where.Text != display(want) || tl.list.where.Text == want {
		t.Fatalf("the pager says %q (drawn %q), want %q drawn %q", tl.list.place, tl.list.where.Text, want, display(want))
	}
	x := func(o fyne.CanvasObject) float32 { return fyne.CurrentApp().Driver().AbsolutePositionForObject(o).X }
	if !(x(tl.list.earlier) > x(tl.list.later) && x(tl.list.later) > x(tl.list.where)) {
		t.Fatalf("the pager from the left: where at %v, Later at %v, Earlier at %v", x(tl.list.where), x(tl.list.later), x(tl.list.earlier))
	}
}
