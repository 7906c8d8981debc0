package ui

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"maps"
	"net/url"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/layout"
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
	// Unfinished counts what waits for address: messages (each with the
	// Drive uploads and shares its links need) and other uploads.
	Unfinished(address string) app.Waiting
	// For authorizes requests made as address outside the queue.
	For(address string) transfer.Authorizer
	// HasClient reports whether the client the accounts signed in with
	// is kept, so signing in again needs no client file even when every
	// account signed out.
	HasClient() bool
	// AlsoAsked are the kinds of work signing address in asks for
	// besides sending and drafts, because its waiting uploads need them.
	AlsoAsked(address string) []auth.Kind
}

// accountsSection is the Account screen's list of accounts, each with its
// Sign out…, and Add another account….
type accountsSection struct {
	u      *UI
	a      *accountScreen
	list   *fyne.Container
	add    *focusButton
	status *wrapLabel
	Object fyne.CanvasObject
	outs   map[string]*focusButton // each account's Sign out…
	asked  *signOutQuestion        // the last question asked, for tests
	// ins are the Sign in buttons of accounts signed out whose uploads
	// are kept waiting for them; kept is what the list shows of those.
	ins      map[string]*focusButton
	kept     map[string]app.Waiting
	signedIn []string // as the list last read them
}

// signOutQuestion is the question asked before an account with unfinished
// uploads is signed out.
type signOutQuestion struct {
	text               *wrapLabel
	keep, cancel, back *dialogButton
}

func newAccountsSection(u *UI, a *accountScreen) *accountsSection {
	s := &accountsSection{u: u, a: a, list: container.NewVBox()}
	s.status = newWrapLabel("")
	s.add = newFocusButton(lang.X("accounts.add", "Add another Google account…"), theme.ContentAddIcon(), func() { s.addAccount(nil, "") })
	heading := newLabel(lang.X("accounts.heading", "Google accounts"))
	heading.TextStyle = fyne.TextStyle{Bold: true}
	s.Object = container.NewVBox(heading, s.list, s.add, whenSaid(s.status))
	u.whenAccountsChange(a.show) // a sign-in or sign-out in a terminal shows here too
	s.refresh()
	return s
}

func (s *accountsSection) refresh() {
	s.list.RemoveAll()
	s.outs = map[string]*focusButton{}
	s.ins = map[string]*focusButton{}
	accounts := s.u.deps.Accounts.List()
	s.signedIn = accounts
	s.kept = keptAccounts(s.u.deps.Uploads, accounts)
	if len(accounts) == 0 {
		s.list.Add(wrapped(lang.X("accounts.none", "No Google account is signed in: messages stay in the sandbox on this computer.")))
		s.add.SetText(display(lang.X("accounts.setup", "Set up Google sign-in…")))
	} else {
		s.add.SetText(display(lang.X("accounts.add", "Add another Google account…")))
	}
	for i, addr := range accounts {
		text := app.Printable(addr)
		if i == 0 {
			text = lang.X("accounts.default", "{{.Address}} (default sender)", w{"Address": app.Printable(addr)})
		}
		out := newFocusButton(lang.X("accounts.signout", "Sign out…"), theme.LogoutIcon(), func() { s.askSignOut(addr) })
		out.Importance = widget.LowImportance
		s.outs[addr] = out
		// A sign-in Google ended (a week in "Testing", a password
		// changed) is mended by signing the same account in again.
		again := newFocusButton(lang.X("accounts.signinagain", "Sign in again"), theme.LoginIcon(), func() { s.addAccount(nil, addr) })
		again.Importance = widget.LowImportance
		label := newLabel(text)
		if windowRTL.Load() {
			// A bare address has no right-to-left letter to align it by;
			// in a right-to-left window it lines up with the rows above.
			label.Alignment = fyne.TextAlignTrailing
		}
		s.list.Add(container.NewBorder(nil, nil, nil, container.NewHBox(again, out), label))
	}
	// An account signed out with its uploads kept stays listed, or
	// nothing on this screen would say that they wait, nor for whom.
	for _, addr := range sortedKeys(s.kept) {
		waiting := s.kept[addr]
		in := newFocusButton(lang.X("accounts.signin", "Sign in"), theme.LoginIcon(), func() { s.addAccount(nil, addr) })
		in.Importance = widget.HighImportance
		s.ins[addr] = in
		label := newLabel(lang.X("accounts.signedout.waiting", "{{.Address}} · signed out · {{.Waiting}}", w{"Address": app.Printable(addr), "Waiting": waitingText(waiting)}))
		label.Importance = widget.WarningImportance
		s.list.Add(container.NewBorder(nil, nil, nil, in, label))
	}
	s.list.Refresh()
}

// whenSaid holds a status line that takes no room while it says nothing:
// an empty label keeps a line's height, which left a blank band under the
// buttons of the Account screen until something went wrong.
func whenSaid(l *wrapLabel) *fyne.Container {
	return container.New(saidLayout{l}, l)
}

type saidLayout struct{ l *wrapLabel }

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

// keptChanged redraws the list when the accounts signed out whose uploads
// wait for them are no longer what it shows (a job parked, finished or
// cancelled); otherwise it leaves the list alone. The accounts signed in
// are those the list last read: every sign-in and sign-out redraws it,
// and the keychain is not asked again at each job's event.
func (s *accountsSection) keptChanged() {
	if s == nil {
		return
	}
	kept := keptAccounts(s.u.deps.Uploads, s.signedIn)
	if maps.Equal(kept, s.kept) {
		return
	}
	s.refresh()
}

// keptAccounts counts, for each account not among signedIn, what of its
// is not done: what signing it out kept waiting for it, in messages and
// uploads as the sign-out question counts them (app.CountWaiting).
func keptAccounts(uploads Uploads, signedIn []string) map[string]app.Waiting {
	kept := map[string]app.Waiting{}
	if uploads == nil {
		return kept
	}
	whose := func(j transfer.Snapshot) string {
		if j.Account != "" {
			return j.Account
		}
		return j.SignInFor
	}
	jobs := uploads.Jobs()
	for _, j := range jobs {
		who := whose(j)
		if j.State == transfer.StateDone || j.State == transfer.StateCancelled || who == "" || slices.Contains(signedIn, who) {
			continue
		}
		if _, ok := kept[who]; !ok {
			kept[who] = app.CountWaiting(jobs, func(s transfer.Snapshot) bool { return whose(s) == who })
		}
	}
	return kept
}

// waitingText says what waits: "1 message waiting", "3 uploads waiting",
// "2 messages and 1 upload waiting". A message counts with its Drive
// uploads and shares, a Photos batch with all its files.
func waitingText(n app.Waiting) string {
	switch {
	case n.Uploads == 0:
		return lang.XN("waiting.messages", "{{.Count}} messages waiting", n.Messages, w{"Count": n.Messages})
	case n.Messages == 0:
		return lang.XN("waiting.uploads", "{{.Count}} uploads waiting", n.Uploads, w{"Count": n.Uploads})
	}
	return lang.X("waiting.both", "{{.Messages}} and {{.Uploads}} waiting", w{
		"Messages": lang.XN("waiting.both.messages", "{{.Count}} messages", n.Messages, w{"Count": n.Messages}),
		"Uploads":  lang.XN("waiting.both.uploads", "{{.Count}} uploads", n.Uploads, w{"Count": n.Uploads}),
	})
}

func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.Sort(keys)
	return keys
}

// addAccount signs in another account with the client already used, or,
// when there is none yet (or it is given), through the set-up assistant.
func (s *accountsSection) addAccount(clientSecret []byte, hint string) {
	accounts := s.u.deps.Accounts
	if clientSecret == nil && len(accounts.List()) == 0 && !accounts.HasClient() {
		s.a.openAssistantFor(hint)
		return
	}
	s.add.Disable()
	words := lang.X("account.browser", "Finish signing in in your browser…")
	if hint != "" {
		if why := alsoAskedWords(accounts.AlsoAsked(hint)); why != "" {
			words += " " + why
		}
	}
	setLabel(s.status, words)
	s.u.goBackground(func(ctx context.Context) {
		addr, err := accounts.Add(ctx, clientSecret, hint)
		s.u.do(func() {
			s.add.Enable()
			if err != nil {
				setLabel(s.status, signInFailedWords(err))
				return
			}
			setLabel(s.status, lang.X("accounts.signedin", "Signed in as {{.Address}}.", w{"Address": app.Printable(addr)}))
			s.a.show()
		})
	})
}

// alsoAskedWords says why a sign-in asks for more than sending and
// drafts: the uploads waiting for the account need it. "" when it asks
// for nothing more.
func alsoAskedWords(kinds []auth.Kind) string {
	switch {
	case len(kinds) == 0:
		return ""
	case len(kinds) == 1 && kinds[0] == auth.Links:
		return lang.X("accounts.also.drive", "Carrier also asks for Google Drive because a message waiting to go has a file there.")
	case len(kinds) == 1 && kinds[0] == auth.Photos:
		return lang.X("accounts.also.photos", "Carrier also asks for Google Photos because pictures waiting to go are for it.")
	}
	return lang.X("accounts.also.more", "Carrier also asks for what the uploads waiting for this account need, so that they can go on.")
}

// askSignOut asks what becomes of the account's unfinished uploads before
// it is signed out; an account with none is signed out at once.
func (s *accountsSection) askSignOut(addr string) {
	waiting := s.u.deps.Accounts.Unfinished(addr)
	n := waiting.Total()
	if n == 0 {
		s.signOut(addr, app.KeepJobs)
		return
	}
	text := wrapped(lang.XN("accounts.signout.ask", "{{.Address}} has {{.Waiting}}. Should they wait until you sign in as {{.Address}} again, or be cancelled? Other accounts' messages and uploads go on either way.", n, w{"Address": app.Printable(addr), "Waiting": waitingText(waiting), "Count": n}))
	var d *carrierDialog
	keep := newDialogButton(display(lang.X("accounts.signout.keep", "Keep them waiting")), nil, func() { d.Hide(); s.signOut(addr, app.KeepJobs) })
	keep.Importance = widget.HighImportance
	cancel := newDialogButton(display(lang.X("accounts.signout.cancel", "Cancel them")), nil, func() { d.Hide(); s.signOut(addr, app.CancelJobs) })
	back := newDialogButton(display(lang.X("accounts.signout.stay", "Stay signed in")), nil, func() { d.Hide() })
	s.asked = &signOutQuestion{text: text, keep: keep, cancel: cancel, back: back}
	d = s.u.newDialog(display(lang.X("accounts.signout.title", "Sign out {{.Address}}?", w{"Address": app.Printable(addr)})), container.NewVBox(text, container.NewHBox(keep, cancel, back)), back)
	d.Resize(fyne.NewSize(520, 200))
	d.Show()
}

func (s *accountsSection) signOut(addr string, jobs app.UnfinishedJobs) {
	accounts := s.u.deps.Accounts
	s.u.goBackground(func(ctx context.Context) {
		err := accounts.SignOut(ctx, addr, jobs)
		s.u.do(func() {
			if err != nil {
				setLabel(s.status, lang.X("accounts.signout.failed", "Could not sign out {{.Address}}: {{.Error}}", w{"Address": app.Printable(addr), "Error": windowText(err.Error())}))
				return
			}
			if jobs == app.KeepJobs {
				setLabel(s.status, lang.X("accounts.signedout.kept", "Signed out {{.Address}}. Its unfinished uploads wait until it signs in again.", w{"Address": app.Printable(addr)}))
			} else {
				setLabel(s.status, lang.X("accounts.signedout.cancelled", "Signed out {{.Address}}. Its unfinished uploads were cancelled.", w{"Address": app.Printable(addr)}))
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
	hint    string                    // the account to offer first, "" for any
	paste   *namedEntry
	chooser *dialogButton // Choose the file…
	verdict *wrapLabel
	// details shows or hides detail: the check's own words behind the
	// verdict's sentence, said once and only when asked for.
	details *dialogButton
	detail  *wrapLabel
	said    string // the verdict and its detail in logical order, for Copy
	signIn  *dialogButton
	checked []byte
	content *fyne.Container
	d       *carrierDialog
}

// say shows sentence as the verdict, with detail ("" for none) behind
// Details, and keeps both for Copy.
func (s *setupAssistant) say(sentence, detail string) {
	s.said = sentence
	if strings.TrimSpace(detail) != "" {
		s.said += "\n" + detail
	}
	setLabel(s.verdict, sentence)
	setLabel(s.detail, detail)
	s.detail.Hide()
	s.details.SetText(display(lang.X("assistant.details", "Details")))
	if strings.TrimSpace(detail) == "" {
		s.details.Hide()
	} else {
		s.details.Show()
	}
}

// toggleDetail shows the check's own words under the verdict, or hides
// them again.
func (s *setupAssistant) toggleDetail() {
	if s.detail.Visible() {
		s.detail.Hide()
		s.details.SetText(display(lang.X("assistant.details", "Details")))
	} else {
		s.detail.Show()
		s.details.SetText(display(lang.X("assistant.details.hide", "Hide details")))
	}
	s.content.Refresh()
}

// assistantIntro is the way to a Desktop OAuth client, step by step.
func assistantIntro() string {
	return lang.X("assistant.intro", "Carrier signs in to Google with an OAuth client of your own, so your mail never passes through anyone else's server. "+
		"You make the client once, in a Google Cloud project:\n"+
		"1. Open the Cloud Console's Credentials page (link below) and create or choose a project.\n"+
		"2. Enable the Gmail API (and the Google Drive API and Photos Library API if you will send large files or photos).\n"+
		"3. Configure the OAuth consent screen: User type External, your address as a test user.\n"+
		"4. Create credentials > OAuth client ID > Application type \"Desktop app\". Not \"Web application\": its sign-ins cannot come back to this computer.\n"+
		"5. Download the JSON, then drop it here, paste its text below, or choose it.")
}

// testingWarning is the 7-day trap of a project left in "Testing", and
// the way out of it.
func testingWarning() string {
	return lang.X("assistant.testing", "A project left in \"Testing\" signs you out every 7 days: Google ends its sign-ins after a week, and your uploads then wait until you sign in again. "+
		"To avoid it, publish the app: OAuth consent screen > Publishing status > Publish app (\"In production\"). "+
		"You need not submit it for verification for your own use; Google then shows you an \"unverified app\" warning when you sign in, which you pass with Advanced > Go to (your app).")
}

func (a *accountScreen) openAssistant() { a.openAssistantFor("") }

// openAssistantFor opens the set-up assistant to sign in as hint (""
// for whoever the person chooses): the account whose uploads wait, when
// every account is signed out and no client is kept to offer it at once.
func (a *accountScreen) openAssistantFor(hint string) {
	s := &setupAssistant{u: a.u, hint: hint, onFile: func(data []byte) {
		if a.u.deps.Accounts != nil && a.accounts != nil && (hint != "" || len(a.u.deps.Accounts.List()) > 0) {
			a.accounts.addAccount(data, hint)
			return
		}
		a.signInWith(data)
	}}
	a.assistant = s
	s.show()
}

// The assistant fills its window but for a margin around it, up to a
// width that keeps its lines easy to read.
const (
	assistantWidth  = 760
	assistantMargin = 24
)

// show opens the assistant. What to read (the steps, the permissions,
// the weekly sign-out) scrolls and takes whatever height the window
// has; what to do (step 2: the paste box, Choose the file…, the verdict
// and the buttons) stays under it, always in sight, so no button is cut
// off and the paste box is never under the pointer of a person scrolling
// the text (a multi-line entry keeps the wheel for itself).
func (s *setupAssistant) show() {
	intro := wrapped(assistantIntro())
	link, _ := url.Parse(auth.ConsoleCredentialsURL)
	consoleText, rtl := visualText(lang.X("assistant.console", "Google Cloud Console: APIs & Services > Credentials"))
	console := newDialogLink(consoleText, link)
	if rtl || windowRTL.Load() {
		console.Alignment = fyne.TextAlignTrailing // at the right, as the lines around it
	}

	scopes := wrapped(scopeText())
	warning := wrapped(testingWarning())
	warning.Importance = widget.WarningImportance

	s.paste = newNamedEntry(lang.X("assistant.json", "The client JSON"), true)
	s.paste.SetPlaceHolder(display(lang.X("assistant.paste", `Paste the client JSON here: {"installed":{"client_id":…}}`)))
	s.paste.SetMinRowsVisible(2)
	s.paste.OnChanged = func(text string) {
		if strings.TrimSpace(text) == "" {
			s.judge(nil, nil)
			return
		}
		s.judge([]byte(text), nil)
	}
	s.chooser = newDialogButton(display(lang.X("assistant.choose", "Choose the file…")), theme.FolderOpenIcon(), s.choose)
	s.verdict = wrapped(lang.X("assistant.nofile", "No client file yet."))
	s.detail = wrapped("")
	s.detail.SizeName = theme.SizeNameCaptionText
	s.detail.Hide()
	s.details = newDialogButton(display(lang.X("assistant.details", "Details")), nil, s.toggleDetail)
	s.details.Importance = widget.LowImportance
	s.details.Hide()
	// Copy puts the verdict on the clipboard, for a search or a question
	// for help (the desktop test reads it so). A selectable label would do
	// the same with the mouse, but it takes the focus on Tab and then
	// swallows Escape: a keyboard trap in a dialog.
	s.said = lang.X("assistant.nofile", "No client file yet.")
	copyWords := newDialogButton(display(lang.X("assistant.copy", "Copy these words")), theme.ContentCopyIcon(), func() {
		if s.u.win != nil {
			s.u.win.Clipboard().SetContent(s.said)
		}
	})
	s.signIn = newDialogButton(display(lang.X("assistant.signin", "Sign in with Google")), theme.LoginIcon(), func() {
		data := s.checked
		s.close()
		s.onFile(data)
	})
	s.signIn.Importance = widget.HighImportance
	s.signIn.Disable()
	closeBtn := newDialogButton(display(lang.X("assistant.close", "Close")), nil, s.close)

	heading := func(t string) *widget.Label {
		l := newLabel(t)
		l.TextStyle = fyne.TextStyle{Bold: true}
		return l
	}
	body := container.NewVBox(
		heading(lang.X("assistant.step1", "1. Make a Desktop OAuth client")), intro, console,
		heading(lang.X("assistant.scopes", "What Carrier asks Google for")), scopes,
		heading(lang.X("assistant.week", "Avoid being signed out every week")), warning,
	)
	if s.hint != "" {
		// Whom the sign-in is for, before the steps.
		forWho := wrapped(lang.X("assistant.for", "Uploads wait for {{.Address}}: once you give the client and press Sign in with Google, Google offers that account first.", w{"Address": app.Printable(s.hint)}))
		forWho.TextStyle = fyne.TextStyle{Bold: true}
		body.Objects = append([]fyne.CanvasObject{forWho}, body.Objects...)
	}
	scroll := container.NewVScroll(body)
	scroll.SetMinSize(fyne.NewSize(360, 100))
	// The verdict sits under the box it judges, in a room of two lines
	// so that the box does not move under the person's pointer as one
	// verdict follows another; a longer one (or its details) takes room
	// from the scrolled text, not from the buttons.
	room := canvas.NewRectangle(color.Transparent)
	room.SetMinSize(fyne.NewSize(0, newLabel("\n").MinSize().Height))
	give := container.NewVBox(
		heading(lang.X("assistant.step2", "2. Give Carrier its JSON")),
		container.NewBorder(nil, nil, nil, container.NewVBox(s.chooser), s.paste),
		container.NewStack(room, s.verdict),
		s.detail,
		container.NewHBox(s.signIn, closeBtn, s.details, layout.NewSpacer(), copyWords),
	)
	s.content = container.NewBorder(nil, give, nil, nil, scroll)
	s.d = s.u.newDialog(display(lang.X("assistant.title", "Set up Google sign-in")), s.content, closeBtn)
	if s.u.win != nil {
		// A file dropped on the window while the assistant is open is
		// the client file; the window's own (attach to Compose or the
		// Timeline) comes back however the assistant closes.
		s.u.win.SetOnDropped(s.dropped)
		s.d.SetOnClosed(func() { s.u.win.SetOnDropped(s.u.dropped) })
	}
	s.d.Resize(s.size()) // before Show, which centres the dialog at its size
	s.d.Show()
}

// size is the assistant's size in its window: all of it but a margin,
// no wider than assistantWidth.
func (s *setupAssistant) size() fyne.Size {
	room := fyne.NewSize(assistantWidth, 600)
	if s.u.win != nil {
		room = s.u.win.Canvas().Size()
	}
	return fyne.NewSize(min(assistantWidth, room.Width-2*assistantMargin), room.Height-2*assistantMargin)
}

func (s *setupAssistant) close() { s.d.Hide() }

func (s *setupAssistant) dropped(_ fyne.Position, uris []fyne.URI) {
	if len(uris) == 0 {
		return
	}
	r, err := storage.Reader(uris[0])
	if err != nil {
		s.u.do(func() { s.judge(nil, fmt.Errorf("%s: %w", uris[0].Name(), err)) })
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
		s.say(lang.X("assistant.readfailed", "Could not read the file: {{.Error}}", w{"Error": windowText(readErr.Error())}), "")
		return
	case data == nil:
		s.verdict.Importance = widget.MediumImportance
		s.say(lang.X("assistant.nofile", "No client file yet."), "")
		return
	}
	clientID, err := s.u.deps.CheckClient(data)
	if err != nil {
		s.say(clientFileWords(err.Error()))
		return
	}
	s.checked = data
	s.verdict.Importance = widget.SuccessImportance
	if s.u.deps.StandIn {
		s.say(lang.X("assistant.ok.standin", "A Desktop app client ({{.ID}}) that signs in through the sandbox on this computer, not Google: press Sign in with Google.", w{"ID": app.Printable(clientID)}), "")
	} else {
		s.say(lang.X("assistant.ok", "A Desktop app client ({{.ID}}) with Google's own sign-in addresses: press Sign in with Google.", w{"ID": app.Printable(clientID)}), "")
	}
	s.signIn.Enable()
}

func scopeText() string {
	var b strings.Builder
	for _, w := range auth.ScopeWords {
		name := w.Scope
		if i := strings.LastIndex(name, "/"); i >= 0 && i < len(name)-1 {
			name = name[i+1:]
		}
		fmt.Fprintf(&b, "• %s: %s\n", name, scopeAllows(w.Scope, w.Allows))
	}
	b.WriteString(lang.X("assistant.scopes.when", "Carrier asks for sending, drafts and the timeline when you sign in, and for Drive or Photos only the first time you need them."))
	return b.String()
}

// accountNote is the words a row adds to say which account a job goes as.
func accountNote(snap transfer.Snapshot) string {
	if snap.Account == "" {
		return ""
	}
	return lang.X("row.as", " · as {{.Address}}", w{"Address": app.Printable(snap.Account)})
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
	f := &fromSelector{u: u, label: newLabel(lang.X("compose.from", "From")), Object: container.NewStack()}
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
	f.c = newChoices(lang.X("compose.from.question", "The message goes as"), names, func(i int) {
		// The sender chosen is the default from now on, so what Compose
		// checks before sending (Drive allowed?) is that account's.
		accounts, use := f.accounts, f.u.deps.Accounts.Use
		f.u.goBackground(func(context.Context) { use(accounts[i]) })
		f.u.compose.keepLocal() // the copy of Compose names its sender (keep.go)
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
