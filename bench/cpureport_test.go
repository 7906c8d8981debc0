package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	if err := splicePart(path, "CPU", section, cpuBegin, cpuEnd); err != nil {
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
	if err := splicePart(path, "CPU", section, cpuBegin, cpuEnd); err != nil {
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
	if err := splicePart(path, "CPU", cpuBegin+"new\n"+cpuEnd, cpuBegin, cpuEnd); err == nil || !strings.Contains(err.Error(), "last") {
		t.Fatalf("splicing into a page without the end marker: %v", err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != page {
		t.Fatalf("the page changed:\n%s", got)
	}
}

// Running the CPU part again with the same figures leaves the page as it
// was: nothing piles up around the section from run to run.
func TestSpliceCPUTwiceIsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "PERFORMANCE.md")
	page := "# Carrier: performance\n\n## Goals\n\nthroughput\n\n## What was measured\n\nthe rest\n"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &cpuResult{size: 1 << 30, rounds: 1, clients: []string{"curl", "carrier", "official"}, perGiB: map[string]map[string][]sample{}}
	for _, tg := range cpuTargets {
		c.perGiB[tg.id] = map[string][]sample{}
		for _, cl := range c.clients {
			c.perGiB[tg.id][cl] = []sample{{usage: usage{wall: time.Second, user: time.Second}}}
		}
	}
	c.compose.with = []usage{{user: 100 * time.Millisecond}}
	c.compose.without = []usage{{user: 10 * time.Millisecond}}
	section := c.section(&config{composeReps: 1, idleRounds: 1})
	if !strings.HasPrefix(section, cpuBegin) || !strings.HasSuffix(section, cpuEnd) {
		t.Fatalf("the section does not sit between its markers:\n%s", section)
	}
	if err := splicePart(path, "CPU", section, cpuBegin, cpuEnd); err != nil {
		t.Fatal(err)
	}
	once, _ := os.ReadFile(path)
	if err := splicePart(path, "CPU", section, cpuBegin, cpuEnd); err != nil {
		t.Fatal(err)
	}
	twice, _ := os.ReadFile(path)
	if string(once) != string(twice) {
		t.Fatalf("splicing the same section again changed the page:\n%q\nthen\n%q", once, twice)
	}
}
