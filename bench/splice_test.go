package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run of one part alone, through writePart as -cpu-only and -photos-only
// end, replaces that part's section of the page and leaves the other's
// and the rest as they were.
func TestWritePartReplacesOnlyItsOwnPart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "PERFORMANCE.md")
	cpuOld := cpuBegin + "## CPU\n\nold CPU figures\n" + cpuEnd
	photosOld := photosBegin + "## Photos\n\nold Photos figures\n" + photosEnd
	page := "# Carrier: performance\n\n" + cpuOld + "\n" + photosOld + "\n## What was measured\n\nthe rest\n"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &config{out: dir}
	photosNew := photosBegin + "## Photos\n\nnew Photos figures\n" + photosEnd
	if err := writePart(cfg, "Photos", photosNew, photosBegin, photosEnd); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(page, photosOld, photosNew, 1)
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Fatalf("page after the Photos part:\n%s\nwant:\n%s", got, want)
	}
	cpuNew := cpuBegin + "## CPU\n\nnew CPU figures\n" + cpuEnd
	if err := writePart(cfg, "CPU", cpuNew, cpuBegin, cpuEnd); err != nil {
		t.Fatal(err)
	}
	want = strings.Replace(want, cpuOld, cpuNew, 1)
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Fatalf("page after the CPU part:\n%s\nwant:\n%s", got, want)
	}
}

// A half-marked page is refused with the part named, and left alone.
func TestSplicePartNamesThePartOfAHalfMarkedPage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "PERFORMANCE.md")
	page := "# Carrier: performance\n\n" + photosBegin + "## Photos\n\n## What was measured\n\nthe rest\n"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	err := splicePart(path, "Photos", photosBegin+"new\n"+photosEnd, photosBegin, photosEnd)
	if err == nil || !strings.Contains(err.Error(), "the Photos part's first marker but not its last") {
		t.Fatalf("splicing into a page without the end marker: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != page {
		t.Fatalf("the page changed:\n%s", got)
	}
}
