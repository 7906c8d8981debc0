package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// `carrier FILE...` and `carrier mailto:...` open the window; commands,
// flags and a word that is no file stay commands (a typo is still an
// unknown command). Relative paths are made full where Carrier started.
func TestOpensFilesAndLinksNotCommands(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("notes.txt", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]bool{
		"send":                          false,
		"upload":                        false,
		"--version":                     false,
		"help":                          false,
		"frobnicate":                    false,
		"notes.txt":                     true,
		"./gone.pdf":                    true,
		"/home/zoe/a.pdf":               true,
		"file:///home/zoe/a.pdf":        true,
		"mailto:zoe@example.com":        true,
		"MAILTO:zoe@example.com?subj=x": true,
	} {
		if got := Opens([]string{args}); got != want {
			t.Errorf("Opens(%q) = %v, want %v", args, got, want)
		}
	}
	full := filepath.Join(t.TempDir(), "y") // a full path on every system ("/abs/y" is not one on Windows)
	got := OpenItems([]string{"notes.txt", "mailto:z@example.com", "file:///x", full})
	want := []string{filepath.Join(dir, "notes.txt"), "mailto:z@example.com", "file:///x", full}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OpenItems: %q, want %q", got, want)
	}
}
