package transfer

import (
	"testing"
)

// LoadMany reads the records the folder holds from it and those Compact
// moved to the archive in one read of the archive, however many they
// are; an id neither holds is left out. Loading each archived record on
// its own reads the archive once per record.
func TestLoadManyReadsTheArchiveOnce(t *testing.T) {
	j, all, moved := archiveJournal(t)
	if n, err := j.Compact(); err != nil || n != len(moved) {
		t.Fatalf("Compact moved %d, %v; want %d", n, err, len(moved))
	}
	unknown := "20300102T030405-0000ffff"
	before := archiveReads.Load()
	got, err := j.LoadMany(append(append([]string(nil), all...), unknown))
	if err != nil {
		t.Fatal(err)
	}
	if reads := archiveReads.Load() - before; reads != 1 {
		t.Errorf("LoadMany of %d archived records read the archive %d times, want once", len(moved), reads)
	}
	if len(got) != len(all) {
		t.Errorf("LoadMany gave %d records, want %d", len(got), len(all))
	}
	for _, id := range all {
		want, err := j.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		if r := got[id]; r == nil || r.ID != id || r.State != want.State || (want.Response != nil) != (r.Response != nil) {
			t.Errorf("LoadMany gave %s as %+v, Load as %+v", id, r, want)
		}
	}
	if _, ok := got[unknown]; ok {
		t.Error("an id the journal never held was given a record")
	}
	// Nothing archived is asked: the archive is not read.
	before = archiveReads.Load()
	if _, err := j.LoadMany([]string{all[len(all)-2]}); err != nil {
		t.Fatal(err)
	}
	if reads := archiveReads.Load() - before; reads != 0 {
		t.Errorf("LoadMany of a record in the folder read the archive %d times", reads)
	}
}

// Answers gives each done job's answer, from the journal, in one read of
// it, and leaves out a job without one.
func TestAnswersGivesEachJobsAnswer(t *testing.T) {
	j, all, moved := archiveJournal(t)
	if _, err := j.Compact(); err != nil {
		t.Fatal(err)
	}
	q := &Queue{journal: j}
	before := archiveReads.Load()
	got, err := q.Answers(all)
	if err != nil {
		t.Fatal(err)
	}
	if reads := archiveReads.Load() - before; reads != 1 {
		t.Errorf("Answers read the archive %d times, want once", reads)
	}
	for _, id := range all {
		r, _ := j.Load(id)
		switch a := got[id]; {
		case r.Response == nil && a != nil:
			t.Errorf("job %s (%s) has no answer, Answers gave %s", id, r.State, a.Body)
		case r.Response != nil && (a == nil || string(a.Body) != string(r.Response.Body)):
			t.Errorf("job %s: Answers gave %v, the journal %s", id, a, r.Response.Body)
		}
	}
	if got[moved[1]] != nil {
		t.Errorf("the cancelled job %s was given an answer", moved[1])
	}
}
