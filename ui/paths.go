package ui

import (
	"path/filepath"

	"fyne.io/fyne/v2"
)

// localPath is a file URI's path as this system writes it: Fyne's URIs
// keep forward slashes, and on Windows a "/C:/..." path names a drive.
func localPath(u fyne.URI) string { return nativePath(u.Path()) }

func nativePath(p string) string {
	if len(p) >= 3 && p[0] == '/' && filepath.VolumeName(p[1:]) != "" {
		p = p[1:]
	}
	return filepath.FromSlash(p)
}
