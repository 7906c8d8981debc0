package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Restart now starts the same program again with no arguments and the
// same environment: the window, in the language just chosen.
func TestRestartStartsTheWindowAgain(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("runs a shell script")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "started")
	exe := filepath.Join(dir, "carrier")
	script := "#!/bin/sh\necho \"$# $CARRIER_RESTART_TEST\" > " + out + "\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CARRIER_RESTART_TEST", "kept")
	cmd := restartCommand(exe)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != "0 kept" {
		t.Errorf("started with %q, want no arguments and the environment kept", got)
	}
}
