// Command handover stands in for Carrier's window in
// scripts/windows/test-msi.sh, where no window can open (Wine, headless):
// it claims the window's place for this person's Carrier folders, as the
// window does (platform.ClaimInstance), so that a Carrier.exe started with
// files or a mailto: link hands them over to it and exits, as it would to
// the window. It writes each hand-over, as the window would read it
// (message.Opened: the Compose fields and the refusals), to OUT as a line of
// JSON, and exits 0 after the first, or 1 when none came in time.
//
//	handover OUT [SECONDS]
//
// It is a test tool: it only records what it is handed, reads no file and
// sends nothing. OUT.ready is made once it holds the place.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"carrier/internal/app"
	"carrier/internal/app/message"
	"carrier/internal/platform"
)

// appID is Carrier's (main.go's appID).
const appID = "app.carrier.desktop"

type record struct {
	Items       []string
	To, Cc, Bcc []string
	Subject     string
	Text        string
	Attachments []string
	Refused     []string
}

func main() {
	if len(os.Args) < 2 || len(os.Args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: handover OUT [SECONDS]")
		os.Exit(2)
	}
	out := os.Args[1]
	wait := 60 * time.Second
	if len(os.Args) == 3 {
		s, err := strconv.Atoi(os.Args[2])
		if err != nil || s <= 0 {
			fmt.Fprintln(os.Stderr, "handover: SECONDS must be a whole number above 0")
			os.Exit(2)
		}
		wait = time.Duration(s) * time.Second
	}
	inst, err := platform.ClaimInstance(appID, app.DefaultDirs().Data)
	if err != nil {
		fmt.Fprintln(os.Stderr, "handover: could not hold the window's place:", err)
		os.Exit(1)
	}
	defer inst.Close()
	got := make(chan []string, 1)
	inst.Serve(func(items []string) {
		select {
		case got <- items:
		default:
		}
	})
	if err := os.WriteFile(out+".ready", nil, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "handover:", err)
		os.Exit(1)
	}
	select {
	case items := <-got:
		c, refused := message.Opened(items)
		r := record{Items: items, To: c.To, Cc: c.Cc, Bcc: c.Bcc, Subject: c.Subject, Text: c.Text, Attachments: c.Attachments}
		for _, e := range refused {
			r.Refused = append(r.Refused, e.Error())
		}
		b, err := json.Marshal(r)
		if err == nil {
			err = os.WriteFile(out, append(b, '\n'), 0o600)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "handover:", err)
			os.Exit(1)
		}
	case <-time.After(wait):
		fmt.Fprintf(os.Stderr, "handover: nothing was handed over in %v\n", wait)
		inst.Close()
		os.Exit(1)
	}
}
