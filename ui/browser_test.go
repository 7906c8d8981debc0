package ui

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// A link the system cannot open (no xdg-open installed) is said in words,
// with the address to open by hand, not as the opener's error
// (`exec: "xdg-open": executable file not found in $PATH` was shown raw).
func TestBrowserFailureSaidInWords(t *testing.T) {
	h := newHarness(t)
	m := h.u.mailbox
	m.openURL = func(*url.URL) error {
		return errors.New(`exec: "xdg-open": executable file not found in $PATH`)
	}
	const address = "https://example.com/holiday?id=7"
	u, _ := url.Parse(address)
	link := m.link(address, u).(*mailLink)
	test.Tap(link)
	h.until("the words that the browser could not be opened", func() bool { return h.u.browserAsked != nil })
	b := h.u.browserAsked
	if b.text.logical != "Carrier could not open your web browser. Open this address yourself:" || b.address.Text != address {
		t.Errorf("said %q with the address %q", b.text.logical, b.address.Text)
	}
	if strings.Contains(m.status.logical, "exec") {
		t.Errorf("the Mailbox says %q", m.status.logical)
	}
	// The address is there to copy, not to change.
	b.address.SetText("something else")
	if b.address.Text != address {
		t.Errorf("the address box holds %q", b.address.Text)
	}
	test.Tap(b.copy)
	if got := fyne.CurrentApp().Clipboard().Content(); got != address {
		t.Errorf("copied %q", got)
	}
}

// A sign-in's browser that cannot be opened shows its address the same
// way (main.go hands BrowserFailed to app.Google.OnBrowserFailed).
func TestSignInAddressShownWhenNoBrowser(t *testing.T) {
	h := newHarness(t)
	const address = "https://accounts.google.com/o/oauth2/v2/auth?client_id=x"
	go h.u.BrowserFailed(address)
	h.until("the sign-in address shown", func() bool { return h.u.browserAsked != nil })
	if h.u.browserAsked.address.Text != address {
		t.Errorf("shows %q", h.u.browserAsked.address.Text)
	}
}
