package photos

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"carrier/compose"
)

// The files of a Photos batch are taken in order, each once however it is
// named, and what went wrong is told file by file.
func TestEachPhotoOnceInOrder(t *testing.T) {
	dir := t.TempDir()
	b, a, c := filepath.Join(dir, "b.jpg"), filepath.Join(dir, "a.jpg"), filepath.Join(dir, "c.jpg")
	var seen []string
	err := eachPhoto([]string{b, a, filepath.Join(dir, ".", "b.jpg"), c, a}, func(abs string) error {
		seen = append(seen, abs)
		if abs == a || abs == c {
			return errors.New(filepath.Base(abs) + " refused")
		}
		return nil
	})
	if !slices.Equal(seen, []string{b, a, c}) {
		t.Errorf("checked %v, want b, a, c once each", seen)
	}
	if err == nil || err.Error() != "a.jpg refused\nc.jpg refused" {
		t.Errorf("error %q, want a's then c's", err)
	}
	if err := eachPhoto(nil, func(string) error { t.Error("called without files"); return nil }); err == nil || !strings.Contains(err.Error(), "no files given") {
		t.Errorf("no files: %v", err)
	}
}

// SplitPhotos keeps what Photos takes, sets aside what it refuses by type
// (to go to Drive), and fails on what cannot be read at all.
func TestSplitPhotos(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "dot.png")
	// A 1x1 PNG.
	dot := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")
	notes := filepath.Join(dir, "notes.txt")
	missing := filepath.Join(dir, "gone.jpg")
	if err := os.WriteFile(png, dot, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notes, []byte("a list of things to do\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	photos, refused, why, err := SplitPhotos([]string{notes, png, missing, png})
	if !slices.Equal(photos, []string{png}) || !slices.Equal(refused, []string{notes}) || len(why) != 1 || !errors.Is(why[0], compose.ErrNotForPhotos) {
		t.Errorf("photos %v, refused %v (%v)", photos, refused, why)
	}
	if err == nil || !strings.Contains(err.Error(), "gone.jpg") || strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("a missing file: %v, want it alone", err)
	}
	media, err := CheckPhotos([]string{png, png})
	if err != nil || len(media) != 1 {
		t.Errorf("CheckPhotos of one file named twice: %d, %v", len(media), err)
	}
}
