package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"carrier/internal/dbustest"
	"carrier/transfer"
)

// When the system says the machine woke, an upload waiting out a long
// backoff asks its session at once: the queue hears logind on the system
// bus (here a private bus, with this test as logind).
// systemBus starts a private bus as the system's, with this test posing as
// the services named (so it can send their signals).
func systemBus(t *testing.T, names ...string) *dbus.Conn {
	t.Helper()
	addr := dbustest.SystemBus(t)
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	for _, name := range names {
		if r, err := conn.RequestName(name, 0); err != nil || r != dbus.RequestNameReplyPrimaryOwner {
			t.Fatalf("cannot pose as %s: %v %v", name, r, err)
		}
	}
	return conn
}

func TestWakeFromTheSystemCutsTheWait(t *testing.T) {
	logind := systemBus(t, "org.freedesktop.login1")
	var chunks atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Query().Get("uploadType") == "resumable":
			w.Header().Set("Location", "http://"+r.Host+"/session?upload_id=1")
		case r.Header.Get("Content-Range") == "bytes */5":
			w.WriteHeader(http.StatusPermanentRedirect) // nothing stored yet
		case chunks.Add(1) == 1:
			http.Error(w, `{"error":{"code":503,"message":"later"}}`, http.StatusServiceUnavailable)
		default:
			w.Write([]byte(`{"id":"done"}`))
		}
	}))
	defer srv.Close()

	state := t.TempDir()
	path := filepath.Join(t.TempDir(), "five.txt")
	os.WriteFile(path, []byte("hello"), 0o600)
	events := make(chan transfer.Event, 256)
	q, err := OpenQueue(transfer.Config{StateDir: state, Events: events, RetryBase: time.Hour}, NewSpool(SpoolDir(state)))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.SystemSignals(); err != nil {
		t.Fatalf("the queue does not hear the system: %v", err)
	}
	id, err := q.Add(transfer.Spec{URL: srv.URL + "/upload/x", ContentType: "text/plain", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	next(t, events, id, transfer.EventRetrying) // an hour's wait begins
	if err := logind.Emit("/org/freedesktop/login1", "org.freedesktop.login1.Manager.PrepareForSleep", false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	snap, err := q.Wait(ctx, id)
	if err != nil || snap.State != transfer.StateDone {
		t.Fatalf("after the wake: %s %v", snap.State, err)
	}
}

// Offline, nothing is sent; the network back, the upload goes at once.
func TestOfflineHoldsUploads(t *testing.T) {
	nm := systemBus(t, "org.freedesktop.NetworkManager")
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Write([]byte(`{"id":"done"}`))
	}))
	defer srv.Close()
	state := t.TempDir()
	path := filepath.Join(t.TempDir(), "five.txt")
	os.WriteFile(path, []byte("hello"), 0o600)
	events := make(chan transfer.Event, 256)
	q, err := OpenQueue(transfer.Config{StateDir: state, Events: events}, NewSpool(SpoolDir(state)))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	nmSignal := func(st uint32) {
		t.Helper()
		if err := nm.Emit("/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager.StateChanged", st); err != nil {
			t.Fatal(err)
		}
	}
	nmSignal(20) // disconnected
	// The hold comes through the bus: wait until a job added sees it.
	var id string
	for id == "" {
		jid, err := q.Add(transfer.Spec{URL: srv.URL + "/upload/x", Type: transfer.Media, ContentType: "text/plain", Path: path})
		if err != nil {
			t.Fatal(err)
		}
		e := next(t, events, jid, transfer.EventRetrying, transfer.EventDone)
		if e.Kind == transfer.EventRetrying && e.Held && e.Reason == HeldOffline {
			id = jid
		}
	}
	before := requests.Load()
	back := time.Now()
	nmSignal(70) // connected
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if snap, err := q.Wait(ctx, id); err != nil || snap.State != transfer.StateDone {
		t.Fatalf("after the network came back: %s %v", snap.State, err)
	}
	t.Logf("done %s after the network came back", time.Since(back).Round(time.Millisecond))
	if d := time.Since(back); d > time.Second {
		t.Errorf("done %s after the network came back, want within 1 s", d)
	}
	if requests.Load() != before+1 {
		t.Errorf("%d requests for the held job, want 1", requests.Load()-before)
	}
}

// When traffic goes another way (NetworkManager's PrimaryConnection
// changes: a Wi-Fi switch, a VPN), the request in flight on the old way
// is abandoned at once, not after the stall timeout, and the upload
// finishes, asking its session first, with no retry counted.
func TestPrimaryConnectionChangeAbandonsTheRequest(t *testing.T) {
	nm := systemBus(t, "org.freedesktop.NetworkManager")
	inFlight := make(chan struct{})
	abandoned := make(chan time.Time, 1)
	var chunks atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so the server notices the client going
		switch {
		case r.URL.Query().Get("uploadType") == "resumable":
			w.Header().Set("Location", "http://"+r.Host+"/session?upload_id=1")
		case r.Header.Get("Content-Range") == "bytes */5":
			w.WriteHeader(http.StatusPermanentRedirect) // nothing stored
		case chunks.Add(1) == 1:
			close(inFlight)
			select { // the old way goes nowhere: only the client can end this
			case <-r.Context().Done():
				abandoned <- time.Now()
			case <-time.After(time.Minute):
			}
		default:
			w.Write([]byte(`{"id":"done"}`))
		}
	}))
	defer srv.Close()

	state := t.TempDir()
	path := filepath.Join(t.TempDir(), "five.txt")
	os.WriteFile(path, []byte("hello"), 0o600)
	events := make(chan transfer.Event, 256)
	q, err := OpenQueue(transfer.Config{StateDir: state, Events: events}, NewSpool(SpoolDir(state)))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	id, err := q.Add(transfer.Spec{URL: srv.URL + "/upload/x", ContentType: "text/plain", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-inFlight:
	case <-time.After(20 * time.Second):
		t.Fatal("the chunk never reached the server")
	}
	switched := time.Now()
	if err := nm.Emit("/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Properties.PropertiesChanged", "org.freedesktop.NetworkManager",
		map[string]dbus.Variant{"PrimaryConnection": dbus.MakeVariant(dbus.ObjectPath("/org/freedesktop/NetworkManager/ActiveConnection/2"))}, []string{}); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-abandoned:
		t.Logf("the request on the old way abandoned %s after the switch", at.Sub(switched).Round(time.Millisecond))
		if d := at.Sub(switched); d > time.Second {
			t.Errorf("the request abandoned %s after the switch, want within 1 s", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the request on the old way was not abandoned")
	}
	if e := next(t, events, id, transfer.EventRetrying); !e.Woke || e.Wait != 0 || e.Attempt != 0 {
		t.Errorf("after the switch: woke %v, wait %s, attempt %d; want at once, no retry counted", e.Woke, e.Wait, e.Attempt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if snap, err := q.Wait(ctx, id); err != nil || snap.State != transfer.StateDone {
		t.Fatalf("after the switch: %s %v", snap.State, err)
	}
}

// On a metered connection (NetworkManager's Metered: yes), a large upload
// waits, saying why, while a small message still goes; when the
// connection is no longer metered, the large one goes too.
func TestMeteredHoldsLargeUploads(t *testing.T) {
	nm := systemBus(t, "org.freedesktop.NetworkManager")
	metered := func(v uint32) {
		t.Helper()
		if err := nm.Emit("/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Properties.PropertiesChanged", "org.freedesktop.NetworkManager",
			map[string]dbus.Variant{"Metered": dbus.MakeVariant(v)}, []string{}); err != nil {
			t.Fatal(err)
		}
	}
	const large = 64 << 10
	release := make(chan struct{}) // until metered no more, the large file's bytes go nowhere
	var largeChunks atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		name := r.URL.Query().Get("name")
		switch {
		case r.URL.Query().Get("uploadType") == "resumable":
			w.Header().Set("Location", "http://"+r.Host+"/session?name="+name)
		case strings.HasPrefix(r.Header.Get("Content-Range"), "bytes */"):
			w.WriteHeader(http.StatusPermanentRedirect) // nothing stored
		case name == "large":
			largeChunks.Add(1)
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			w.Write([]byte(`{"id":"large"}`))
		default:
			w.Write([]byte(`{"id":"small"}`))
		}
	}))
	defer srv.Close()
	state := t.TempDir()
	dir := t.TempDir()
	bigPath, smallPath := filepath.Join(dir, "video.bin"), filepath.Join(dir, "note.txt")
	os.WriteFile(bigPath, make([]byte, large), 0o600)
	os.WriteFile(smallPath, []byte("hello"), 0o600)
	events := make(chan transfer.Event, 1024)
	q, err := OpenQueue(transfer.Config{StateDir: state, Events: events, Metered: transfer.MeteredPolicy{Pause: true, Over: 1 << 10}}, NewSpool(SpoolDir(state)))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	metered(1) // NM_METERED_YES
	big, err := q.Add(transfer.Spec{URL: srv.URL + "/upload/x?name=large", ContentType: "application/octet-stream", Path: bigPath})
	if err != nil {
		t.Fatal(err)
	}
	small, err := q.Add(transfer.Spec{URL: srv.URL + "/upload/x?name=small", ContentType: "text/plain", Path: smallPath})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(20 * time.Second)
	smallDone, bigHeld := false, false
	for !smallDone || !bigHeld {
		select {
		case e := <-events:
			switch {
			case e.Job == small && e.Kind == transfer.EventDone:
				smallDone = true
			case e.Job == big && e.Kind == transfer.EventDone:
				t.Fatal("the large upload went on a metered connection")
			case e.Job == big:
				bigHeld = e.Snap.Held == transfer.HeldMetered
			}
		case <-deadline:
			t.Fatalf("small done %v, large held %v", smallDone, bigHeld)
		}
	}
	if snap, _ := q.Job(big); snap.Held != transfer.HeldMetered || !snap.State.Unfinished() {
		t.Fatalf("the large upload on a metered connection: %s, held %q", snap.State, snap.Held)
	}
	close(release)
	metered(2) // NM_METERED_NO
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if snap, err := q.Wait(ctx, big); err != nil || snap.State != transfer.StateDone {
		t.Fatalf("no longer metered: %s %v", snap.State, err)
	}
}
