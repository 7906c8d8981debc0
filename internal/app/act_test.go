package app

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"carrier/compose"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// Cancelling a message whose Drive file is up and shared, while the
// message waits for its time: the message is stopped first, the files
// already on Drive are reported for the person to keep or delete, and
// nothing is sent, then or later. A message that went is refused.
func TestActCancelsAMessageAndReportsItsFilesOnDrive(t *testing.T) {
	e := newUndoEnv(t)
	film := attachment(t, "film.mov", strings.Repeat("film ", 60000))
	ids := e.send(t, &compose.Message{From: "me@example.com", To: []string{"zoe@example.com"}, Subject: "Film", Text: "Here.", Attachments: []string{film}}, LinkOptions{Policy: compose.LinksAlways}, 20*time.Second)
	msg := ids[len(ids)-1]
	next(t, e.events, msg, transfer.EventScheduled)
	ds, err := e.q.Deliveries()
	if err != nil {
		t.Fatal(err)
	}
	d, ok := DeliveryOf(ds, msg)
	if !ok || len(d.Members) != 3 || len(delivery.Files(d)) != 1 {
		t.Fatalf("the message's delivery: %+v", d)
	}

	acted, err := e.q.Act(context.Background(), d.ID, delivery.VerbCancel)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(acted.Moved, []string{msg}) {
		t.Fatalf("cancel moved %v, want the message %s alone (its file and share are done)", acted.Moved, msg)
	}
	if len(acted.OnDrive) != 1 || acted.OnDrive[0].Name != "film.mov" || acted.OnDrive[0].ID == "" {
		t.Fatalf("files on Drive: %+v, want film.mov", acted.OnDrive)
	}
	if s, _ := e.q.Job(msg); s.State != transfer.StateCancelled {
		t.Fatalf("the message is %s after the cancel", s.State)
	}
	e.advance(t, time.Minute)
	if n := e.messages(t); n != 0 {
		t.Fatalf("%d messages after the cancel, want none", n)
	}
	// Named by its file, as `carrier cancel` may name it: the same
	// delivery, nothing left to stop, its file still on Drive.
	again, err := e.q.Act(context.Background(), delivery.Files(d)[0], delivery.VerbCancel)
	if err != nil || len(again.Moved) != 0 || len(again.OnDrive) != 1 {
		t.Fatalf("cancelling again: moved %v, on Drive %+v, %v", again.Moved, again.OnDrive, err)
	}

	sent := e.send(t, &compose.Message{From: "me@example.com", To: []string{"zoe@example.com"}, Subject: "Go", Text: "Now.", Attachments: []string{attachment(t, "b.mov", strings.Repeat("b", 300000))}}, LinkOptions{Policy: compose.LinksAlways}, 0)
	next(t, e.events, sent[len(sent)-1], transfer.EventDone)
	if _, err := e.q.Act(context.Background(), sent[len(sent)-1], delivery.VerbCancel); !errors.Is(err, ErrAlreadySent) {
		t.Fatalf("cancelling a message that went: %v, want ErrAlreadySent", err)
	}
}

// Pausing a Photos batch while its first call is under way and the rest
// of its pictures go up: every member not ended is paused (the calls
// among them), nothing is posted meanwhile; resuming lets the same
// members go, and every file becomes one item.
func TestActPausesAndResumesAPhotosBatch(t *testing.T) {
	env := newPhotosEnv(t)
	events := make(chan transfer.Event, 64)
	go func() {
		for range events {
		}
	}()
	q := env.open(t.TempDir(), events)
	holding, release := make(chan struct{}, 8), make(chan struct{})
	env.setHook(func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) bool {
		select {
		case holding <- struct{}{}:
		default:
		}
		select {
		case <-release:
			return false
		case <-r.Context().Done(): // paused: the call is let go unanswered
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
	})
	files := pictures(t, 60)
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{Album: "Trip"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Creates) != 2 {
		t.Fatalf("%d calls, want 2", len(b.Creates))
	}
	select {
	case <-holding:
	case <-time.After(60 * time.Second):
		t.Fatal("the first call never reached Photos")
	}
	ds, err := q.Deliveries()
	if err != nil {
		t.Fatal(err)
	}
	d, ok := DeliveryOf(ds, b.Creates[0])
	if !ok || d.Kind != delivery.KindPhotos {
		t.Fatalf("the batch's delivery: %+v", d)
	}

	paused, err := q.Act(context.Background(), d.ID, delivery.VerbPause)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range b.Creates {
		if !slices.Contains(paused.Moved, c) {
			t.Fatalf("pause moved %v: not call %s", paused.Moved, c)
		}
	}
	h, _ := q.History()
	snaps := delivery.ByJob(h)
	for _, m := range d.Members {
		s := snaps[m.Job]
		if want := slices.Contains(paused.Moved, m.Job); want != (s.State == transfer.StatePaused) || !want && s.State != transfer.StateDone {
			t.Fatalf("after pause, %s %s is %s (moved: %v)", m.Role, m.Job, s.State, want)
		}
	}
	if st := delivery.Status(d, snaps); st.Phase != delivery.PhasePaused {
		t.Fatalf("the batch stands %s after pause", st.Phase)
	}
	if n := env.creates.Load(); n != 0 {
		t.Fatalf("%d calls reached Photos while paused", n)
	}

	close(release)
	resumed, err := q.Act(context.Background(), d.ID, delivery.VerbResume)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(resumed.Moved, paused.Moved) {
		t.Fatalf("resume moved %v, pause %v", resumed.Moved, paused.Moved)
	}
	waitDone(t, q, b.Jobs())
	checkBatch(t, env, q, b, files)
}
