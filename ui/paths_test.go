package ui

import (
	"path/filepath"
	"testing"
)

func TestNativePath(t *testing.T) {
	cases := map[string]string{
		"/home/zoe/résumé.pdf": filepath.FromSlash("/home/zoe/résumé.pdf"),
		"relative/a b.txt":     filepath.FromSlash("relative/a b.txt"),
	}
	if filepath.VolumeName(`C:\x`) != "" { // Windows: drives and backslashes
		cases["C:/Users/zoe/a.pdf"] = `C:\Users\zoe\a.pdf`
		cases["/C:/Users/zoe/a.pdf"] = `C:\Users\zoe\a.pdf`
		cases["//server/share/a.pdf"] = `\\server\share\a.pdf`
	}
	for in, want := range cases {
		if got := nativePath(in); got != want {
			t.Errorf("nativePath(%q) = %q, want %q", in, got, want)
		}
	}
}
