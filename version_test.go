package main

import (
	"os/exec"
	"strings"
	"testing"

	"carrier/internal/app"
)

// The version carrier --version prints is FyneApp.toml's, as the
// packaging scripts read it.
func TestVersionIsFyneApps(t *testing.T) {
	out, err := exec.Command("scripts/release/version.sh").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(out))
	if want == "" || app.Version != want {
		t.Fatalf("scripts/release/version.sh says %q, app.Version is %q", want, app.Version)
	}
	if line := app.VersionLine(); !strings.HasPrefix(line, "carrier "+want+" ") {
		t.Fatalf("version line %q", line)
	}
	if v := versionOf([]byte("[Details]\nName = \"Carrier\"\n")); v != "" {
		t.Fatalf("a file without a Version gave %q", v)
	}
}
