// Command carrier sends mail and media to Google with resumable uploads.
// It dispatches the headless commands of package cli; with no command it
// opens the desktop app.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"carrier/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, cli.StdEnv(), os.Args[1:])
	stop()
	os.Exit(code)
}
