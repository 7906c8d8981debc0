package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"carrier/internal/app/recipients"
)

// withAddressBook gives the window the remembered recipients of state.
func withAddressBook(book *recipients.AddressBook) func(*harnessOpts) {
	return func(o *harnessOpts) { o.deps = func(d *Deps) { d.Addresses = book } }
}

func offeredText(k *completer) []string {
	var out []string
	if !k.box.Visible() {
		return nil
	}
	for _, p := range k.picks {
		out = append(out, p.Text)
	}
	return out
}

// Typing two letters in To offers a remembered address, the most used
// first; Down chooses the next and Enter fills it in, with the comma for
// the next address; Escape closes the list.
func TestRecipientsOfferedAsYouType(t *testing.T) {
	book := recipients.OpenAddressBook(t.TempDir())
	book.Remember("", "Zoe Park <zoe@example.com>", "zoe@example.com", "zora@example.org", "bob@example.com")
	h := newHarness(t, withAddressBook(book))
	c := h.u.compose
	to := c.completers[0]
	h.w.Canvas().Focus(c.to)
	test.Type(c.to, "z")
	if got := offeredText(to); got != nil {
		t.Fatalf("one letter offers %q", got)
	}
	test.Type(c.to, "o")
	if got := offeredText(to); len(got) != 2 || !strings.Contains(got[0], "zoe@example.com") || !strings.Contains(got[1], "zora@example.org") {
		t.Fatalf("zo offers %q: want zoe (sent to twice) then zora", got)
	}
	c.to.TypedKey(&fyne.KeyEvent{Name: fyne.KeyDown})
	c.to.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if c.to.Text != "zora@example.org, " || to.box.Visible() {
		t.Fatalf("Down and Enter left To %q, the list showing %v", c.to.Text, to.box.Visible())
	}
	test.Type(c.to, "pa")
	if got := offeredText(to); len(got) != 1 || !strings.Contains(got[0], "Zoe Park") {
		t.Fatalf("pa (a word of a name) offers %q", got)
	}
	c.to.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if c.to.Text != `zora@example.org, "Zoe Park" <zoe@example.com>, ` {
		t.Fatalf("Enter left To %q", c.to.Text)
	}
	test.Type(c.to, "bo")
	c.to.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if to.box.Visible() || c.to.Text != `zora@example.org, "Zoe Park" <zoe@example.com>, bo` {
		t.Fatalf("Escape left the list %v and To %q", to.box.Visible(), c.to.Text)
	}
	// Cc and Bcc offer the same.
	test.Type(c.bcc, "bo")
	if got := offeredText(c.completers[2]); len(got) != 1 || got[0] != "bob@example.com" {
		t.Fatalf("Bcc offers %q", got)
	}
}

// Forget in the list removes the address from what is offered, for good.
func TestRecipientsForget(t *testing.T) {
	book := recipients.OpenAddressBook(t.TempDir())
	book.Remember("", "zoe@example.com", "zora@example.org")
	h := newHarness(t, withAddressBook(book))
	c := h.u.compose
	test.Type(c.to, "zo")
	to := c.completers[0]
	if got := offeredText(to); len(got) != 2 {
		t.Fatalf("zo offers %q", got)
	}
	forget := to.box.Objects[0].(*fyne.Container)
	var btn *focusButton
	for _, o := range forget.Objects {
		if b, ok := o.(*focusButton); ok && b.Text == "Forget" {
			btn = b
		}
	}
	if btn == nil {
		t.Fatal("no Forget in the list")
	}
	test.Tap(btn)
	h.until("the list offers one address", func() bool { return len(offeredText(to)) == 1 })
	if got := book.Suggest("", "zo", 5); len(got) != 1 || got[0].Address != "zora@example.org" {
		t.Fatalf("after Forget the book offers %v", got)
	}
}

// A message sent is remembered: its recipients are offered next time.
func TestRecipientsRememberedOnSend(t *testing.T) {
	book := recipients.OpenAddressBook(t.TempDir())
	h := newHarness(t, withAddressBook(book))
	c := h.u.compose
	h.writeMessage("Ann Lee <ann@example.com>", "Hello")
	test.Tap(c.sendBtn)
	h.until("the message is sent", func() bool { return h.doneRows() == 1 })
	test.Type(c.cc, "le")
	if got := offeredText(c.completers[1]); len(got) != 1 || !strings.Contains(got[0], "ann@example.com") {
		t.Fatalf("after sending to Ann, le offers %q", got)
	}
}

// An address typed whole offers nothing: the list would open under the
// field and move the form just as the pointer goes to the next field.
func TestRecipientTypedWholeOffersNothing(t *testing.T) {
	book := recipients.OpenAddressBook(t.TempDir())
	book.Remember("", "zoe@example.com", "zoe@example.com.au")
	h := newHarness(t, withAddressBook(book))
	c := h.u.compose
	h.w.Canvas().Focus(c.to)
	test.Type(c.to, "zoe@ex")
	if got := offeredText(c.completers[0]); len(got) != 2 {
		t.Fatalf("zoe@ex offers %q: want both", got)
	}
	test.Type(c.to, "ample.com")
	if got := offeredText(c.completers[0]); got != nil {
		t.Fatalf("the whole address offers %q", got)
	}
}
