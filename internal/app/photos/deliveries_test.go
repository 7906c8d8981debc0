package photos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/apptest"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// What a person sends is one stored delivery, made before its first job
// and stored with its members once they are queued: a message with a
// Drive link (the file's upload, its share, the message), a Photos batch
// (its pictures and the call that makes them items, with its album), an
// upload queued alone. Every job names its delivery; where each stands
// is read from the deliveries and the jobs alone (delivery.Status).
func TestWhatIsSentIsOneStoredDelivery(t *testing.T) {
	env := newPhotosEnv(t)
	state := t.TempDir()
	q := env.open(state, nil)
	ctx := context.Background()

	file := filepath.Join(t.TempDir(), "film.mov")
	if err := os.WriteFile(file, []byte(strings.Repeat("film ", 60000)), 0o600); err != nil {
		t.Fatal(err)
	}
	msg := &compose.Message{From: "me@example.com", To: []string{"zoe@example.com"}, Subject: "Film", Text: "Here.", Attachments: []string{file}}
	up, err := app.Message(msg, compose.Send, app.GmailOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sent, err := q.SendWithLinks(ctx, env.photos().Drive, msg, compose.Send, up, app.LinkOptions{Policy: compose.LinksAlways}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := q.PhotosUpload(ctx, env.photos(), pictures(t, 3), PhotosOptions{Album: "Trip"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(alone, []byte("notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	single, err := q.Add(transfer.Spec{URL: env.root + "/upload/storage/v1/b/box/o?name=notes.txt", Path: alone, ContentType: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	apptest.WaitDone(t, q, append(append(sent, b.Jobs()...), single))

	stored, err := delivery.Open(delivery.Dir(state))
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := stored.List()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := q.Deliveries()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 3 || len(onDisk) != 3 {
		t.Fatalf("%d deliveries (%d stored), want 3: the message, the batch, the upload", len(ds), len(onDisk))
	}
	for i, d := range onDisk {
		if roles(d) != roles(ds[i]) {
			t.Errorf("%s: stored with members %q, read as %q", d.ID, roles(d), roles(ds[i]))
		}
	}
	m, p, u := ds[0], ds[1], ds[2]
	if m.Kind != delivery.KindMessage || roles(m) != "drive-file drive-share message" || m.Members[0].File != file {
		t.Errorf("the message: %s with %q (file %q)", m.Kind, roles(m), m.Members[0].File)
	}
	if p.Kind != delivery.KindPhotos || roles(p) != "photo photo photo items" || p.Album != "Trip" || p.AlbumID == "" {
		t.Errorf("the batch: %s with %q, album %q (%q)", p.Kind, roles(p), p.Album, p.AlbumID)
	}
	if u.Kind != delivery.KindUpload || roles(u) != "upload" || u.Members[0].File != alone {
		t.Errorf("the upload: %s with %q", u.Kind, roles(u))
	}
	snaps := map[string]transfer.Snapshot{}
	h, _ := q.History()
	for _, s := range h {
		snaps[s.ID] = s
		if d, ok := app.DeliveryOf(ds, s.ID); !ok || d.ID != s.Owner {
			t.Errorf("job %s (%s) names %q as its delivery, found in %q", s.ID, s.Label, s.Owner, d.ID)
		}
	}
	for _, c := range []struct {
		d    delivery.Delivery
		want delivery.Phase
	}{{m, delivery.PhaseSent}, {p, delivery.PhaseDone}, {u, delivery.PhaseDone}} {
		if st := delivery.Status(c.d, snaps); st.Phase != c.want {
			t.Errorf("%s: %s, want %s", c.d.Kind, st.Phase, c.want)
		}
	}
}

// A process that dies between queuing a delivery's jobs and storing it
// with them loses nothing: the jobs name their delivery, and reading the
// deliveries makes them its members.
func TestJobsQueuedBeforeTheDeliveryWasStoredJoinIt(t *testing.T) {
	env := newPhotosEnv(t)
	state := t.TempDir()
	q := env.open(state, nil)
	d, err := q.BeginDelivery(delivery.KindPhotos, "2 files to Google Photos", "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range pictures(t, 2) {
		id, err := q.addPhotosUpload(env.root, p, "image/jpeg", nil, "", app.Owned(d, nil))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// No end: the process died here.
	ds, err := q.Deliveries()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].ID != d.ID || roles(ds[0]) != "photo photo" {
		t.Fatalf("deliveries %+v, want %s with the two pictures", ds, d.ID)
	}
	apptest.WaitDone(t, q, ids)
}

// roles lists a delivery's members' roles in order, for a message.
func roles(d delivery.Delivery) string {
	var out []string
	for _, m := range d.Members {
		out = append(out, string(m.Role))
	}
	return strings.Join(out, " ")
}
