package app

import (
	"context"
	"errors"
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
