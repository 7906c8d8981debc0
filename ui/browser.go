package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// browserFailedDialog says that the web browser could not be opened at
// an address (no xdg-open installed, say) and holds the address for the
// person to open themselves: selectable in a box, and a button copies it.
type browserFailedDialog struct {
	text    *wrapLabel
	address *namedEntry
	copy    *dialogButton
	d       *carrierDialog
}

// BrowserFailed tells the person, in words, that Carrier could not open
// their web browser at address, and gives them the address to open
// themselves: a sign-in's (app.Google.OnBrowserFailed) or a link's. It
// may be called from any goroutine.
func (u *UI) BrowserFailed(address string) {
	u.do(func() { u.browserFailed(address) })
}

func (u *UI) browserFailed(address string) {
	b := &browserFailedDialog{}
	b.text = newWrapLabel(lang.X("browser.failed", "Carrier could not open your web browser. Open this address yourself:"))
	b.address = newNamedEntry(lang.X("browser.address", "The address"), true)
	b.address.Wrapping = fyne.TextWrapBreak // an address has no spaces to wrap at
	b.address.SetText(address)
	b.address.SetMinRowsVisible(3)
	// The box is there to select and copy from: an edit is undone.
	b.address.OnChanged = func(text string) {
		if text != address {
			b.address.SetText(address)
		}
	}
	b.copy = newDialogButton(display(lang.X("browser.copy", "Copy the address")), theme.ContentCopyIcon(), func() {
		u.app.Clipboard().SetContent(address)
	})
	b.copy.Importance = widget.HighImportance
	closeBtn := newDialogButton(display(lang.X("browser.close", "Close")), nil, func() { b.d.Hide() })
	content := container.NewBorder(b.text, container.NewHBox(b.copy, layout.NewSpacer(), closeBtn), nil, nil, b.address)
	b.d = u.newDialog(display(lang.X("browser.failed.title", "Open this address in your browser")), content, closeBtn)
	b.d.Resize(fyne.NewSize(560, 260))
	b.d.Show()
	u.browserAsked = b
}
