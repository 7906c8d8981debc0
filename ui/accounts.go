package ui

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/auth"
	"carrier/internal/app"
	"carrier/transfer"
)

// Accounts are the Google accounts signed in side by side (app.Google):
// the Account screen lists them, Compose chooses the sender among them.
type Accounts interface {
	// List names the accounts signed in, the default (last used) first.
	List() []string
	// Use makes address the default sender, remembered for next time.
	Use(address string) error
	// Add signs in another account in the browser. clientSecret is the
	// JSON of a "Desktop app" client; nil reuses the default account's.
	Add(ctx context.Context, clientSecret []byte, hint string) (string, error)
	// SignOut signs address out, its unfinished jobs kept parked or
	// cancelled as jobs says; no other account's are touched.
	SignOut(ctx context.Context, address string, jobs app.UnfinishedJobs) error
	// Unfinished counts address's jobs that are not done.
	Unfinished(address string) int
	// For authorizes requests made as address outside the queue.
	For(address string) transfer.Authorizer
}

// accountsSection is the Account screen's list of accounts, each with its
// Sign out…, and Add another account….
type accountsSection struct {
	u      *UI
	a      *accountScreen
	list   *fyne.Container
	add    *widget.Button
	status *widget.Label
	Object fyne.CanvasObject
	outs   map[string]*widget.Button // each account's Sign out…
	asked  *signOutQuestion          // the last question asked, for tests
}

// signOutQuestion is the question asked before an account with unfinished
// uploads is signed out.
type signOutQuestion struct {
	keep, cancel, back *dialogButton
}

func newAccountsSection(u *UI, a *accountScreen) *accountsSection {
	s := &accountsSection{u: u, a: a, list: container.NewVBox()}
	s.status = widget.NewLabel("")
	s.status.Wrapping = fyne.TextWrapWord
	s.add = widget.NewButtonWithIcon("Add another Google account…", theme.ContentAddIcon(), func() { s.addAccount(nil, "") })
	s.Object = container.NewVBox(widget.NewLabelWithStyle("Google accounts", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), s.list, s.add, whenSaid(s.status))
	u.whenAccountsChange(a.show) // a sign-in or sign-out in a terminal shows here too
	s.refresh()
	return s
}

func (s *accountsSection) refresh() {
	s.list.RemoveAll()
	s.outs = map[string]*widget.Button{}
	accounts := s.u.deps.Accounts.List()
	if len(accounts) == 0 {
		s.list.Add(widget.NewLabel("No Google account is signed in: messages stay in the sandbox on this computer."))
		s.add.SetText("Set up Google sign-in…")
	} else {
		s.add.SetText("Add another Google account…")
	}
	for i, addr := range accounts {
		label := widget.NewLabel(app.Printable(addr))
		if i == 0 {
			label.SetText(app.Printable(addr) + " (default sender)")
		}
		out := widget.NewButtonWithIcon("Sign out…", theme.LogoutIcon(), func() { s.askSignOut(addr) })
		out.Importance = widget.LowImportance
		s.outs[addr] = out
		// A sign-in Google ended (a week in "Testing", a password
		// changed) is mended by signing the same account in again.
		again := widget.NewButtonWithIcon("Sign in again", theme.LoginIcon(), func() { s.addAccount(nil, addr) })
		again.Importance = widget.LowImportance
		s.list.Add(container.NewBorder(nil, nil, nil, container.NewHBox(again, out), label))
	}
	s.list.Refresh()
}

// whenSaid holds a status line that takes no room while it says nothing:
// an empty label keeps a line's height, which left a blank band under the
// buttons of the Account screen until something went wrong.
func whenSaid(l *widget.Label) *fyne.Container {
	return container.New(saidLayout{l}, l)
}

type saidLayout struct{ l *widget.Label }

func (s saidLayout) MinSize([]fyne.CanvasObject) fyne.Size {
	if s.l.Text == "" {
		return fyne.Size{}
	}
	return s.l.MinSize()
}

func (s saidLayout) Layout(_ []fyne.CanvasObject, size fyne.Size) {
	s.l.Move(fyne.Position{})
	s.l.Resize(size)
}

// addAccount signs in another account with the client already used, or,
// when there is none yet (or it is given), through the set-up assistant.
func (s *accountsSection) addAccount(clientSecret []byte, hint string) {
	if clientSecret == nil && len(s.u.deps.Accounts.List()) == 0 {
		s.a.openAssistant()
		return
	}
	s.add.Disable()
	s.status.SetText("Finish signing in in your browser…")
	accounts := s.u.deps.Accounts
	s.u.goBackground(func(ctx context.Context) {
		addr, err := accounts.Add(ctx, clientSecret, hint)
		s.u.do(func() {
			s.add.Enable()
			if err != nil {
				s.status.SetText("Not signed in: " + windowText(err.Error()))
				return
			}
			s.status.SetText("Signed in as " + app.Printable(addr) + ".")
			s.a.show()
		})
	})
}

// askSignOut asks what becomes of the account's unfinished uploads before
// it is signed out; an account with none is signed out at once.
func (s *accountsSection) askSignOut(addr string) {
	n := s.u.deps.Accounts.Unfinished(addr)
	if n == 0 {
		s.signOut(addr, app.KeepJobs)
		return
	}
	text := widget.NewLabel(fmt.Sprintf("%s has %d unfinished upload(s). Keep them waiting until you sign in as %s again, or cancel them? Other accounts' uploads go on either way.", app.Printable(addr), n, app.Printable(addr)))
	text.Wrapping = fyne.TextWrapWord
	var d *carrierDialog
	keep := newDialogButton("Keep them waiting", nil, func() { d.Hide(); s.signOut(addr, app.KeepJobs) })
	keep.Importance = widget.HighImportance
	cancel := newDialogButton("Cancel them", nil, func() { d.Hide(); s.signOut(addr, app.CancelJobs) })
	back := newDialogButton("Stay signed in", nil, func() { d.Hide() })
	s.asked = &signOutQuestion{keep: keep, cancel: cancel, back: back}
	d = s.u.newDialog("Sign out "+app.Printable(addr)+"?", container.NewVBox(text, container.NewHBox(keep, cancel, back)), back)
	d.Resize(fyne.NewSize(520, 200))
	d.Show()
}

func (s *accountsSection) signOut(addr string, jobs app.UnfinishedJobs) {
	accounts := s.u.deps.Accounts
	s.u.goBackground(func(ctx context.Context) {
		err := accounts.SignOut(ctx, addr, jobs)
		s.u.do(func() {
			if err != nil {
				s.status.SetText("Could not sign out " + app.Printable(addr) + ": " + windowText(err.Error()))
				return
			}
			if jobs == app.KeepJobs {
				s.status.SetText("Signed out " + app.Printable(addr) + ". Its unfinished uploads wait until it signs in again.")
			} else {
				s.status.SetText("Signed out " + app.Printable(addr) + ". Its unfinished uploads were cancelled.")
			}
			s.a.show()
		})
	})
}

// The set-up assistant takes a person from nothing to a Google sign-in:
// what a Desktop OAuth client is and where to make one, the client file
// by drop, paste or picker (checked as `carrier login --client-secret`
// checks it), the permissions asked for, and the 7-day trap of a project
// left in "Testing".
type setupAssistant struct {
	u       *UI
	onFile  func(clientSecret []byte) // signs in with a checked file
	paste   *namedEntry
	verdict *widget.Label
	signIn  *dialogButton
	checked []byte
	content *fyne.Container
	d       *carrierDialog
}

const assistantIntro = "Carrier signs in to Google with an OAuth client of your own, so your mail never passes through anyone else's server. " +
	"You make the client once, in a Google Cloud project:\n" +
	"1. Open the Cloud Console's Credentials page (link below) and create or choose a project.\n" +
	"2. Enable the Gmail API (and the Google Drive API and Photos Library API if you will send large files or photos).\n" +
	"3. Configure the OAuth consent screen: User type External, your address as a test user.\n" +
	"4. Create credentials > OAuth client ID > Application type \"Desktop app\". Not \"Web application\": its sign-ins cannot come back to this computer.\n" +
	"5. Download the JSON, then drop it here, paste its text below, or choose it."

const testingWarning = "A project left in \"Testing\" signs you out every 7 days: Google ends its sign-ins after a week, and your uploads then wait until you sign in again. " +
	"To avoid it, publish the app: OAuth consent screen > Publishing status > Publish app (\"In production\"). " +
	"You need not submit it for verification for your own use; Google then shows you an \"unverified app\" warning when you sign in, which you pass with Advanced > Go to (your app)."

func (a *accountScreen) openAssistant() {
	s := &setupAssistant{u: a.u, onFile: func(data []byte) {
		if a.u.deps.Accounts != nil && len(a.u.deps.Accounts.List()) > 0 && a.accounts != nil {
			a.accounts.addAccount(data, "")
			return
		}
		a.signInWith(data)
	}}
	a.assistant = s
	s.show()
}

func (s *setupAssistant) show() {
	intro := widget.NewLabel(assistantIntro)
	intro.Wrapping = fyne.TextWrapWord
	link, _ := url.Parse(auth.ConsoleCredentialsURL)
	console := newDialogLink("Google Cloud Console: APIs & Services > Credentials", link)

	scopes := widget.NewLabel(scopeText())
	scopes.Wrapping = fyne.TextWrapWord
	warning := widget.NewLabel(testingWarning)
	warning.Wrapping = fyne.TextWrapWord
	warning.Importance = widget.WarningImportance

	s.paste = newNamedEntry(lang.X("assistant.json", "The client JSON"), true)
	s.paste.SetPlaceHolder(`Paste the client JSON here: {"installed":{"client_id":…}}`)
	s.paste.SetMinRowsVisible(3)
	s.paste.OnChanged = func(text string) {
		if strings.TrimSpace(text) == "" {
			s.judge(nil, nil)
			return
		}
		s.judge([]byte(text), nil)
	}
	choose := newDialogButton("Choose the file…", theme.FolderOpenIcon(), s.choose)
	s.verdict = widget.NewLabel("No client file yet.")
	s.verdict.Wrapping = fyne.TextWrapWord
	// Selectable, so a refusal can be copied into a search or a question
	// for help (and the desktop test reads it so).
	s.verdict.Selectable = true
	s.signIn = newDialogButton("Sign in with Google", theme.LoginIcon(), func() {
		data := s.checked
		s.close()
		s.onFile(data)
	})
	s.signIn.Importance = widget.HighImportance
	s.signIn.Disable()
	closeBtn := newDialogButton("Close", nil, s.close)

	heading := func(t string) *widget.Label {
		return widget.NewLabelWithStyle(t, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	body := container.NewVBox(
		heading("1. Make a Desktop OAuth client"), intro, console,
		heading("2. Give Carrier its JSON"), s.paste, choose,
		heading("What Carrier asks Google for"), scopes,
		heading("Avoid being signed out every week"), warning,
	)
	scroll := container.NewVScroll(body)
	scroll.SetMinSize(fyne.NewSize(640, 400))
	// The verdict stays in sight beside Sign in, wherever the text is
	// scrolled.
	s.content = container.NewBorder(nil, container.NewVBox(s.verdict, container.NewHBox(s.signIn, closeBtn)), nil, nil, scroll)
	s.d = s.u.newDialog("Set up Google sign-in", s.content, closeBtn)
	if s.u.win != nil {
		// A file dropped on the window while the assistant is open is
		// the client file; the window's own (attach to Compose or the
		// Timeline) comes back however the assistant closes.
		s.u.win.SetOnDropped(s.dropped)
		s.d.SetOnClosed(func() { s.u.win.SetOnDropped(s.u.dropped) })
	}
	s.d.Show()
	s.d.Resize(fyne.NewSize(720, 600))
}

func (s *setupAssistant) close() { s.d.Hide() }

func (s *setupAssistant) dropped(_ fyne.Position, uris []fyne.URI) {
	if len(uris) == 0 {
		return
	}
	r, err := storage.Reader(uris[0])
	if err != nil {
		s.u.do(func() { s.judge(nil, fmt.Errorf("cannot read %s: %w", uris[0].Name(), err)) })
		return
	}
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	r.Close()
	s.u.do(func() { s.judge(data, err) })
}

func (s *setupAssistant) choose() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return
		}
		data, err := io.ReadAll(io.LimitReader(r, 1<<20))
		r.Close()
		s.judge(data, err)
	}, s.u.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".json"}))
	s.u.showFileDialog(d)
}

// judge checks a client file as `carrier login --client-secret` does and
// says what is wrong with it in words, or that it will do.
func (s *setupAssistant) judge(data []byte, readErr error) {
	// A longer verdict takes room from the scrolled text, not from the
	// buttons under it.
	defer s.content.Refresh()
	s.checked = nil
	s.signIn.Disable()
	s.verdict.Importance = widget.DangerImportance
	switch {
	case readErr != nil:
		s.verdict.SetText("Could not read the file: " + windowText(readErr.Error()))
		return
	case data == nil:
		s.verdict.Importance = widget.MediumImportance
		s.verdict.SetText("No client file yet.")
		return
	}
	clientID, err := s.u.deps.CheckClient(data)
	if err != nil {
		s.verdict.SetText("Not this file: " + windowText(err.Error()))
		return
	}
	s.checked = data
	s.verdict.Importance = widget.SuccessImportance
	s.verdict.SetText("A Desktop app client (" + app.Printable(clientID) + ") with Google's own sign-in addresses: press Sign in with Google.")
	s.signIn.Enable()
}

func scopeText() string {
	var b strings.Builder
	for _, w := range auth.ScopeWords {
		name := w.Scope
		if i := strings.LastIndex(name, "/"); i >= 0 && i < len(name)-1 {
			name = name[i+1:]
		}
		fmt.Fprintf(&b, "• %s: %s\n", name, w.Allows)
	}
	b.WriteString("Carrier asks for sending, drafts and the timeline when you sign in, and for Drive or Photos only the first time you need them.")
	return b.String()
}

// accountNote is the words a row adds to say which account a job goes as.
func accountNote(snap transfer.Snapshot) string {
	if snap.Account == "" {
		return ""
	}
	return " · as " + app.Printable(snap.Account)
}

// fromSelector is Compose's sender: the accounts signed in, as choices a
// screen reader names ("The message goes as: work@… (chosen)"), the
// default (last used) chosen; hidden with none signed in.
type fromSelector struct {
	u        *UI
	label    *widget.Label
	accounts []string
	c        *choices
	Object   *fyne.Container
}

func newFromSelector(u *UI) *fromSelector {
	f := &fromSelector{u: u, label: widget.NewLabel("From"), Object: container.NewStack()}
	f.refresh()
	return f
}

func (f *fromSelector) refresh() {
	var accounts []string
	if f.u.deps.Accounts != nil {
		accounts = f.u.deps.Accounts.List()
	}
	chosen := f.sender()
	f.accounts = accounts
	f.Object.RemoveAll()
	f.c = nil
	if len(accounts) == 0 {
		f.label.Hide()
		f.Object.Hide()
		return
	}
	f.label.Show()
	names := make([]string, len(accounts))
	for i, a := range accounts {
		names[i] = app.Printable(a)
	}
	f.c = newChoices("The message goes as", names, func(i int) {
		// The sender chosen is the default from now on, so what Compose
		// checks before sending (Drive allowed?) is that account's.
		accounts, use := f.accounts, f.u.deps.Accounts.Use
		f.u.goBackground(func(context.Context) { use(accounts[i]) })
	})
	if i := indexOf(accounts, chosen); i >= 0 {
		f.c.set(i) // the person's choice stands while the list changes
	}
	f.Object.Add(f.c.Object)
	f.Object.Show()
	f.Object.Refresh()
}

// sender is the account the message goes as, "" when none is signed in
// (the server's default credential then serves).
func (f *fromSelector) sender() string {
	if f == nil || f.c == nil || f.c.chosen >= len(f.accounts) {
		return ""
	}
	return f.accounts[f.c.chosen]
}

func indexOf(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -1
}

// bind returns what sets the sender on each of the message's jobs, and
// the authorizer of its Drive calls; it remembers the sender as the last
// used.
func (f *fromSelector) bind(auth transfer.Authorizer) (func(*transfer.Spec), transfer.Authorizer) {
	from := f.sender()
	if from == "" {
		return nil, auth
	}
	// Remembered for next time; a sender signed out meanwhile still gets
	// the message, which then waits for its sign-in.
	f.u.deps.Accounts.Use(from)
	return func(s *transfer.Spec) { s.Account = from }, f.u.deps.Accounts.For(from)
}

// asDefaultSender binds work queued outside Compose (pictures to Google
// Photos) to the default sender, the account used last, as bind does for
// the sender chosen; with no account signed in, nothing changes.
func (u *UI) asDefaultSender(auth transfer.Authorizer) (func(*transfer.Spec), transfer.Authorizer) {
	if u.deps.Accounts == nil {
		return nil, auth
	}
	accounts := u.deps.Accounts.List()
	if len(accounts) == 0 {
		return nil, auth
	}
	from := accounts[0]
	return func(s *transfer.Spec) { s.Account = from }, u.deps.Accounts.For(from)
}
