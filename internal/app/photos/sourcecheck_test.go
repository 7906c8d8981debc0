package photos

import (
	"context"
	"testing"

	"carrier/internal/apptest"
	"carrier/transfer"
)

// A Photos upload names no sum, since Photos reports none: its source
// check is a CRC32C, a fraction of the SHA-256's cost. (A raw file to
// Gmail's: app's TestRawGmailKeepsCRC32C.)
func TestPhotosUploadKeepsCRC32C(t *testing.T) {
	env := newPhotosEnv(t)
	pstate := t.TempDir()
	pq := env.open(pstate, nil)
	b, err := pq.PhotosUpload(context.Background(), env.photos(), pictures(t, 2), PhotosOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	apptest.WaitDone(t, pq, b.Jobs())
	for _, id := range b.Uploads {
		if r := apptest.StoredRecord(t, pstate, id); r.SourceSum != transfer.SumCRC32C || len(r.Checksums) != 0 {
			t.Fatalf("the Photos upload keeps source sum %q and names %q; want a CRC32C and nothing named", r.SourceSum, r.Checksums)
		}
	}
}
