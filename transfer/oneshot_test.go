package transfer

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestMediaAndMultipart(t *testing.T) {
	for _, typ := range []UploadType{Media, Multipart} {
		for _, size := range []int64{0, 1, 300000} {
			t.Run(string(typ), func(t *testing.T) {
				f := newFake(t)
				var gotLen int64
				f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
					gotLen = r.ContentLength
					if r.TransferEncoding != nil {
						t.Errorf("chunked transfer encoding; want an exact Content-Length")
					}
					return false
				}
				h := newHarness(t, Config{})
				path, data := writeFile(t, size)
				spec := Spec{URL: f.url(), Type: typ, ContentType: "image/png", Path: path}
				if typ == Multipart {
					spec.Metadata = []byte(`{"title":"x"}`)
				}
				id := h.add(spec)
				if resourceSHA(t, h.mustDone(id)) != sha(data) {
					t.Fatal("bytes differ")
				}
				if f.count(string(typ)) != 1 {
					t.Errorf("%d requests", f.count(string(typ)))
				}
				if typ == Media && gotLen != size {
					t.Errorf("Content-Length %d", gotLen)
				}
			})
		}
	}
}

func TestOneShotRetriesOnlyWhenItCannotHaveArrived(t *testing.T) {
	cases := []struct {
		name       string
		fail       func(w http.ResponseWriter, r *http.Request)
		wantDone   bool
		wantSends  int
		wantInText string
	}{
		{"503 is retried", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			googleError(w, 503, "UNAVAILABLE", "backendError", "later")
		}, true, 2, ""},
		{"broken mid-body is retried", func(w http.ResponseWriter, r *http.Request) {
			io.CopyN(io.Discard, r.Body, 1000)
			hangUp(w)
		}, true, 2, ""},
		{"broken after the whole body is not", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			hangUp(w)
		}, false, 1, "may or may not have arrived"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
				if n == 1 {
					c.fail(w, r)
					return true
				}
				return false
			}
			h := newHarness(t, Config{})
			path, _ := writeFile(t, 4<<20)
			id := h.add(Spec{URL: f.url(), Type: Media, ContentType: "image/png", Path: path})
			e := h.finish(id)
			if (e.Kind == EventDone) != c.wantDone || !strings.Contains(e.Message, c.wantInText) {
				t.Fatalf("got %s", e)
			}
			if got := f.count("media"); got != c.wantSends {
				t.Errorf("%d sends, want %d", got, c.wantSends)
			}
		})
	}
}

// A media job interrupted after its bytes may have gone out is not sent
// again on resume: it needs the person's decision (Retry).
func TestOneShotNotResentAfterRestart(t *testing.T) {
	f := newFake(t)
	held := make(chan struct{})
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if n == 1 {
			io.Copy(io.Discard, r.Body)
			close(held)
			f.hold(r)
			return true
		}
		return false
	}
	state := t.TempDir()
	path, data := writeFile(t, 1000)
	h1 := newHarness(t, Config{StateDir: state})
	id := h1.add(Spec{URL: f.url(), Type: Media, ContentType: "image/png", Path: path})
	waitChan(t, held)
	h1.q.Close()
	f.hook = nil

	h2 := newHarness(t, Config{StateDir: state})
	if _, err := h2.q.ResumeJournal(true); err != nil {
		t.Fatal(err)
	}
	e := h2.finish(id)
	if e.Kind != EventFailed || !strings.Contains(e.Message, "not sent again") {
		t.Fatalf("got %s", e)
	}
	if f.count("media") != 1 {
		t.Fatalf("re-sent blindly: %d sends", f.count("media"))
	}
	// The person decides to send it again.
	if err := h2.q.Retry(ctxT(t), id); err != nil {
		t.Fatal(err)
	}
	if resourceSHA(t, h2.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
}
