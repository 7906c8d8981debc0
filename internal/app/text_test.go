package app

import (
	"fmt"
	"strings"
	"testing"
)

// The window never tells a desktop user to run a command: the failures
// whose text carries a command line say what to do in the window instead,
// and the CLI's text is left as it was.
func TestWindowWordsHaveNoCommandLines(t *testing.T) {
	na := &NotAllowedError{Address: "zoe@example.com", Endpoint: "https://www.googleapis.com", Kind: "links"}
	for _, err := range []error{ErrNoCredentials, na, fmt.Errorf("cannot get credentials for the upload: %w", ErrNoCredentials)} {
		cli, window := err.Error(), WindowWords(err.Error())
		if !strings.Contains(cli, "`carrier login") {
			t.Errorf("the CLI's words lost their command: %q", cli)
		}
		if strings.Contains(window, "carrier ") || strings.Contains(window, "CARRIER_TOKEN") || !strings.Contains(window, "Account screen") {
			t.Errorf("the window's words: %q", window)
		}
	}
}
