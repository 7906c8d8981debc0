package ui

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"carrier/auth"
	"carrier/internal/app"
	"carrier/transfer"
)

// fakeAccounts plays app.WindowAccounts and records what is asked of it.
type fakeAccounts struct {
	mu         sync.Mutex
	list       []string
	unfinished map[string]app.Waiting
	used       []string
	added      [][]byte
	hints      []string
	signedOut  []string // "ADDR keep|cancel"
	client     bool     // a client is kept (HasClient)
	also       map[string][]auth.Kind
	gate       chan struct{} // non-nil: Add waits for it to close, as a browser keeps a sign-in open
}

func (f *fakeAccounts) HasClient() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.client
}

func (f *fakeAccounts) AlsoAsked(a string) []auth.Kind {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.also[a]
}

func (f *fakeAccounts) List() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.list)
}

func (f *fakeAccounts) Use(a string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.used = append(f.used, a)
	return nil
}

func (f *fakeAccounts) Add(_ context.Context, secret []byte, hint string) (string, error) {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.added = append(f.added, secret)
	f.hints = append(f.hints, hint)
	f.list = append([]string{"new@example.com"}, f.list...)
	return "new@example.com", nil
}

func (f *fakeAccounts) SignOut(_ context.Context, a string, jobs app.UnfinishedJobs) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signedOut = append(f.signedOut, a+" "+map[app.UnfinishedJobs]string{app.KeepJobs: "keep", app.CancelJobs: "cancel"}[jobs])
	f.list = slices.DeleteFunc(f.list, func(x string) bool { return x == a })
	return nil
}

func (f *fakeAccounts) Unfinished(a string) app.Waiting { return f.unfinished[a] }

func (f *fakeAccounts) For(string) transfer.Authorizer { return transfer.StaticToken(tok) }

func (f *fakeAccounts) signOuts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.signedOut)
}

func withAccounts(f *fakeAccounts) func(*harnessOpts) {
	return func(o *harnessOpts) { o.deps = func(d *Deps) { d.Accounts = f } }
}

// Compose sends as the account chosen in From: the message's job is bound
// to it, its row names it, and it becomes the default sender.
func TestComposeSendsAsTheChosenAccount(t *testing.T) {
	f := &fakeAccounts{list: []string{"work@example.com", "home@example.com"}}
	h := newHarness(t, withAccounts(f))
	c := h.u.compose
	if got := c.from.sender(); got != "work@example.com" {
		t.Fatalf("From starts at %q, want the default sender", got)
	}
	test.Tap(c.from.c.buttons[1])
	h.sendMessage(t)
	var msg transfer.Snapshot
	for _, s := range h.q.Jobs() {
		if strings.HasPrefix(s.Label, "Quarterly report") {
			msg = s
		}
	}
	if msg.Account != "home@example.com" {
		t.Fatalf("the message is bound to %q, want home@example.com", msg.Account)
	}
	if row := h.u.transfers.rowOf(msg.ID); row == nil || !strings.Contains(row.dest.Text, "as home@example.com") {
		t.Fatalf("the row does not name its account: %+v", row)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.used) == 0 || f.used[len(f.used)-1] != "home@example.com" {
		t.Errorf("remembered as the last sender: %v", f.used)
	}
}

// Signing out an account with unfinished uploads asks what becomes of
// them, and signs out that account alone, as answered.
func TestSignOutAsksAboutTheAccountsUploads(t *testing.T) {
	f := &fakeAccounts{list: []string{"work@example.com", "home@example.com"}, unfinished: map[string]app.Waiting{"home@example.com": {Uploads: 2}}}
	h := newHarness(t, withAccounts(f))
	s := h.u.account.accounts
	test.Tap(s.outs["home@example.com"])
	if s.asked == nil {
		t.Fatal("signed out without asking about its 2 unfinished uploads")
	}
	test.Tap(s.asked.cancel)
	h.until("signed out", func() bool { return len(f.signOuts()) == 1 })
	if got := f.signOuts(); got[0] != "home@example.com cancel" {
		t.Fatalf("signed out %v", got)
	}
	h.until("the list redrawn", func() bool { return s.outs["home@example.com"] == nil && s.outs["work@example.com"] != nil })
	s.asked = nil
	test.Tap(s.outs["work@example.com"]) // nothing unfinished: no question
	h.until("signed out", func() bool { return len(f.signOuts()) == 2 })
	if s.asked != nil || f.signOuts()[1] != "work@example.com keep" {
		t.Fatalf("asked %v, signed out %v", s.asked != nil, f.signOuts())
	}
}

// The set-up assistant refuses a wrong client file in words and signs in
// with a right one; it names the scopes and warns of "Testing".
func TestSetupAssistantChecksTheClientFile(t *testing.T) {
	f := &fakeAccounts{list: []string{"work@example.com"}}
	h := newHarness(t, withAccounts(f))
	a := h.u.account
	a.openAssistant()
	s := a.assistant
	for _, c := range []struct{ json, want string }{
		{`{"web":{"client_id":"x"}}`, `"Web application" client`},
		{`{"installed":`, "not the JSON"},
		{`{"installed":{"client_id":"x","token_uri":"https://evil.example/token"}}`, "evil.example"},
	} {
		s.paste.SetText(c.json)
		if !strings.Contains(s.said, c.want) || !strings.Contains(s.said, "Desktop app") || !s.signIn.Disabled() {
			t.Errorf("%s: %q (sign in enabled: %v)", c.json, s.said, !s.signIn.Disabled())
		}
	}
	// Dropped on the window, a file is judged the same way.
	s.dropped(fyne.NewPos(10, 10), []fyne.URI{storage.NewFileURI(writeFile(t, "client_secret_web.json", []byte(`{"web":{"client_id":"x"}}`)))})
	h.until("the dropped file judged", func() bool { return strings.Contains(s.said, `"Web application" client`) })
	good := `{"installed":{"client_id":"id.apps.googleusercontent.com","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token","client_secret":"s"}}`
	s.paste.SetText(good)
	if s.signIn.Disabled() {
		t.Fatalf("a Desktop app client refused: %q", s.verdict.Text)
	}
	test.Tap(s.signIn)
	h.until("signed in", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.added) == 1
	})
	if string(f.added[0]) != good {
		t.Fatalf("signed in with %q", f.added[0])
	}
	if !strings.Contains(scopeText(), "gmail.send") || !strings.Contains(testingWarning(), "7 days") {
		t.Error("the assistant does not name the scopes or warn of Testing")
	}
}

// Each account's row signs that account in again (a sign-in Google
// ended), offering it first in the browser.
func TestSignInAgainOffersThatAccount(t *testing.T) {
	f := &fakeAccounts{list: []string{"work@example.com", "home@example.com"}}
	h := newHarness(t, withAccounts(f))
	s := h.u.account.accounts
	box := s.outs["home@example.com"]
	var again *focusButton
	for _, r := range s.list.Objects {
		row, _ := r.(*fyne.Container)
		if row == nil {
			continue
		}
		for _, o := range row.Objects {
			if hb, ok := o.(*fyne.Container); ok && slices.Contains(hb.Objects, fyne.CanvasObject(box)) {
				again = hb.Objects[0].(*focusButton)
			}
		}
	}
	if again == nil {
		t.Fatal("no Sign in again beside home@example.com")
	}
	test.Tap(again)
	h.until("signed in", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.hints) == 1
	})
	if f.hints[0] != "home@example.com" || f.added[0] != nil {
		t.Fatalf("signed in with hint %q and client %q", f.hints[0], f.added[0])
	}
}

// The controls the accounts add (From's choices, each row's Sign in again
// and Sign out…, Add another account) are named for a screen reader.
func TestAccountControlsHaveNames(t *testing.T) {
	f := &fakeAccounts{list: []string{"work@example.com", "home@example.com"}}
	h := newHarness(t, withAccounts(f))
	for _, tb := range []*tab{h.u.composeTab, h.u.accountTab} {
		h.u.tabs.Select(tb)
		names := map[fyne.CanvasObject]string{}
		spoken(h.w.Canvas().Content(), names)
		var cs []fyne.CanvasObject
		controls(tb.content, &cs)
		for _, c := range cs {
			if name, reached := names[c]; !reached || strings.TrimSpace(name) == "" || strings.Contains(name, ".svg") || strings.Contains(name, ".png") {
				t.Errorf("%s: a %T is named %q (reached: %v)", tb.Text, c, name, reached)
			}
		}
	}
	if n := len(h.u.compose.from.c.buttons); n != 2 {
		t.Fatalf("From offers %d accounts", n)
	}
}

// labelWidgets is every label in o.
func labelWidgets(o fyne.CanvasObject) []*widget.Label {
	var out []*widget.Label
	switch x := o.(type) {
	case *widget.Label:
		out = append(out, x)
	case *wrapLabel:
		out = append(out, &x.Label)
	case *fyne.Container:
		for _, c := range x.Objects {
			out = append(out, labelWidgets(c)...)
		}
	case *container.Scroll:
		out = append(out, labelWidgets(x.Content)...)
	}
	return out
}

// wrapLabelOf is the wrapping label in o that shows text (in reading
// order), broken into lines however its width has it.
func wrapLabelOf(o fyne.CanvasObject, text string) *wrapLabel {
	switch x := o.(type) {
	case *wrapLabel:
		if x.logical == text {
			return x
		}
	case *fyne.Container:
		for _, c := range x.Objects {
			if l := wrapLabelOf(c, text); l != nil {
				return l
			}
		}
	case *container.Scroll:
		return wrapLabelOf(x.Content, text)
	}
	return nil
}

func labelWith(o fyne.CanvasObject, part string) *widget.Label {
	for _, l := range labelWidgets(o) {
		if strings.Contains(l.Text, part) {
			return l
		}
	}
	return nil
}

// Issue 20: an account signed out with its uploads kept stays on the
// Account screen, "signed out · N uploads waiting", with a Sign in that
// offers that account; once its uploads end, it leaves the list.
func TestSignedOutAccountWithKeptUploadsIsListed(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"a": {ID: "a", Label: "one", State: transfer.StateSignIn, Account: "home@example.com", SignInFor: "home@example.com"},
		"b": {ID: "b", Label: "two", State: transfer.StateQueued, Account: "home@example.com"},
		"c": {ID: "c", Label: "three", State: transfer.StateDone, Account: "old@example.com"},
		"d": {ID: "d", Label: "four", State: transfer.StateQueued, Account: "work@example.com"},
	}}
	events := make(chan transfer.Event, 8)
	f := &fakeAccounts{list: []string{"work@example.com"}}
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads, o.events = fu, events
		o.deps = func(d *Deps) { d.Accounts = f }
	})
	s := h.u.account.accounts
	if s.ins["home@example.com"] == nil {
		t.Fatalf("home@example.com, signed out with 2 uploads kept, is not listed: %v", s.kept)
	}
	if l := labelWith(s.list, "home@example.com"); l == nil || l.Text != "home@example.com · signed out · 2 uploads waiting" {
		t.Fatalf("the row reads %+v", l)
	}
	if s.ins["old@example.com"] != nil || s.ins["work@example.com"] != nil || s.outs["home@example.com"] != nil {
		t.Errorf("listed as signed out with uploads waiting: %v; signed in: %v", s.kept, s.outs)
	}
	test.Tap(s.ins["home@example.com"])
	h.until("signed in", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.hints) == 1
	})
	if f.hints[0] != "home@example.com" {
		t.Errorf("Sign in offered %q, want home@example.com", f.hints[0])
	}
	h.until("the list redrawn", func() bool { return s.outs["new@example.com"] != nil })

	// Its uploads cancelled elsewhere (the CLI), the account leaves the list.
	f.mu.Lock()
	f.list = []string{"work@example.com"}
	f.mu.Unlock()
	h.u.account.show()
	if s.ins["home@example.com"] == nil {
		t.Fatal("home@example.com not listed again")
	}
	events <- fu.event(transfer.EventCancelled, "a", func(s *transfer.Snapshot) { s.State = transfer.StateCancelled })
	h.until("one upload waiting", func() bool {
		l := labelWith(s.list, "home@example.com")
		return l != nil && l.Text == "home@example.com · signed out · 1 upload waiting"
	})
	events <- fu.event(transfer.EventCancelled, "b", func(s *transfer.Snapshot) { s.State = transfer.StateCancelled })
	h.until("home@example.com gone from the list", func() bool { return s.ins["home@example.com"] == nil && labelWith(s.list, "home@example.com") == nil })
}

// The Account screen speaks Persian: the list's heading and rows, the
// signed-out row's plural, the assistant's text and its refusal of a web
// client (in Persian, with auth's English kept under it), right-aligned.
func TestAccountScreenInPersian(t *testing.T) {
	t.Cleanup(func() {
		useLanguage("")
		if err := LoadTranslations(); err != nil {
			t.Error(err)
		}
	})
	useLanguage("fa")
	if err := LoadTranslations(); err != nil {
		t.Fatal(err)
	}
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"a": {ID: "a", State: transfer.StateSignIn, Account: "home@example.com"},
		"b": {ID: "b", State: transfer.StateSignIn, Account: "home@example.com"},
		"c": {ID: "c", State: transfer.StateSignIn, Account: "home@example.com"},
	}}
	f := &fakeAccounts{list: []string{"work@example.com", "work@example.org"}}
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads = fu
		o.deps = func(d *Deps) { d.Accounts = f }
	})
	fa := readCatalogue(t, "fa")
	shown := func(s string) string { v, _ := visualText(s); return v }
	fill := func(key string, data any) string { return renderTemplate(t, fa[key].(string), data) }
	s := h.u.account.accounts
	for _, c := range []struct{ name, want string }{
		{"heading", shown(fa["accounts.heading"].(string))},
		{"default sender", shown(fill("accounts.default", w{"Address": "work@example.com"}))},
		{"signed out with uploads waiting", shown(fill("accounts.signedout.waiting", w{"Address": "home@example.com", "Waiting": renderTemplate(t, fa["waiting.uploads"].(map[string]any)["other"].(string), w{"Count": 3})}))},
	} {
		l := labelWith(s.Object, c.want)
		if l == nil || l.Text != c.want {
			t.Errorf("%s: no label reads %q", c.name, c.want)
			continue
		}
		if l.Alignment != fyne.TextAlignTrailing {
			t.Errorf("%s: aligned %v, want right", c.name, l.Alignment)
		}
	}
	if l := labelWith(s.list, "work@example.org"); l == nil || l.Alignment != fyne.TextAlignTrailing {
		t.Errorf("a second account's bare address is not aligned with the Persian rows: %+v", l)
	}
	if got, want := s.ins["home@example.com"].Text, shown(fa["accounts.signin"].(string)); got != want {
		t.Errorf("Sign in reads %q, want %q", got, want)
	}
	if got, want := s.add.Text, shown(fa["accounts.add"].(string)); got != want {
		t.Errorf("Add another account reads %q, want %q", got, want)
	}
	h.u.account.openAssistant()
	a := h.u.account.assistant
	if l := wrapLabelOf(a.content, fa["assistant.testing"].(string)); l == nil || l.Alignment != fyne.TextAlignTrailing {
		t.Errorf("the warning of Testing is not shown in Persian, right-aligned: %+v", l)
	}
	a.paste.SetText(`{"web":{"client_id":"x"}}`)
	// The verdict in reading order (its label breaks it into lines for
	// its width): the Persian sentence; auth's English waits behind
	// Details.
	sentence := fa["assistant.bad.web"].(string)
	if said := a.verdict.AccessibilityLabel(); said != sentence || a.verdict.Alignment != fyne.TextAlignTrailing {
		t.Errorf("a web client is refused with %q, aligned %v", said, a.verdict.Alignment)
	}
	test.Tap(a.details)
	if !a.detail.Visible() || !strings.Contains(a.detail.logical, `"Web application" client`) {
		t.Errorf("Details shows %q", a.detail.logical)
	}
}

// With every account signed out (no client kept to offer it at once),
// Sign in on an account whose uploads wait opens the set-up assistant
// saying whom it is for, and the client given there signs in offering
// that account first.
func TestSignInWithEveryAccountSignedOutOffersTheWaitingOne(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"a": {ID: "a", Label: "one", State: transfer.StateSignIn, Account: "home@example.com", SignInFor: "home@example.com"},
	}}
	f := &fakeAccounts{}
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads = fu
		o.deps = func(d *Deps) { d.Accounts = f }
	})
	s := h.u.account.accounts
	if s.ins["home@example.com"] == nil {
		t.Fatalf("home@example.com, signed out with an upload waiting, is not listed: %v", s.kept)
	}
	test.Tap(s.ins["home@example.com"])
	as := h.u.account.assistant
	if as == nil || as.hint != "home@example.com" {
		t.Fatalf("Sign in opened no assistant for home@example.com: %+v", as)
	}
	if l := labelWith(as.content, "Uploads wait for home@example.com"); l == nil {
		t.Error("the assistant does not say whom the sign-in is for")
	}
	as.paste.SetText(`{"installed":{"client_id":"id.apps.googleusercontent.com","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token","client_secret":"s"}}`)
	test.Tap(as.signIn)
	h.until("signed in", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.hints) == 1
	})
	if f.hints[0] != "home@example.com" || f.added[0] == nil {
		t.Fatalf("signed in offering %q with client %q", f.hints[0], f.added[0])
	}
}

// With every account signed out but their client kept (issue 32), Sign in
// on an account whose uploads wait asks for no client file: it signs in
// at once, offering that account, and says that it asks for Drive too
// because a message waiting to go has a file there.
func TestSignInAgainWithTheClientKeptSaysWhyItAsksForDrive(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"a": {ID: "a", Label: "share", State: transfer.StateSignIn, Account: "home@example.com", SignInFor: "home@example.com"},
	}}
	f := &fakeAccounts{client: true, also: map[string][]auth.Kind{"home@example.com": {auth.Links}}, gate: make(chan struct{})}
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads = fu
		o.deps = func(d *Deps) { d.Accounts = f }
	})
	s := h.u.account.accounts
	if s.ins["home@example.com"] == nil {
		t.Fatalf("home@example.com, signed out with an upload waiting, is not listed: %v", s.kept)
	}
	test.Tap(s.ins["home@example.com"])
	if as := h.u.account.assistant; as != nil {
		t.Fatal("Sign in opened the set-up assistant although the client is kept")
	}
	if said := s.status.Text; !strings.Contains(said, "also asks for Google Drive because a message waiting to go has a file there") {
		t.Errorf("the window says %q while the browser signs in: want why Drive is asked for", said)
	}
	close(f.gate)
	h.until("signed in", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.hints) == 1
	})
	if f.hints[0] != "home@example.com" || f.added[0] != nil {
		t.Fatalf("signed in offering %q with client %q, want the waiting account with the kept client", f.hints[0], f.added[0])
	}
}

// An account signed out with a message waiting (its upload to Drive
// done, its share and the message not) and a Photos batch (two files and
// its call) is listed with 1 message and 1 upload waiting, not 6 uploads.
func TestSignedOutAccountCountsDeliveries(t *testing.T) {
	const api = "http://127.0.0.1:9"
	home := "home@example.com"
	job := func(id, url string, st transfer.State, needs ...string) transfer.Snapshot {
		return transfer.Snapshot{ID: id, Label: id, URL: api + url, Account: home, State: st, Needs: needs}
	}
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"film":  job("film", "/upload/drive/v3/files?uploadType=resumable", transfer.StateDone),
		"share": job("share", "/drive/v3/files/F/permissions", transfer.StateSignIn, "film"),
		"msg":   job("msg", "/upload/gmail/v1/users/me/messages/send?uploadType=resumable", transfer.StateWaiting, "film", "share"),
		"p1":    job("p1", "/v1/uploads", transfer.StateSignIn),
		"p2":    job("p2", "/v1/uploads", transfer.StateQueued),
		"batch": job("batch", "/v1/mediaItems:batchCreate", transfer.StateWaiting, "p1", "p2"),
	}}
	f := &fakeAccounts{list: []string{"work@example.com"}}
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads = fu
		o.deps = func(d *Deps) { d.Accounts = f }
	})
	s := h.u.account.accounts
	if l := labelWith(s.list, home); l == nil || l.Text != home+" · signed out · 1 message and 1 upload waiting" {
		t.Fatalf("the row reads %+v", l)
	}
}
