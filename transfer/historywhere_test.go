package transfer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// HistoryWhere keeps the jobs its filter accepts, the queue's own and the
// journal's alike, oldest first, as History would list them.
func TestHistoryWhereKeepsWhatItIsAsked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"id":"done"}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "f")
	os.WriteFile(src, []byte("hello"), 0o600)
	add := func(q *Queue, label string) string {
		id, err := q.Add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "text/plain", Path: src, Label: label})
		if err != nil {
			t.Fatal(err)
		}
		if s, err := q.Wait(context.Background(), id); err != nil || s.State != StateDone {
			t.Fatalf("wait: %v %v", s.State, err)
		}
		return id
	}
	q, err := New(Config{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	before := []string{add(q, "keep"), add(q, "leave"), add(q, "keep")}
	q.Close()
	q2, err := New(Config{StateDir: dir}) // the first queue's jobs are the journal's
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	mine := []string{add(q2, "leave"), add(q2, "keep")}
	got, err := q2.HistoryWhere(func(s *Snapshot) bool { return s.Label == "keep" })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{before[0], before[2], mine[1]}
	var ids []string
	for _, s := range got {
		ids = append(ids, s.ID)
	}
	all, _ := q2.History()
	if len(ids) != len(want) || ids[0] != want[0] || ids[1] != want[1] || ids[2] != want[2] || len(all) != 5 {
		t.Fatalf("HistoryWhere kept %v; want %v (of %d jobs)", ids, want, len(all))
	}
}
