package app

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestVersionIsFyneApps(t *testing.T) {
	toml, err := os.ReadFile("../../FyneApp.toml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^Version = "([^"]+)"`).FindSubmatch(toml)
	if m == nil || string(m[1]) != Version {
		t.Fatalf("FyneApp.toml says %q, app.Version %q", m, Version)
	}
	if line := VersionLine(); !strings.HasPrefix(line, "carrier "+Version) {
		t.Fatalf("version line %q", line)
	}
}
