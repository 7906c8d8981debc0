package delivery

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"carrier/transfer"
)

// A journal from before deliveries: a message with two files on Drive and
// their shares, a draft updated with a link, a Photos batch from before
// albums were made up front (an album call, two batchCreate calls), a
// newer batch, an upload alone, and a job that already has an owner.
func oldJournal() []transfer.Snapshot {
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	j := func(id, url string, i int, needs ...string) transfer.Snapshot {
		return transfer.Snapshot{ID: id, URL: url, Created: at(i), Needs: needs, State: transfer.StateDone, Account: "ann@example.com", Label: id}
	}
	withPath := func(s transfer.Snapshot, p string) transfer.Snapshot { s.Path = p; return s }
	withBody := func(s transfer.Snapshot, body string) transfer.Snapshot {
		s.Response = &transfer.Response{Status: 200, Body: []byte(body)}
		return s
	}
	withMeta := func(s transfer.Snapshot, meta string) transfer.Snapshot { s.Metadata = []byte(meta); return s }
	owned := j("own1", driveURL, 30)
	owned.Owner = "d-abc"
	return []transfer.Snapshot{
		withPath(j("f1", driveURL, 1), "/home/ann/a.mov"),
		j("s1", root+"/drive/v3/files/F1/permissions", 2, "f1"),
		withPath(j("f2", driveURL, 3), "/home/ann/b.mov"),
		j("s2", root+"/drive/v3/files/F2/permissions", 4, "f2"),
		j("m1", sendURL, 5, "f1", "s1", "f2", "s2"),

		withPath(j("f3", driveURL, 6), "/home/ann/c.pdf"),
		j("m2", root+"/upload/gmail/v1/users/me/drafts/r%2F42", 7, "f3"),

		withBody(j("a1", root+"/v1/albums", 10), `{"id":"ALB1","title":"Trip"}`),
		withPath(j("p1", photoURL, 11), "/p/1.jpg"),
		withPath(j("p2", photoURL, 12), "/p/2.jpg"),
		j("c1", itemsURL, 13, "a1", "p1"),
		j("c2", itemsURL, 14, "c1", "p2"),

		withPath(j("p3", photoURL, 20), "/p/3.jpg"),
		withMeta(j("c3", itemsURL, 21, "p3", "gone-long-ago"), `{"albumId":"ALB2","newMediaItems":[{"simpleMediaItem":{"uploadToken":""}}]}`),

		withPath(j("u1", postURL, 25), "/home/ann/clip.mp4"),
		owned,
	}
}

func TestAdoptGroupsOldJobsIntoDeliveries(t *testing.T) {
	got := Adopt(oldJournal())
	type brief struct {
		kind             Kind
		members          string
		draft, album, id string
		label            string
	}
	var briefs []brief
	for _, d := range got {
		if err := d.Check(); err != nil {
			t.Errorf("adopted %+v: %v", d, err)
		}
		if _, err := Marshal(d); err != nil {
			t.Errorf("adopted %s cannot be stored: %v", d.ID, err)
		}
		if d.Account != "ann@example.com" {
			t.Errorf("%s: account %q", d.ID, d.Account)
		}
		ms := ""
		for _, m := range d.Members {
			ms += fmt.Sprintf("%s:%s:%s ", m.Job, m.Role, m.File)
		}
		briefs = append(briefs, brief{d.Kind, ms, d.DraftID, d.Album, d.AlbumID, d.Label})
	}
	want := []brief{
		{KindMessage, "f1:drive-file:/home/ann/a.mov s1:drive-share: f2:drive-file:/home/ann/b.mov s2:drive-share: m1:message: ", "", "", "", "m1"},
		{KindDraft, "f3:drive-file:/home/ann/c.pdf m2:message: ", "r/42", "", "", "m2"},
		{KindPhotos, "a1:album: p1:photo:/p/1.jpg p2:photo:/p/2.jpg c1:items: c2:items: ", "", "Trip", "ALB1", "c2"},
		{KindPhotos, "p3:photo:/p/3.jpg c3:items: ", "", "", "ALB2", "c3"},
		{KindUpload, "u1:upload:/home/ann/clip.mp4 ", "", "", "", "u1"},
	}
	if !reflect.DeepEqual(briefs, want) {
		t.Fatalf("adopted\n%v\nwant\n%v", briefs, want)
	}
	// Status reads an adopted delivery as any other.
	snaps := snapsOf(oldJournal()...)
	for i, phase := range []Phase{PhaseSent, PhaseSaved, PhaseDone, PhaseDone, PhaseDone} {
		if st := Status(got[i], snaps); st.Phase != phase {
			t.Errorf("%s: %s, want %s", got[i].Label, st.Phase, phase)
		}
	}
}

// Two Carriers adopting one journal, each reading it in its own order,
// make the same deliveries, under the same ids.
func TestAdoptIsTheSameWhateverTheOrder(t *testing.T) {
	first := Adopt(oldJournal())
	ids := map[string]bool{}
	for _, d := range first {
		if ids[d.ID] {
			t.Fatalf("two deliveries are %s", d.ID)
		}
		ids[d.ID] = true
	}
	for i := range 20 {
		jobs := oldJournal()
		r := rand.New(rand.NewPCG(uint64(i), 7))
		r.Shuffle(len(jobs), func(a, b int) { jobs[a], jobs[b] = jobs[b], jobs[a] })
		if again := Adopt(jobs); !reflect.DeepEqual(again, first) {
			t.Fatalf("shuffle %d adopted\n%+v\nnot\n%+v", i, again, first)
		}
	}
	if len(Adopt(nil)) != 0 {
		t.Fatal("deliveries of no jobs")
	}
}
