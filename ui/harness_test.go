package ui

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"carrier/internal/app"
	"carrier/internal/app/message"
	"carrier/internal/delivery"
	"carrier/sandbox"
	"carrier/transfer"
)

const tok = "ui-test-token"

// harness runs the UI on the test's goroutine: closures the UI sends to
// its "UI thread" are queued and run by pump, so widgets are only ever
// touched here, and -race stays quiet.
type harness struct {
	t      testing.TB
	u      *UI
	w      fyne.Window
	calls  chan func()
	url    string
	sb     *sandbox.Sandbox
	q      *app.Queue
	state  string // the queue's state folder: its journal and spool
	faults []string
	mu     sync.Mutex
}

type harnessOpts struct {
	uploads Uploads
	events  chan transfer.Event
	deps    func(*Deps)
	state   string                          // the queue's state folder; "" for a new one
	wrap    func(http.Handler) http.Handler // stands in front of the sandbox
}

func newHarness(t testing.TB, opts ...func(*harnessOpts)) *harness {
	t.Helper()
	test.NewTempApp(t)
	h := &harness{t: t, calls: make(chan func(), 4096)}
	var o harnessOpts
	for _, f := range opts {
		f(&o)
	}
	var endpoint string
	var outbox Outbox
	if o.uploads == nil {
		sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: tok})
		if err != nil {
			t.Fatal(err)
		}
		var handler http.Handler = sb.Handler()
		if o.wrap != nil {
			handler = o.wrap(handler)
		}
		srv := httptest.NewServer(handler)
		t.Cleanup(srv.Close)
		t.Cleanup(func() { sb.Close() })
		h.sb, h.url, endpoint = sb, srv.URL, srv.URL
		o.events = make(chan transfer.Event, 1024)
		h.state = o.state
		if h.state == "" {
			h.state = t.TempDir()
		}
		q, err := app.OpenQueue(transfer.Config{StateDir: h.state, Auth: transfer.StaticToken(tok), Events: o.events, RetryBase: 10 * time.Millisecond}, app.NewSpool(app.SpoolDir(h.state)))
		if err != nil {
			t.Fatal(err)
		}
		h.q, o.uploads, outbox = q, q, q
	} else {
		endpoint = "http://127.0.0.1:9"
	}
	h.w = test.NewTempWindow(t, nil)
	h.w.Resize(fyne.NewSize(1100, 720))
	d := Deps{
		Uploads: o.uploads, Outbox: outbox, Events: o.events, Endpoint: endpoint, Auth: transfer.StaticToken(tok),
		Account: func() Account { return Account{Sandbox: true} },
		SetFaults: func(spec string) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.faults = append(h.faults, spec)
			return nil
		},
		Do: func(f func()) { h.calls <- f },
	}
	if h.q != nil {
		d.Limits, d.Keeper = h.q, h.q
		d.Unsent = message.NewUnsentStore(h.state) // as main.go does: beside the journal
	}
	if o.deps != nil {
		o.deps(&d)
	}
	// Messages go at once unless a test asks for Undo send's window.
	fyne.CurrentApp().Preferences().SetInt(prefUndoWindow, 0)
	h.u = New(fyne.CurrentApp(), h.w, d)
	t.Cleanup(h.close)
	return h
}

// close stops the UI while still running what it queues, then the queue.
func (h *harness) close() {
	done := make(chan struct{})
	go func() { h.u.Close(); close(done) }()
	for {
		select {
		case f := <-h.calls:
			f()
			continue
		case <-done:
		}
		break
	}
	if h.q != nil {
		h.q.Close()
	}
}

// until runs queued UI work until cond holds, or fails after a deadline.
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case f := <-h.calls:
			f()
		case <-time.After(5 * time.Millisecond):
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

var pngDot, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

// fakeUploads is a queue whose jobs the test controls through events.
type fakeUploads struct {
	mu     sync.Mutex
	recs   map[string]transfer.Snapshot
	calls  []string
	stored []delivery.Delivery // the deliveries the app stored, read against the jobs
}

func (f *fakeUploads) Add(s transfer.Spec) (string, error) { return "", nil }
func (f *fakeUploads) record(op, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, op+" "+id)
	return nil
}
func (f *fakeUploads) Pause(id string) error                     { return f.record("pause", id) }
func (f *fakeUploads) Resume(_ context.Context, id string) error { return f.record("resume", id) }
func (f *fakeUploads) Retry(_ context.Context, id string) error  { return f.record("retry", id) }
func (f *fakeUploads) Cancel(_ context.Context, id string) error { return f.record("cancel", id) }
func (f *fakeUploads) Jobs() []transfer.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []transfer.Snapshot
	for _, r := range f.recs {
		out = append(out, r)
	}
	return out
}
func (f *fakeUploads) History() ([]transfer.Snapshot, error) { return f.Jobs(), nil }

// Deliveries groups the fake's jobs as the app groups a journal's:
// by their owners, and jobs without one by what they need.
func (f *fakeUploads) Deliveries() ([]delivery.Delivery, error) {
	return delivery.Of(f.Jobs(), f.stored), nil
}
func (f *fakeUploads) Forget(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.recs, id)
	return nil
}
func (f *fakeUploads) Job(id string) (transfer.Snapshot, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.recs[id]
	return r, ok
}

// event is what the queue would emit: kind, and the job's snapshot after
// it (the fake's record changed by change, with the next Seq).
func (f *fakeUploads) event(kind transfer.EventKind, id string, change func(*transfer.Snapshot)) transfer.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.recs[id]
	s.Seq++
	if change != nil {
		change(&s)
	}
	f.recs[id] = s
	return transfer.Event{Kind: kind, Job: id, Snap: s}
}

// sendMessage sends a short message through the Compose screen and waits
// until its row says it is done.
func (h *harness) sendMessage(t *testing.T) {
	t.Helper()
	c := h.u.compose
	c.to.SetText("zoe@example.com")
	c.subject.SetText("Quarterly report")
	c.body.SetText("Here it is.")
	test.Tap(c.sendBtn)
	h.until("a finished transfer row", func() bool {
		for _, r := range h.u.transfers.rows {
			if strings.HasPrefix(r.name.Text, "Quarterly report") && (r.state.Text == "Done" || r.state.Text == "Sent") {
				return true
			}
		}
		return false
	})
}
