// Command accounts is issue 20's first Show, measured (make demo-accounts):
// the real `carrier` binary uploads a 2 GiB file to the sandbox's Google
// Drive, signed in through the sandbox's OAuth flow with access tokens
// that live 30 s (so every request refreshes, as a week-long upload meets
// an expired token); the account's refresh token is revoked half way; the
// job must park (state sign-in, exit 4 naming the account, no retry spent,
// its session kept), and `carrier login` then `carrier resume` must finish
// it on the same session with at most 1.01x the file's bytes on the wire.
// It runs with the sandbox's session-needs-token switch off and on, and
// once more with two accounts where the `carrier resume` holding the
// parked job (while it sends the other account's file) is killed with
// SIGKILL before the sign-in.
//
// It needs an OS keychain (carrier login keeps tokens nowhere else):
// soak/accounts/run.sh starts a private one. Everything talks to
// 127.0.0.1; every wait is bounded.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

type config struct {
	bin       string
	rows      string
	size      int64
	otherSize int64
	revokeAt  float64
	tokenTTL  time.Duration
	timeout   time.Duration
	keep      bool
	jsonOut   string
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "bin/carrier", "the carrier binary (go build -o bin/carrier .)")
	flag.StringVar(&c.rows, "rows", "off,on,expiry,kill", "rows to run, comma-separated: off and on (revoked; the session-needs-token switch), expiry (the refresh token's lifetime ends, \"Testing\" mode), kill (two accounts, kill -9 of the resume holding the parked job)")
	flag.Int64Var(&c.size, "size", 2<<30, "size of the file whose sign-in dies, bytes")
	flag.Int64Var(&c.otherSize, "other-size", 768<<20, "size of the other account's file in the kill row, bytes")
	flag.Float64Var(&c.revokeAt, "revoke-at", 0.4, "revoke the refresh token once the journal shows this share of the file confirmed")
	flag.DurationVar(&c.tokenTTL, "token-ttl", 30*time.Second, "the sandbox's access-token lifetime (under a minute, every request refreshes)")
	flag.DurationVar(&c.timeout, "timeout", 12*time.Minute, "bound on the whole run")
	flag.BoolVar(&c.keep, "keep", false, "keep the scratch folder")
	flag.StringVar(&c.jsonOut, "json", "", "also write the results as JSON to this file")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	os.Exit(run(ctx, &c))
}

func run(ctx context.Context, c *config) int {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		fmt.Fprintln(os.Stderr, "accounts: no D-Bus session: run it through soak/accounts/run.sh (make demo-accounts), which starts a private keychain")
		return 2
	}
	bin, err := filepath.Abs(c.bin)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "accounts: the carrier binary: %v (build it with `go build -o bin/carrier .`)\n", err)
		return 2
	}
	c.bin = bin
	scratch, err := os.MkdirTemp("", "carrier-accounts-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "accounts:", err)
		return 1
	}
	if c.keep {
		logf("scratch folder %s", scratch)
	} else {
		defer os.RemoveAll(scratch)
	}
	rep := &report{Started: time.Now(), Machine: machine(), Command: strings.TrimSpace("make demo-accounts DEMOFLAGS='" + strings.Join(os.Args[1:], " ") + "'")}
	for _, name := range strings.Split(c.rows, ",") {
		name = strings.TrimSpace(name)
		var r *row
		dir := filepath.Join(scratch, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			rep.Failures = append(rep.Failures, err.Error())
			continue
		}
		start := time.Now()
		switch name {
		case "off", "on", "expiry":
			r, err = runOne(ctx, c, dir, name)
		case "kill":
			r, err = runKill(ctx, c, dir)
		default:
			err = fmt.Errorf("unknown row %q (off, on, expiry, kill)", name)
		}
		if r != nil {
			r.Seconds = time.Since(start).Seconds()
			rep.Rows = append(rep.Rows, r)
		}
		if err != nil {
			logf("row %s: FAIL: %v", name, err)
			rep.Failures = append(rep.Failures, name+": "+err.Error())
		} else {
			logf("row %s: ok in %s", name, time.Since(start).Round(time.Second))
		}
		if !c.keep {
			os.RemoveAll(dir) // gigabytes of sandbox store
		}
	}
	rep.Elapsed = time.Since(rep.Started).Round(time.Second).String()
	rep.print(os.Stdout)
	if c.jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(c.jsonOut, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "accounts:", err)
		}
	}
	if len(rep.Failures) > 0 {
		return 1
	}
	return 0
}

// logf goes to stderr so that stdout holds only the results.
func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s accounts: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, a...))
}

func machine() string {
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%s/%s, %d CPUs (%s), %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), model, runtime.Version())
}
