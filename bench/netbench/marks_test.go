package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"carrier/bench/internal/mdsection"
)

// A serialised run writes its own section beside the default's, and each
// run replaces only its own: the default's markers are the ones
// docs/PERFORMANCE.md has, the serialised ones differ from them.
func TestSerializedSectionsAreTheirOwn(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "PERFORMANCE.md")
	for _, name := range [][2]string{{"netbench-blackhole", "-blackhole 20s"}, {"netbench-nm-online", "-nm-online 20s"}, {"netbench-wifi-switch", "-wifi-switch"}} {
		db, de := marks(config{}, name[0], name[1])
		if want := "<!-- " + name[0] + ": begin (go run ./bench/netbench " + name[1] + "; make bench-net) -->"; db != want {
			t.Errorf("the default's marker %q, want %q", db, want)
		}
		sb, se := marks(config{serialize: true}, name[0], name[1])
		for _, run := range []struct{ begin, end, text string }{{db, de, "default 1"}, {sb, se, "serialized 1"}, {db, de, "default 2"}, {sb, se, "serialized 2"}} {
			if err := mdsection.Write(doc, run.begin+"\n"+name[0]+" "+run.text+"\n"+run.end+"\n", run.begin, run.end); err != nil {
				t.Fatal(err)
			}
		}
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, name := range []string{"netbench-blackhole", "netbench-nm-online", "netbench-wifi-switch"} {
		for _, text := range []string{"default 2", "serialized 2"} {
			if n := strings.Count(got, name+" "+text); n != 1 {
				t.Errorf("%s %s: %d times in\n%s", name, text, n, got)
			}
		}
		if strings.Contains(got, name+" default 1") || strings.Contains(got, name+" serialized 1") {
			t.Errorf("%s: an earlier run's section was kept:\n%s", name, got)
		}
	}
}
