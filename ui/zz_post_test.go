package ui

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestZZPost(t *testing.T) {
	if os.Getenv("ROLL") == "" {
		t.Skip()
	}
	h := newHarness(t)
	h.u.Select("Media")
	tl := h.u.timeline
	drop(h, "/tmp/roll2")
	for tl.reading != 0 {
		select {
		case f := <-h.calls:
			f()
		case <-time.After(5 * time.Millisecond):
		}
	}
	start := time.Now()
	tl.post.Tapped(nil)
	for !strings.HasPrefix(tl.batchState.Text, "Done") && time.Since(start) < 5*time.Minute {
		select {
		case f := <-h.calls:
			f()
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Logf("posted in %v: %q", time.Since(start), tl.batchState.Text)
}
