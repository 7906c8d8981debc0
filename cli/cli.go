// Package cli holds Carrier's headless commands. Each command lives in a
// file of its own and registers itself in init; main.go only dispatches.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"carrier/internal/app"
)

// Env is what a command may touch of the outside world, so tests can run
// commands in-process with their own streams and folders.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Dirs   app.Dirs // Carrier's folders; zero: the person's own (app.DefaultDirs)
}

// dirs are the folders commands default to.
func (e *Env) dirs() app.Dirs {
	if e.Dirs == (app.Dirs{}) {
		return app.DefaultDirs()
	}
	return e.Dirs
}

// StdEnv is the process's own streams.
func StdEnv() *Env { return &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr} }

// Command is one subcommand of `carrier`.
type Command struct {
	Name    string
	Summary string // one line for the command list
	Run     func(ctx context.Context, env *Env, args []string) error
}

var commands = map[string]*Command{}

func register(c *Command) {
	if _, dup := commands[c.Name]; dup {
		panic("cli: command registered twice: " + c.Name)
	}
	commands[c.Name] = c
}

// UsageError marks a mistake in how a command was called; it exits with 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// Lookup reports whether name is a command.
func Lookup(name string) bool { _, ok := commands[name]; return ok }

// Usage writes the list of commands.
func Usage(w io.Writer) {
	fmt.Fprintln(w, "Carrier sends mail and media to Google with resumable uploads that are never lost or doubled.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: carrier [command] [flags]")
	fmt.Fprintln(w, "       carrier [FILE | mailto:LINK]...")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "With no command, Carrier opens the desktop app; with files or a mailto: link, it opens them in")
	fmt.Fprintln(w, "Compose (in the window already open, if there is one), and sends nothing until you do. Commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'carrier COMMAND -h' for the flags of a command, 'carrier --version' for the version.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit status: 0 done (for resume: or left to another Carrier that is sending them; --wait waits for")
	fmt.Fprintln(w, "them), 1 the work failed, 2 the command was misused, 4 sign-in needed: uploads")
	fmt.Fprintln(w, "wait for an account whose sign-in ended (revoked, expired); `carrier login`, then `carrier resume`;")
	fmt.Fprintln(w, "5 uploads wait for Google Photos' daily quota: `carrier resume` after its reset, or `carrier resume --wait`.")
}

// Main runs the command named by args[0] and returns the process exit code:
// 0 on success (a resume's jobs another Carrier sends count: nothing
// failed), 1 when the work failed, 2 when the command was misused, 4
// (ExitSignIn) when uploads wait for a person to sign in again, 5
// (ExitQuota) when they wait for Google Photos' daily quota to reset.
func Main(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		Usage(env.Stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "version" {
		fmt.Fprintln(env.Stdout, app.VersionLine())
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "carrier: unknown command %q\n\n", args[0])
		Usage(env.Stderr)
		return 2
	}
	err := cmd.Run(ctx, env, args[1:])
	var ue *UsageError
	var sn *signInNeeded
	var qw *quotaWaiting
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &sn):
		fmt.Fprintf(env.Stderr, "carrier %s: %s\n", cmd.Name, app.PrintableLines(err.Error()))
		return ExitSignIn
	case errors.As(err, &qw):
		fmt.Fprintf(env.Stderr, "carrier %s: %s\n", cmd.Name, app.PrintableLines(err.Error()))
		return ExitQuota
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "carrier %s: %s\n", cmd.Name, app.PrintableLines(err.Error()))
		return 2
	default:
		// An error may quote a server, a file name or a journal: it goes
		// to the terminal without a control character of theirs.
		fmt.Fprintf(env.Stderr, "carrier %s: %s\n", cmd.Name, app.PrintableLines(err.Error()))
		return 1
	}
}

// newFlagSet makes a flag set that reports errors as usage errors and
// prints its help on the command's stderr.
func newFlagSet(env *Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("carrier "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "usage: carrier %s %s\n\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and refuses stray positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &UsageError{Msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (flags go before nothing else; see -h)", strings.Join(fs.Args(), " "))
	}
	return nil
}
