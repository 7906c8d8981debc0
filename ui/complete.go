package ui

import (
	"cmp"
	"context"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/internal/app/recipients"
)

// Recipients remembered: as the person types two letters of an address
// or a name in To, Cc or Bcc, the addresses they sent to from the sending
// account (recipients.AddressBook) are offered under the field, most used first.
// Down and Up choose one, Enter fills it in (with the comma for the
// next), Escape closes the list; each has a Forget. Nothing leaves the
// computer. The list is part of the form, not a pop-up, so the field keeps
// the keyboard while it shows.

// AddressBook is what Compose needs of the remembered recipients.
type AddressBook interface {
	Remember(account string, fields ...string) error
	Suggest(account, typed string, n int) []recipients.Recipient
	Forget(account, address string) error
}

// offerAtMost bounds the list: a few lines, so the form barely moves.
const offerAtMost = 4

// completer is one address field's list.
type completer struct {
	c       *composeScreen
	e       *namedEntry
	box     *fyne.Container // the offered addresses, under the field; hidden when none
	offered []recipients.Recipient
	picks   []*focusButton
	sel     int  // the chosen row, for Enter
	filling bool // the field is being filled from the list: not a keystroke
}

// newCompleter gives address field e its list (box, for the form).
func (c *composeScreen) newCompleter(e *namedEntry) *completer {
	k := &completer{c: c, e: e, box: container.NewVBox()}
	k.box.Hide()
	prev := e.OnChanged
	e.OnChanged = func(s string) {
		if prev != nil {
			prev(s)
		}
		k.changed(s)
	}
	e.keys = k.key
	return k
}

// account is who the message goes from: the From choice, else the
// window's account.
func (k *completer) account() string {
	var signedIn string
	if k.c.u.deps.Account != nil {
		signedIn = k.c.u.deps.Account().Address
	}
	return cmp.Or(k.c.from.sender(), signedIn)
}

// lastWord splits a field at its last comma: what is written before, and
// the address being typed.
func lastWord(text string) (before, word string) {
	i := strings.LastIndex(text, ",")
	return text[:i+1], strings.TrimSpace(text[i+1:])
}

// changed offers the remembered addresses for what is being typed, but
// none the field holds already.
func (k *completer) changed(text string) {
	book := k.c.u.deps.Addresses
	if book == nil || k.filling {
		return
	}
	before, word := lastWord(text)
	var offer []recipients.Recipient
	if strings.Contains(word, "@") {
		for _, r := range book.Suggest(k.account(), word, 1) {
			if strings.EqualFold(r.Address, word) {
				// Typed whole (or pasted): nothing to complete, and a
				// list opening under the field would move the form
				// under the pointer on its way to the next field.
				k.hide()
				return
			}
		}
	}
	for _, r := range book.Suggest(k.account(), word, offerAtMost+strings.Count(before, ",")) {
		if !strings.Contains(strings.ToLower(before), strings.ToLower(r.Address)) && len(offer) < offerAtMost {
			offer = append(offer, r)
		}
	}
	k.show(offer)
}

// show puts offer into the list (UI thread), the first row chosen.
func (k *completer) show(offer []recipients.Recipient) {
	k.offered, k.sel, k.picks = offer, 0, nil
	k.box.RemoveAll()
	if len(offer) == 0 {
		k.box.Hide()
		return
	}
	for i, r := range offer {
		pick := newFocusButton(display(r.String()), theme.AccountIcon(), func() { k.fill(i) })
		pick.Alignment = widget.ButtonAlignLeading
		forget := newFocusButton(lang.X("compose.forget", "Forget"), theme.DeleteIcon(), func() { k.forget(r.Address) })
		forget.Importance = widget.LowImportance
		k.picks = append(k.picks, pick)
		k.box.Add(mirrorRTL(container.NewBorder(nil, nil, nil, forget, pick)))
	}
	k.mark()
	k.box.Show()
	k.box.Refresh()
}

// mark shows which row Enter fills in.
func (k *completer) mark() {
	for i, p := range k.picks {
		imp := widget.MediumImportance
		if i == k.sel {
			imp = widget.HighImportance
		}
		if p.Importance != imp {
			p.Importance = imp
			p.Refresh()
		}
	}
}

// key takes Down, Up, Enter and Escape while the list shows.
func (k *completer) key(ev *fyne.KeyEvent) bool {
	if !k.box.Visible() || len(k.offered) == 0 {
		return false
	}
	switch ev.Name {
	case fyne.KeyDown:
		k.sel = (k.sel + 1) % len(k.offered)
	case fyne.KeyUp:
		k.sel = (k.sel + len(k.offered) - 1) % len(k.offered)
	case fyne.KeyReturn, fyne.KeyEnter:
		k.fill(k.sel)
		return true
	case fyne.KeyEscape:
		k.show(nil)
		return true
	default:
		return false
	}
	k.mark()
	return true
}

// fill puts offered address i in place of what is being typed, with the
// comma for the next, and closes the list.
func (k *completer) fill(i int) {
	if i < 0 || i >= len(k.offered) {
		return
	}
	before, _ := lastWord(k.e.Text)
	if before != "" {
		before += " "
	}
	text := before + k.offered[i].String() + ", "
	k.filling = true
	k.e.SetText(text)
	k.filling = false
	k.e.CursorColumn = len([]rune(text))
	k.e.Refresh()
	k.show(nil)
	if c := k.c.u.win.Canvas(); c != nil {
		c.Focus(k.e)
	}
}

// forget removes address from the remembered ones, off the UI thread,
// and offers again what is left.
func (k *completer) forget(address string) {
	book, account := k.c.u.deps.Addresses, k.account()
	k.c.u.goBackground(func(context.Context) {
		err := book.Forget(account, address)
		k.c.u.do(func() {
			if err != nil {
				k.c.say(windowText(err.Error()))
			}
			k.changed(k.e.Text)
		})
	})
}

// hide closes the list (the form was sent or emptied).
func (k *completer) hide() { k.show(nil) }
