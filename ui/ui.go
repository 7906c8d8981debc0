// Package ui holds Carrier's Fyne screens and the bridge from transfer
// events to widgets. main.go gives it the fyne.App and fyne.Window; it
// never creates them, so it builds and tests without cgo. It reaches
// uploads only through the app's queue (Uploads, Outbox) and its events.
package ui

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"

	"carrier/auth"
	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/app/message"
	"carrier/internal/delivery"
	"carrier/internal/platform"
	"carrier/transfer"
)

// Uploads is what the transfers screen needs of the transfer queue.
type Uploads interface {
	// The moves of one job a person's verb makes, and the jobs: held,
	// and the journal's, finished ones too (History). A row's verbs go
	// through app.Acting with them.
	app.Movers
	Forget(id string) error
	// Deliveries are what the person sent, oldest first: each names its
	// jobs (finished ones too) and their roles; jobs from before
	// deliveries are grouped as delivery.Of groups them.
	Deliveries() ([]delivery.Delivery, error)
}

// Outbox queues what the compose and timeline screens send: the app's
// recipes and spool (package internal/app's Queue). root is the API root
// uploads go to (Deps.Target). A message goes with Submit, as `carrier
// send`'s does: its large files to Google Drive (d, authorized by
// Deps.Auth) as links, the message last; it returns the message's recipe
// and the jobs, the message's last.
type Outbox interface {
	Submit(ctx context.Context, d app.Drive, msg *compose.Message, method compose.Method, gmail app.GmailOptions, opts app.LinkOptions, settings func(*transfer.Spec)) (app.Upload, []string, error)
	PostTimeline(root string, media *compose.TimelineMedia, item compose.TimelineItem) (id string, err error)
}

// Keeper gives back messages as the person wrote them (the app's Queue):
// a cancelled or failed message's fields, kept beside the journal, and a
// draft's raw message opened into fields, its attachments as files.
type Keeper interface {
	Composed(id string) (*message.Composed, error)
	OpenDraft(id string, raw []byte) (*message.Composed, error)
	// Kept reports whether message id's fields are kept to reopen it:
	// not once it was sent, cleared, or replaced by a message reopened
	// from it (app.LinkOptions.Replaces).
	Kept(id string) bool
	// Undo cancels message id, held for its undo window, with its Drive
	// parts, and gives back its fields and the files its links put on
	// Drive (app.ErrTooLateToUndo once it went).
	Undo(ctx context.Context, id string) (app.Undone, error)
}

// Account describes who Carrier sends as.
type Account struct {
	Sandbox bool   // the embedded sandbox: nothing leaves this computer
	Address string // the signed-in address (or the sandbox's mailbox)
}

// Deps is everything the screens use, wired by main.go.
type Deps struct {
	Uploads Uploads
	Outbox  Outbox
	Keeper  Keeper      // nil: messages cannot be reopened, nor drafts edited
	Unsent  UnsentStore // keeps what Compose holds across restarts (keep.go); nil: not kept
	// Addresses remembers whom messages went to, for Compose's address
	// fields to offer (complete.go); nil: nothing is remembered or offered.
	Addresses AddressBook
	Events    <-chan transfer.Event // the queue's events; the UI drains it
	Endpoint  string                // the sandbox's API root: the mailbox reads it
	// Auth authorizes the mailbox's reads and the Drive calls of a
	// message with links (the queue's own authorizer: each server its
	// credential).
	Auth transfer.Authorizer
	// Target is the API root uploads go to now: the sandbox's, or
	// Google's once signed in. Nil means Endpoint.
	Target  func() string
	Client  app.Doer // for the Mailbox's reads and the Drive calls; nil: http.DefaultClient
	Account func() Account

	// SignIn signs in with Google using the person's OAuth client file
	// (the JSON of a "Desktop app" client); nil: signing in is not offered.
	SignIn  func(ctx context.Context, clientSecret []byte) (Account, error)
	SignOut func() error
	// CheckClient checks a client file as SignIn will and names its
	// client (app.Google.CheckClient); nil: auth.GoogleConfig's checks.
	CheckClient func(clientSecret []byte) (clientID string, err error)
	// StandIn says the embedded sandbox stands in for Google in sign-ins
	// (app.SandboxSignInEnv): the assistant then says a client it takes
	// signs in through the sandbox, not Google.
	StandIn bool
	// Accounts are the Google accounts signed in side by side; nil: one
	// at most, through SignIn and SignOut.
	Accounts Accounts
	// Limits takes the person's upload speed and metered-connection
	// settings (kept in the app's preferences); nil: not offered.
	Limits Limits

	// May says whether the account messages go as allows Carrier a kind
	// of work (app.Google.May): nil when it does, an *app.NotAllowedError
	// when the person must allow it first. Nil: everything is allowed.
	May func(ctx context.Context, kind auth.Kind) error
	// Allow asks the person, in the browser, to allow a kind of work too
	// (app.Google.Allow: the sign-in widened, incremental consent).
	Allow func(ctx context.Context, kind auth.Kind) error
	// SetFaults switches the sandbox's fault injection (chaos mode); nil
	// when not on the sandbox.
	SetFaults func(spec string) error
	// StartAtLogin has the system start Carrier at login, hidden in the
	// tray, or not; StartsAtLogin says whether it does. Nil: not offered.
	StartAtLogin  func(on bool) error
	StartsAtLogin func() (bool, error)
	// MakeMailApp makes Carrier the person's mail app
	// (platform.MakeMailApp) and says what it changed. Nil: not offered.
	MakeMailApp func() (platform.MailApp, error)
	// Notify shows a notification with buttons through the desktop's own
	// service (Fyne's have none); it fails where there is none, and Fyne's
	// is sent instead. Nil: Fyne's always.
	Notify func(title, body string, actions []NoticeAction) error

	// Restart closes Carrier as Quit does and starts it again (main.go),
	// so that a new language shows; nil: not offered, the person is told
	// to close and open Carrier.
	Restart func()

	// Do runs a function on the UI thread; nil means fyne.Do. Tests give
	// their own so that widgets are only touched on the test's goroutine.
	Do func(func())
}

// UI is the desktop app's window content.
type UI struct {
	do   func(func()) // run on the UI thread
	app  fyne.App
	win  fyne.Window
	deps Deps
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
	// bg guards closed, so that no background work is added to wg once
	// Close waits on it (an Add racing Wait is a misuse of WaitGroup).
	bg     sync.Mutex
	closed bool

	tabs      *tabs
	compose   *composeScreen
	timeline  *timelineScreen
	transfers *transfersScreen
	mailbox   *mailboxScreen
	account   *accountScreen
	tray      atomic.Pointer[tray] // nil without a system tray
	parked    parkedNotices        // the accounts told their uploads wait for them
	quitAsked *quitQuestion        // the last quit question, for tests
	// browserAsked is the last word that the browser could not be
	// opened, for tests.
	browserAsked *browserFailedDialog
	modals       []*modal // Carrier's dialogs open, the last shown last
	// fyneNotify sends Fyne's notification, where the desktop's service
	// cannot be reached; a test's own sees what it sends.
	fyneNotify func(*fyne.Notification)

	composeTab, timelineTab, transfersTab, mailboxTab, accountTab *tab
}

// New builds the screens into win and starts the bridge from transfer
// events. Call Close when the window goes away.
func New(a fyne.App, w fyne.Window, d Deps) *UI {
	if d.CheckClient == nil {
		d.CheckClient = func(clientSecret []byte) (string, error) {
			cfg, err := auth.GoogleConfig(clientSecret)
			if err != nil {
				return "", err
			}
			return cfg.OAuth.ClientID, nil
		}
	}
	if d.Target == nil {
		endpoint := d.Endpoint
		d.Target = func() string { return endpoint }
	}
	ctx, stop := context.WithCancel(context.Background())
	u := &UI{app: a, win: w, deps: d, ctx: ctx, stop: stop, do: d.Do, fyneNotify: a.SendNotification}
	UseTheme(a)
	if u.do == nil {
		u.do = fyne.Do
	}
	u.compose = newComposeScreen(u)
	u.timeline = newTimelineScreen(u)
	u.transfers = newTransfersScreen(u)
	u.mailbox = newMailboxScreen(u)
	u.account = newAccountScreen(u)
	u.composeTab = newTab(lang.X("tab.compose", "Compose"), theme.MailComposeIcon(), u.compose.content)
	u.timelineTab = newTab(lang.X("tab.media", "Media"), theme.MediaPhotoIcon(), u.timeline.content)
	u.transfersTab = newTab(lang.X("tab.transfers", "Transfers"), theme.UploadIcon(), u.transfers.content)
	u.mailboxTab = newTab(lang.X("tab.mailbox", "Mailbox"), theme.StorageIcon(), u.mailbox.content)
	u.accountTab = newTab(lang.X("tab.account", "Account"), theme.AccountIcon(), u.account.content)
	u.tabs = newTabs(u.composeTab, u.timelineTab, u.transfersTab, u.mailboxTab, u.accountTab)
	u.tabs.OnSelected = func(t *tab) {
		if t == u.mailboxTab {
			u.mailbox.refresh()
		}
		if t == u.composeTab {
			u.compose.focusTo()
		}
	}
	w.SetContent(u.tabs.content)
	w.SetOnDropped(u.dropped)
	w.Canvas().SetOnTypedKey(u.dialogKey)
	u.compose.addShortcuts(w.Canvas())
	w.Canvas().AddShortcut(&fyne.ShortcutPaste{}, u.pasteShortcut)
	u.compose.startKeeping(d.Unsent)
	u.compose.focusTo()
	u.transfers.start()
	return u
}

// Close stops the UI's goroutines. The queue is the caller's.
// What Compose holds is written to this computer before it returns,
// whatever closed the window.
func (u *UI) Close() {
	u.stop()
	u.bg.Lock()
	u.closed = true
	u.bg.Unlock()
	u.wg.Wait()
	if u.compose.local != nil {
		u.compose.local.flush()
	}
	u.mailbox.files.remove()
}

// Busy reports whether any upload is unfinished.
func (u *UI) Busy() bool {
	for _, r := range u.deps.Uploads.Jobs() {
		if r.State.Unfinished() {
			return true
		}
	}
	return false
}

// dropped routes files dropped anywhere on the window: to the Media screen
// when it is showing, to the message otherwise.
func (u *UI) dropped(_ fyne.Position, uris []fyne.URI) {
	var paths []string
	for _, uri := range uris {
		if uri.Scheme() != "file" {
			u.showError(lang.X("drop.notfile.title", "Only files can be dropped here"), lang.X("drop.notfile", "{{.Name}} is not a file on this computer.", w{"Name": uri.String()}))
			continue
		}
		paths = append(paths, localPath(uri))
	}
	if len(paths) == 0 {
		return
	}
	if u.tabs.Selected() == u.timelineTab {
		u.timeline.addFiles(paths...)
		return
	}
	u.compose.attach(paths...)
	u.tabs.Select(u.composeTab)
}

// queued shows a job the compose or timeline screen just queued.
func (u *UI) queued(id string) {
	u.transfers.ensureRow(id)
	u.ShowTransfers()
}

// ShowTransfers brings the transfers screen forward.
func (u *UI) ShowTransfers() { u.tabs.Select(u.transfersTab) }

// Select shows the named tab (Compose, Media, Transfers, Mailbox, Account).
func (u *UI) Select(name string) {
	for _, t := range u.tabs.Items {
		if strings.EqualFold(t.Text, name) {
			u.tabs.Select(t)
		}
	}
}

func (u *UI) showError(title, text string) {
	u.showInformation(title, app.PrintableLines(text))
}

// goBackground runs fn on a goroutine the UI waits for on Close. Once
// Close began, fn does not run: its context is done and nothing would
// wait for it.
func (u *UI) goBackground(fn func(ctx context.Context)) {
	u.bg.Lock()
	defer u.bg.Unlock()
	if u.closed {
		return
	}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		fn(u.ctx)
	}()
}

// CloseRequested decides what closing the window means. With nothing
// uploading it quits, asking nothing: what Compose holds is kept on this
// computer (Close writes the last of it) and comes back at the next start. With uploads running it keeps them going in the
// background when a system tray can bring the window back, and otherwise
// asks first, unless the person said not to ask again.
func (u *UI) CloseRequested(tray bool, quit, hide func()) {
	switch {
	case !u.Busy():
		quit()
	case tray:
		hide()
		u.app.SendNotification(fyne.NewNotification(lang.X("background.title", "Carrier keeps uploading"), lang.X("background.body", "Uploads go on in the background. Quit from the tray icon.")))
	case !u.app.Preferences().BoolWithFallback(prefAskQuit, true):
		quit()
	default:
		u.askQuit(quit)
	}
}
