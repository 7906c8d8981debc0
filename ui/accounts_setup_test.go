package ui

import (
	"errors"
	"strings"
	"testing"
)

// The assistant checks a client file with the app's own check (a sandbox
// standing in for Google takes its own client, not Google's), and its
// words are the check's.
func TestAssistantAsksTheAppsCheck(t *testing.T) {
	h := newHarness(t, func(o *harnessOpts) {
		o.deps = func(d *Deps) {
			d.CheckClient = func(secret []byte) (string, error) {
				if strings.Contains(string(secret), "carrier-sandbox") {
					return "carrier-sandbox", nil
				}
				return "", errors.New("the client secret file names \"https://accounts.google.com/o/oauth2/auth\" as an OAuth server")
			}
		}
	})
	a := h.u.account
	a.openAssistant()
	s := a.assistant
	s.paste.SetText(`{"installed":{"client_id":"id.apps.googleusercontent.com","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token"}}`)
	if !s.signIn.Disabled() || !strings.Contains(s.said, "names \"https://accounts.google.com/o/oauth2/auth\"") {
		t.Errorf("a file the app refuses: Sign in enabled %v, verdict %q", !s.signIn.Disabled(), s.said)
	}
	s.paste.SetText(`{"installed":{"client_id":"carrier-sandbox"}}`)
	if s.signIn.Disabled() || !strings.Contains(s.verdict.Text, "(carrier-sandbox)") {
		t.Errorf("a file the app takes: Sign in enabled %v, verdict %q", !s.signIn.Disabled(), s.verdict.Text)
	}
}

// The Account screen's status lines take no room while they say nothing:
// an empty label kept a line's height, a blank band under the buttons.
func TestAccountStatusTakesNoRoomWhenEmpty(t *testing.T) {
	h := newHarness(t)
	a := h.u.account
	holder := whenSaid(a.status)
	a.status.SetText("")
	if got := holder.MinSize().Height; got != 0 {
		t.Errorf("an empty status is %v high", got)
	}
	a.status.SetText("Chaos mode is off.")
	if got := holder.MinSize().Height; got < a.status.MinSize().Height {
		t.Errorf("a status that says something is %v high, its text %v", got, a.status.MinSize().Height)
	}
}
