// Command carrier sends mail and media to Google with resumable uploads.
// With a command it runs one of package cli's headless commands; with none
// it opens the desktop app. This is the only file that imports Fyne's app
// package (and with it the OpenGL driver and cgo).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"

	"carrier/auth"
	"carrier/cli"
	"carrier/transfer"
	"carrier/ui"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var code int
	if len(os.Args) > 1 {
		code = cli.Main(ctx, cli.StdEnv(), os.Args[1:])
	} else {
		code = runDesktop(ctx)
	}
	stop()
	os.Exit(code)
}

// runDesktop opens the window on the embedded sandbox, resumes the
// journal's unfinished uploads, and keeps them going until Quit.
func runDesktop(ctx context.Context) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a := app.NewWithID("app.carrier.desktop")
	w := a.NewWindow("Carrier")
	w.Resize(fyne.NewSize(1100, 720))

	emb, err := cli.StartEmbedded(ctx, cli.SandboxDir(), logger)
	if err != nil {
		return fatalWindow(a, w, fmt.Errorf("the embedded sandbox could not start: %w", err))
	}
	defer emb.Close()
	// Each request carries the credential of its server: the sandbox's
	// token, or the Google sign-in.
	creds := cli.NewHostAuth(ctx)
	google := &signedIn{}
	google.load()
	events := make(chan transfer.Event, 1024)
	q, err := transfer.New(transfer.Config{StateDir: cli.StateDir(), Auth: creds, Events: events})
	if err != nil {
		return fatalWindow(a, w, fmt.Errorf("the upload journal in %s could not be opened: %w", cli.StateDir(), err))
	}
	defer q.Close()

	u := ui.New(a, w, ui.Deps{
		Uploads:  q,
		Events:   events,
		Endpoint: emb.URL,
		Auth:     transfer.StaticToken(emb.Token),
		Target: func() string {
			if google.account() != nil {
				return auth.GoogleEndpoint
			}
			return emb.URL
		},
		SpoolDir: filepath.Join(cli.StateDir(), "spool"),
		Account: func() ui.Account {
			if acct := google.account(); acct != nil {
				return ui.Account{Address: acct.Address}
			}
			return ui.Account{Sandbox: true}
		},
		SignIn: func(ctx context.Context, clientSecret []byte) (ui.Account, error) {
			acct, err := google.signIn(ctx, clientSecret)
			cli.ResetAuth(creds)
			if err != nil {
				return ui.Account{}, err
			}
			return ui.Account{Address: acct.Address}, nil
		},
		SignOut: func() error {
			err := google.signOut(ctx)
			cli.ResetAuth(creds)
			return err
		},
		SetFaults: func(spec string) error { return setFaults(emb, spec) },
	})
	defer u.Close()
	if _, err := q.ResumeJournal(false); err != nil {
		logger.Warn("some uploads could not be resumed", "err", err)
	}

	tray := trayAvailable()
	if desk, ok := a.(desktop.App); ok && tray {
		desk.SetSystemTrayMenu(fyne.NewMenu("Carrier",
			fyne.NewMenuItem("Show", func() { w.Show(); w.RequestFocus() }),
			fyne.NewMenuItem("Pause all", func() { pauseAll(q) }),
			fyne.NewMenuItem("Quit", a.Quit),
		))
	}
	w.SetCloseIntercept(func() { u.CloseRequested(tray, a.Quit, w.Hide) })
	go func() {
		<-ctx.Done()
		fyne.Do(a.Quit)
	}()
	w.ShowAndRun()
	return 0
}

// signedIn is the Google account uploads go to, if any.
type signedIn struct {
	mu   sync.Mutex
	acct *auth.Account
}

func (g *signedIn) account() *auth.Account {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.acct
}

// load finds an account signed in before (by this app or `carrier login`).
func (g *signedIn) load() {
	acct, err := auth.Load(auth.GoogleEndpoint)
	if err != nil {
		acct = nil // not signed in, or no keychain: the sandbox it is
	}
	g.mu.Lock()
	g.acct = acct
	g.mu.Unlock()
}

func (g *signedIn) signIn(ctx context.Context, clientSecret []byte) (*auth.Account, error) {
	cfg, err := auth.GoogleConfig(clientSecret)
	if err != nil {
		return nil, err
	}
	scopes, err := auth.ScopesFor(auth.Send, auth.Drafts, auth.Timeline)
	if err != nil {
		return nil, err
	}
	acct, err := auth.Login(ctx, cfg, auth.LoginOptions{Scopes: scopes})
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.acct = acct
	g.mu.Unlock()
	return acct, nil
}

func (g *signedIn) signOut(ctx context.Context) error {
	acct := g.account()
	if acct == nil {
		return nil
	}
	_, err := auth.Logout(ctx, auth.GoogleEndpoint, acct.Address)
	if errors.Is(err, auth.ErrNotRevoked) {
		err = nil // signed out here; Google will let the grant lapse
	}
	if err == nil {
		g.mu.Lock()
		g.acct = nil
		g.mu.Unlock()
	}
	return err
}

func pauseAll(q *transfer.Queue) {
	for _, r := range q.Jobs() {
		if r.State == transfer.StateQueued {
			q.Pause(r.ID)
		}
	}
}

// setFaults switches the sandbox's fault injection, in this process or
// through the control endpoint of the one that serves the folder.
func setFaults(emb *cli.Embedded, spec string) error {
	if sb := emb.Sandbox(); sb != nil {
		return sb.SetFaults(spec)
	}
	req, err := http.NewRequest(http.MethodPut, emb.URL+"/sandbox/v1/faults", strings.NewReader(spec))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+emb.Token)
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return errors.New(strings.TrimSpace(string(b)))
	}
	return nil
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
