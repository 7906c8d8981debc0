package app

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"carrier/transfer"
)

// When the system says the machine woke, an upload waiting out a long
// backoff asks its session at once: the queue hears logind on the system
// bus (here a private bus, with this test as logind).
func TestWakeFromTheSystemCutsTheWait(t *testing.T) {
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Skip("dbus-daemon is not installed (make deps-test installs it)")
	}
	daemon := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address")
	out, _ := daemon.StdoutPipe()
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Kill(); daemon.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr = strings.TrimSpace(addr)
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", addr)
	logind, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer logind.Close()
	if r, err := logind.RequestName("org.freedesktop.login1", 0); err != nil || r != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("cannot pose as logind: %v %v", r, err)
	}

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
