// Package app is what Carrier's two front ends share: the folders, the
// embedded sandbox's start, the credentials of each server, the Gmail and
// Mirror recipes (what a message or a post becomes as an upload, and what
// an upload's URL means to people), and the spool's lifecycle around the
// transfer queue. Package cli and package ui use it; main.go builds it.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"carrier/transfer"
)

// App is the desktop app's core: the embedded sandbox serving, the
// credentials, and the Google sign-in if there is one.
type App struct {
	Dirs    Dirs
	Sandbox *Embedded
	Creds   *Credentials
	Google  *Google
}

// Open starts the embedded sandbox in dirs and looks up the sign-in.
func Open(ctx context.Context, dirs Dirs, logger *slog.Logger) (*App, error) {
	if err := PrivateDir(dirs.Data); err != nil {
		return nil, err
	}
	was := recordedAddress(dirs.Sandbox())
	emb, err := StartEmbedded(ctx, dirs.Sandbox(), logger)
	if err != nil {
		return nil, fmt.Errorf("the embedded sandbox could not start: %w", err)
	}
	creds := NewCredentials(ctx, dirs.Sandbox())
	creds.Serving(emb)
	if was != "" && was != Origin(emb.URL) {
		// Another program holds the sandbox's old address: jobs that name
		// it send nothing there, not even a session URI's bytes.
		creds.Refuse(was, fmt.Errorf("%w: %s, where the embedded sandbox was, is held by another program, so the sandbox now serves at %s; nothing of this job is sent there. Send it again", ErrNotTheSandbox, was, emb.URL))
	}
	google := LoadGoogle(creds)
	if os.Getenv(SandboxSignInEnv) == "1" {
		if google, err = SandboxGoogle(creds, emb); err != nil {
			emb.Close()
			return nil, err
		}
	}
	return &App{Dirs: dirs, Sandbox: emb, Creds: creds, Google: google}, nil
}

// Close stops the embedded sandbox if this process serves it.
func (a *App) Close() error { return a.Sandbox.Close() }

// Target is the API root uploads go to now: Google's (or the sandbox's
// standing in for it) once signed in, the sandbox's otherwise.
func (a *App) Target() string {
	if a.Google.Address() != "" {
		return a.Google.Endpoint()
	}
	return a.Sandbox.URL
}

// OpenQueue opens the journal in the state folder, with each server's
// credentials, and the spool beside it (see OpenQueue).
func (a *App) OpenQueue(events chan<- transfer.Event) (*Queue, error) {
	q, err := OpenQueue(transfer.Config{StateDir: a.Dirs.State, Auth: a.Creds, Events: events}, NewSpool(a.Dirs.Spool()))
	if err != nil {
		return nil, fmt.Errorf("the upload journal in %s could not be opened: %w", a.Dirs.State, err)
	}
	// Jobs parked because a sign-in ended go on the moment it is back.
	a.Google.OnSignIn(func(address string) { q.SignedIn(address) })
	return q, nil
}
