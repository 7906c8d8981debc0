package app

import "testing"

// Only a message that is sent shares its files.
func TestOnlyASentMessageShares(t *testing.T) {
	for _, c := range []struct {
		path  string
		sends bool
	}{{routeSend.path, true}, {routeDraftSend.path, true}, {routeDraft.path, false}, {routeDraftUpdate.with("r1"), false}, {routeInsert.path, false}, {routeImport.path, false}} {
		if got := (Upload{Path: c.path}).Sends(); got != c.sends {
			t.Errorf("%s: Sends %v", c.path, got)
		}
	}
}
