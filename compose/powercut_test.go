package compose

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"carrier/internal/crashdisk"
)

// A power cut at any moment after Build returned leaves the spool whole
// at its path, with its mode and the change time seen when Build returned
// (which the job recorded for it keeps, and a resume checks): Build's
// chmod, sync, rename and folder sync come in an order no cut can undo in
// part. And no cut before then leaves a part of the spool under its final
// name. Build's steps are recorded (internal/crashdisk, through the
// platform's disk hook) and every state a cut after each could leave is
// looked at.
func TestSpoolSurvivesAPowerCutAfterBuild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the power-cut model is Linux's (fsync(2), ext4); Windows' rename is written through instead")
	}
	dir := t.TempDir()
	rec, err := crashdisk.Record(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := &Message{To: []string{"zoe@example.com"}, Subject: "Power cut", Text: "The lights went out."}
	sp, err := Build(context.Background(), m, Send, dir)
	rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(sp.Path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(sp.Path)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(sp.Path)
	ops := rec.Ops()
	if unseen := rec.Unseen(ops); len(unseen) > 0 {
		t.Fatalf("the steps recorded do not make the spool Build wrote: %v (steps %v)", unseen, ops)
	}
	open := 0
	for cut := 0; cut <= len(ops); cut++ {
		for _, s := range rec.States(ops, cut, 1<<12) {
			f := s.Files[name]
			if cut < len(ops) {
				if f != nil && !bytes.Equal(f.Data, want) {
					t.Errorf("a cut after step %d that lost %v leaves %d bytes under the spool's name, not the %d written", cut, s.Lost, len(f.Data), len(want))
				}
				continue
			}
			open = max(open, len(s.Lost))
			switch {
			case f == nil:
				t.Errorf("a cut that lost %v leaves no spool at its path", s.Lost)
			case !bytes.Equal(f.Data, want):
				t.Errorf("a cut that lost %v leaves a spool of %d bytes, not the %d written", s.Lost, len(f.Data), len(want))
			case f.Mode != 0o400:
				t.Errorf("a cut that lost %v leaves the spool with mode %v, not 0400", s.Lost, f.Mode)
			case !f.CTime.Equal(crashdisk.ChangeTime(fi)):
				t.Errorf("a cut that lost %v leaves the spool with another change time than the one recorded", s.Lost)
			}
		}
	}
	if open > 0 {
		t.Logf("up to %d steps a cut could undo after Build returned", open)
	}
}
