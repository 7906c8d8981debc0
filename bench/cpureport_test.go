package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run of the CPU part alone must replace its own section and nothing
// else of the page the whole run wrote.
func TestSpliceCPUReplacesOnlyItsSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "PERFORMANCE.md")
	old := cpuBegin + "## CPU\n\nold figures\n" + cpuEnd
	page := "# Carrier: performance\n\n## Goals\n\nthroughput\n\n" + old + "\n## What was measured\n\nthe rest\n"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	section := cpuBegin + "## CPU\n\nnew figures\n" + cpuEnd
	if err := spliceCPU(path, section); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := strings.Replace(page, old, section, 1)
	if string(got) != want {
		t.Fatalf("page after splicing:\n%s\nwant:\n%s", got, want)
	}
}

// A page written before the CPU part existed gets it before the method.
func TestSpliceCPUIntoOlderPage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "PERFORMANCE.md")
	page := "# Carrier: performance\n\n## Goals\n\nthroughput\n\n## What was measured\n\nthe rest\n"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	section := cpuBegin + "## CPU\n\nfigures\n" + cpuEnd
	if err := spliceCPU(path, section); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "# Carrier: performance\n\n## Goals\n\nthroughput\n\n" + section + "\n## What was measured\n\nthe rest\n"
	if string(got) != want {
		t.Fatalf("page after splicing:\n%s\nwant:\n%s", got, want)
	}
}

// A page whose section lost its end marker is not guessed at: the rest of
// the page would be cut.
func TestSpliceCPURefusesAHalfMarkedPage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "PERFORMANCE.md")
	page := "# Carrier: performance\n\n" + cpuBegin + "## CPU\n\n## What was measured\n\nthe rest\n"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := spliceCPU(path, cpuBegin+"new\n"+cpuEnd); err == nil || !strings.Contains(err.Error(), "last") {
		t.Fatalf("splicing into a page without the end marker: %v", err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != page {
		t.Fatalf("the page changed:\n%s", got)
	}
}
