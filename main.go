// Command carrier sends mail and media to Google with resumable uploads.
// With a command it runs one of package cli's headless commands; with none
// it builds the app (package internal/app) and hands it to the desktop
// screens (package ui). This is the only file that imports Fyne's app
// package (and with it the OpenGL driver and cgo).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/systray"

	"carrier/auth"
	"carrier/cli"
	"carrier/internal/app"
	"carrier/internal/app/message"
	"carrier/internal/app/recipients"
	"carrier/internal/platform"
	"carrier/sandbox"
	"carrier/transfer"
	"carrier/ui"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	endProfiles := func() {}
	if dir := os.Getenv("CARRIER_PROFILE"); dir != "" {
		endProfiles = startProfiles(dir)
	}
	dirs := app.DefaultDirs()
	var code int
	args := os.Args[1:]
	if len(args) == 1 && args[0] == platform.AutostartFlag {
		code = launch(ctx, dirs, true, nil)
	} else if len(args) == 2 && args[0] == app.MailLinkFileFlag {
		// A program's Send by email whose link is too long for a
		// command line (Windows' MAPI DLL): the link is in a file.
		link, err := app.ReadMailLinkFile(dirs.Data, args[1])
		if err != nil {
			code = launchRefused(ctx, dirs, err)
		} else {
			code = launch(ctx, dirs, false, []string{link})
		}
	} else if len(args) > 0 && !cli.Opens(args) {
		attachConsole()
		env := cli.StdEnv()
		env.Dirs = dirs
		code = cli.Main(ctx, env, args)
	} else {
		code = launch(ctx, dirs, false, cli.OpenItems(args))
	}
	stop()
	endProfiles()
	if restarting.Load() {
		if err := relaunch(); err != nil {
			fmt.Fprintln(os.Stderr, "carrier: could not start again:", err)
		}
	}
	os.Exit(code)
}

// appID is the app's id: Fyne's preferences, the desktop entry's name,
// the window's name on the session bus.
const appID = "app.carrier.desktop"

// launch opens the window with items (files, mailto: links) in Compose,
// unless a window on the same folders is open already: then the items
// go to it (platform.HandOver), it comes to the front, and this process
// is done, exit 0. Started at login (hidden) while a window is open, it
// leaves that window as it is and exits.
func launch(ctx context.Context, dirs app.Dirs, hidden bool, items []string) int {
	return launchWith(ctx, dirs, hidden, items, nil)
}

// launchRefused opens the window, or brings the open one to the front,
// saying why what this launch was given was not taken: in the window when
// it is this one's, else on the standard error (exit 1), since a hand-over
// carries only items.
func launchRefused(ctx context.Context, dirs app.Dirs, refused error) int {
	return launchWith(ctx, dirs, false, nil, refused)
}

func launchWith(ctx context.Context, dirs app.Dirs, hidden bool, items []string, refused error) int {
	inst, err := platform.ClaimInstance(appID, dirs.Data)
	if errors.Is(err, platform.ErrRunning) {
		if hidden {
			return 0
		}
		if err = platform.HandOver(appID, dirs.Data, items); err == nil {
			if refused != nil {
				fmt.Fprintln(os.Stderr, "carrier:", refused)
				return 1
			}
			return 0
		}
		// The window went between the claim and the hand-over: be it.
		inst, err = platform.ClaimInstance(appID, dirs.Data)
	}
	// Any other error (no session bus, a system without the hand-over
	// yet): the window opens alone, as before, and takes no hand-overs.
	if err != nil {
		inst = nil
	}
	defer inst.Close()
	return runDesktop(ctx, dirs, hidden, inst, items, refused)
}

// runDesktop opens the window on the embedded sandbox, resumes the
// journal's unfinished uploads, and keeps them going until Quit. Started
// at login (hidden) it stays in the tray, the window closed, where there
// is a tray to bring it back.
func runDesktop(ctx context.Context, dirs app.Dirs, hidden bool, inst *platform.Instance, items []string, refused error) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := checkGraphics(); err != nil {
		return noGraphics(err)
	}
	a := fyneapp.NewWithID(appID)
	ui.UseLanguagePreference(a)
	if err := ui.LoadTranslations(); err != nil {
		logger.Warn("the translations could not be read", "err", err)
	}
	ui.UseTheme(a)
	w := a.NewWindow("Carrier")
	w.Resize(fyne.NewSize(1100, 720))

	// What the window holds is closed in the reverse of its opening, once:
	// when the toolkit's loop returns, or by quitWatch when it does not.
	var closers []func()
	closeAll := sync.OnceFunc(func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	})
	defer closeAll()
	quit, quitting, loopEnded := quitWatch(a, logger, closeAll)
	core, err := app.Open(ctx, dirs, logger)
	if err != nil {
		return fatalWindow(a, w, err)
	}
	closers = append(closers, func() { core.Close() })
	events := make(chan transfer.Event, 1024)
	q, err := core.OpenQueue(events)
	if err != nil {
		return fatalWindow(a, w, err)
	}
	closers = append(closers, func() { q.Close() })
	// A sign-in made with `carrier login` while the window runs sends the
	// jobs parked for it on, and shows in the Account screen.
	watch, stopWatch := context.WithCancel(ctx)
	closers = append(closers, stopWatch)
	core.Google.Watch(watch, dirs.Data)

	d := deps(ctx, core, q, events)
	// Restart now (Settings, after a new language): Quit, then main
	// starts the window again once everything here is closed.
	d.Restart = func() {
		restarting.Store(true)
		quit()
	}
	// Buttons on notifications (Retry, Open in Mailbox) need the desktop's
	// own service; without one, Fyne's notifications serve.
	if n, err := platform.NewNotifier("Carrier", "app.carrier.desktop"); err == nil {
		closers = append(closers, func() { n.Close() })
		d.Notify = func(title, body string, actions []ui.NoticeAction) error {
			acts := make([]platform.Action, len(actions))
			for i, a := range actions {
				acts[i] = platform.Action{Key: a.Key, Label: a.Label, Do: a.Do}
			}
			return n.Notify(title, body, acts)
		}
	}
	u := ui.New(a, w, d)
	closers = append(closers, u.Close)
	// What this launch was given, and what later launches hand over, go
	// to Compose once the window runs (off this goroutine: fyne.Do
	// queues it for the running loop).
	if inst != nil {
		closers = append(closers, func() { inst.Close() }) // before the UI closes: no hand-over reaches a closed window
		go inst.Serve(u.Open)
	}
	if len(items) > 0 {
		go u.Open(items)
	}
	if refused != nil {
		go u.Refused(refused)
	}
	// A sign-in whose browser cannot be opened shows its address.
	core.Google.OnBrowserFailed(u.BrowserFailed)
	if _, err := q.ResumeJournal(false); err != nil {
		logger.Warn("some uploads could not be resumed", "err", err)
	}

	tray := trayAvailable()
	if hidden && !tray {
		// Started at login: the panel's tray host may come a moment later.
		tray = trayAvailableWithin(15 * time.Second)
	}
	if desk, ok := a.(desktop.App); ok && tray {
		var menu *fyne.Menu
		menu = u.TrayMenu(ui.TrayHooks{
			Show: func() { w.Show(); w.RequestFocus() },
			Quit: quit,
			Refresh: func() {
				if menu != nil {
					menu.Refresh()
				}
			},
			Tooltip: systray.SetTooltip,
		})
		desk.SetSystemTrayMenu(menu)
	}
	w.SetCloseIntercept(func() { u.CloseRequested(tray, quit, w.Hide) })
	go func() {
		// Fyne's driver quits on SIGINT and SIGTERM itself (catchTerm).
		// A fyne.Do(a.Quit) here raced it: queued after its loop had
		// closed the function queue, it panicked (the exit 2 once seen in
		// CI after SIGTERM). The signal only starts the watch.
		<-ctx.Done()
		quitting()
	}()
	if hidden && tray {
		a.Run()
	} else {
		w.ShowAndRun()
	}
	loopEnded()
	return 0
}

// deps hands the app to the screens.
func deps(ctx context.Context, core *app.App, q *app.Queue, events <-chan transfer.Event) ui.Deps {
	account := func(address string) ui.Account {
		if address == "" {
			return ui.Account{Sandbox: true, Address: sandbox.DefaultAccount}
		}
		if core.Google.Endpoint() != auth.GoogleEndpoint {
			// Signed in to the sandbox standing in for Google
			// (app.SandboxSignInEnv): still nothing leaves the computer.
			return ui.Account{Sandbox: true, Address: address}
		}
		return ui.Account{Address: address}
	}
	// Compose's copy, beside the journal; the attachments programs hand
	// over (Windows' Send by email) go once neither it nor a job nor a
	// message kept to reopen names them.
	unsent := message.NewUnsentStore(core.Dirs.State)
	q.UseProgramCopies(app.ProgramCopiesDir(core.Dirs.Data), unsent)
	d := ui.Deps{
		Uploads: q,
		Outbox:  q,
		Keeper:  q,
		// Whom messages went to, offered in Compose's address fields.
		Addresses: recipients.OpenAddressBook(core.Dirs.State),
		Unsent:    unsent,
		Events:    events,
		Endpoint:  core.Sandbox.URL,
		Auth:      core.Creds, // each server its own credential; the mailbox reads only the sandbox
		Target:    core.Target,
		Account:   func() ui.Account { return account(core.Google.Address()) },
		SignIn: func(ctx context.Context, clientSecret []byte) (ui.Account, error) {
			address, err := core.Google.SignIn(ctx, clientSecret)
			if err != nil {
				return ui.Account{}, err
			}
			return account(address), nil
		},
		SignOut:     func() error { return core.Google.SignOut(ctx) },
		CheckClient: core.Google.CheckClient,
		StandIn:     core.Google.Endpoint() != auth.GoogleEndpoint,
		Accounts:    app.WindowAccounts{G: core.Google, Q: q},
		May:         core.Google.May,
		Allow:       core.Google.Allow,
		SetFaults:   core.Sandbox.SetFaults,
		Limits:      q,
		StartAtLogin: func(on bool) error {
			exe, err := os.Executable()
			if err == nil {
				exe, err = filepath.EvalSymlinks(exe)
			}
			if err != nil {
				return fmt.Errorf("Carrier cannot tell where its program is: %w", err)
			}
			return platform.SetAutostart(on, exe)
		},
		StartsAtLogin: platform.Autostart,
	}
	// Make Carrier my mail app, where the system lets Carrier do it.
	if platform.CanMakeMailApp() {
		d.MakeMailApp = func() (platform.MailApp, error) { return platform.MakeMailApp(appID) }
	}
	return d
}

// fatalWindow shows why Carrier cannot work, in the window a person is
// looking at, rather than only on a terminal they may not have.
func fatalWindow(a fyne.App, w fyne.Window, err error) int {
	fmt.Fprintln(os.Stderr, "carrier:", err)
	d := dialog.NewError(err, w)
	d.SetOnClosed(a.Quit)
	w.Resize(fyne.NewSize(640, 360))
	d.Show()
	w.ShowAndRun()
	return 1
}

// quitGrace is how long the toolkit has to finish closing once a quit
// began, before Carrier stops waiting for it.
const quitGrace = 10 * time.Second

// quitWatch returns the window's quit: Fyne's Quit, watched. Fyne 2.8.1
// ends its loop by queuing its stop hook on the lifecycle's queue and
// draining its function queue by what that queue shows at the moment; the
// lifecycle's goroutine may hand the hook to the function queue just
// after, so Run waits for it for ever (seen in CI: a window that did not
// end after SIGTERM, its main goroutine in Lifecycle.WaitForEvents and
// the lifecycle's in runOnMainWithWait for 23 minutes), or sends it into
// the closed queue and panics (the exit 2 once seen after SIGTERM). The
// stop hook's run is the sign it finished; without it within quitGrace,
// Carrier closes what it holds (closeAll: the journal, Compose's copy, the
// sandbox) and ends the process itself, starting again first when a
// restart was asked for. quitting starts the watch where the quit is not
// Carrier's own (a signal, which Fyne answers itself); loopEnded is called
// once Run returned.
func quitWatch(a fyne.App, logger *slog.Logger, closeAll func()) (quit, quitting, loopEnded func()) {
	began, stopped, ended := make(chan struct{}), make(chan struct{}), make(chan struct{})
	// Fyne's drain may answer the hook without running it: Run's return
	// says the same.
	a.Lifecycle().SetOnStopped(func() { close(stopped) })
	var once sync.Once
	go func() {
		<-began
		select {
		case <-stopped:
			return // the loop ends, and runDesktop's closeAll with it
		case <-ended:
			return
		case <-time.After(quitGrace):
		}
		logger.Warn("the window's toolkit did not finish closing; Carrier closes what it holds and ends")
		closeAll()
		if restarting.Load() {
			if err := relaunch(); err != nil {
				fmt.Fprintln(os.Stderr, "carrier: could not start again:", err)
			}
		}
		os.Exit(0)
	}()
	quitting = func() { once.Do(func() { close(began) }) }
	quit = func() {
		quitting()
		a.Quit()
	}
	return quit, quitting, func() { close(ended) }
}
