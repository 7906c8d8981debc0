package photos

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"carrier/internal/app"
	"carrier/internal/apptest"
	"carrier/internal/delivery"
	"carrier/transfer"
)

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
	d, ok := app.DeliveryOf(ds, b.Creates[0])
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
	apptest.WaitDone(t, q, b.Jobs())
	checkBatch(t, env, q, b, files)
}
