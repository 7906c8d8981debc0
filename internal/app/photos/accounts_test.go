package photos

import (
	"context"
	"testing"

	"carrier/internal/apptest"
	"carrier/transfer"
)

// Every job of a Photos batch (uploads, the album, the batchCreate calls)
// goes as the account its uploads were bound to.
func TestPhotosBatchBoundToItsAccount(t *testing.T) {
	env := newPhotosEnv(t)
	q := env.open(t.TempDir(), nil)
	q.Hold("test") // the binding is what is looked at, not the sending
	b, err := q.PhotosUpload(context.Background(), env.photos(), pictures(t, 3), PhotosOptions{Album: "Trip"}, func(s *transfer.Spec) { s.Account = work })
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range b.Jobs() {
		if s := apptest.Snap(t, q, id); s.Account != work {
			t.Errorf("job %s (%s) is bound to %q, want %s", id, s.Label, s.Account, work)
		}
	}
}

// work is the second account bound to a batch.
const work = "work@example.com"
