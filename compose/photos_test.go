package compose

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Photos' type is read from the bytes, never the name; sound and unknown
// bytes are refused with words; pictures over 200 MB and videos over 20 GB
// are refused before a byte goes (sparse files: nothing is written).
func TestCheckPhotos(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, head string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(head)
		if err := f.Truncate(max(size, int64(len(head)))); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return p
	}
	mp4 := "\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2"
	for _, c := range []struct {
		name, head string
		size       int64
		mime, say  string
		video      bool
	}{
		{"holiday.mp3", "\xff\xd8\xff\xe0", 1000, "image/jpeg", "", false}, // a JPEG, whatever its name
		{"clip.jpg", mp4, 1000, "video/mp4", "", true},
		{"big.jpg", "\xff\xd8\xff\xe0", PhotosPictureLimit, "image/jpeg", "", false},
		{"huge.jpg", "\xff\xd8\xff\xe0", PhotosPictureLimit + 1, "", "huge.jpg is a picture of", false},
		{"long.mp4", mp4, PhotosVideoLimit, "video/mp4", "", true},
		{"longer.mp4", mp4, PhotosVideoLimit + 1, "", "longer.mp4 is a video of", true},
		{"song.jpg", "ID3\x04\x00", 1000, "", "song.jpg is sound", false},
		{"notes.png", "just some words", 0, "", "notes.png is no picture or video", false},
		{"empty.jpg", "", 0, "", "empty.jpg is empty", false},
	} {
		m, err := CheckPhotos(file(c.name, c.head, c.size))
		switch {
		case c.say != "":
			if !errors.Is(err, ErrNotForPhotos) || !strings.Contains(err.Error(), c.say) {
				t.Errorf("%s: %v, want %q", c.name, err, c.say)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case m.MimeType != c.mime || m.Video != c.video || m.Name != c.name:
			t.Errorf("%s: %+v", c.name, m)
		}
	}
}
