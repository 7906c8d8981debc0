package transfer

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
)

// A create under an id the caller chose (Drive) answers 409 once the id
// exists: an earlier attempt made the file and its answer was lost. With
// Spec.Existing the engine reads the file there and checks it against its
// own bytes; the file is made once and the job is done, verified. A file
// there that is not these bytes fails the job as not verified; without
// Existing a 409 fails as the refusal it is.
func TestConflictMeansAnEarlierAttemptMadeIt(t *testing.T) {
	path, data := writeFile(t, 700_000)
	for _, c := range []struct {
		name     string
		existing bool
		held     string // the sha256Checksum of what the server holds
		want     string // "done" or the error
	}{
		{"same bytes", true, sha(data), "done"},
		{"other bytes", true, sha([]byte("other")), "not verified"},
		{"no existing URI", false, sha(data), "409"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var starts, gets atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.Method == "POST" && r.URL.Path == "/upload/drive/v3/files":
					starts.Add(1)
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusConflict)
					w.Write([]byte(`{"error":{"code":409,"message":"A file already exists with the provided ID.","errors":[{"reason":"fileIdInUse"}]}}`))
				case r.Method == "GET" && r.URL.Path == "/drive/v3/files/F1":
					gets.Add(1)
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(`{"id":"F1","size":"` + strconv.Itoa(len(data)) + `","sha256Checksum":"` + c.held + `"}`))
				default:
					http.Error(w, "unexpected", 400)
				}
			}))
			defer srv.Close()
			h := newHarness(t, Config{})
			spec := Spec{URL: srv.URL + "/upload/drive/v3/files", ContentType: "video/mp4", Metadata: []byte(`{"id":"F1","name":"a.mp4"}`), Path: path}
			if c.existing {
				spec.Existing = srv.URL + "/drive/v3/files/F1?fields=id,size,sha256Checksum"
			}
			id := h.add(spec)
			e := h.finish(id)
			switch c.want {
			case "done":
				if e.Kind != EventDone || e.Snap.Verified != "sha256" {
					t.Fatalf("got %s, verified %q", e, e.Snap.Verified)
				}
			case "not verified":
				if e.Kind != EventFailed || !errors.Is(e.Err, ErrNotVerified) {
					t.Fatalf("got %s", e)
				}
			default:
				var ae *APIError
				if e.Kind != EventFailed || !errors.As(e.Err, &ae) || ae.Code != 409 {
					t.Fatalf("got %s", e)
				}
			}
			if starts.Load() != 1 {
				t.Errorf("%d starts", starts.Load())
			}
		})
	}
}
