package ui

import (
	"strings"
	"sync/atomic"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// formNotes are the words of the notes under Compose's fields.
func formNotes(c *composeScreen) string {
	var words []string
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *wrapLabel:
			if x.Visible() {
				words = append(words, x.logical)
			}
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				walk(c)
			}
		}
	}
	walk(c.form)
	return strings.Join(words, "\n")
}

// Issue 32: nothing on Compose said the sandbox was in use. The note
// under To says so while messages go to the sandbox, and no more once an
// account at Google is what they go as.
func TestComposeSaysTheSandboxIsInUse(t *testing.T) {
	var google atomic.Bool
	h := newHarness(t, func(o *harnessOpts) {
		o.deps = func(d *Deps) {
			d.Account = func() Account {
				if google.Load() {
					return Account{Address: "ann@example.com"}
				}
				return Account{Sandbox: true}
			}
		}
	})
	c := h.u.compose
	if notes := formNotes(c); !strings.Contains(notes, "The sandbox is in use: messages stay on this computer") {
		t.Fatalf("Compose on the sandbox says:\n%s", notes)
	}
	google.Store(true)
	h.u.account.show()
	if notes := formNotes(c); strings.Contains(notes, "sandbox") || !strings.Contains(notes, "Recipients, separated by commas") {
		t.Fatalf("Compose signed in at Google says:\n%s", notes)
	}
}
