package sandbox

import (
	"bytes"
	"testing"
)

// Each format Photos takes, and the sound and other files it refuses,
// told by their first bytes.
func TestSniffMedia(t *testing.T) {
	ts := make([]byte, 200)
	ts[0], ts[188] = 0x47, 0x47
	bmp := append([]byte("BM\x00\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00\x00\x00"), make([]byte, 40)...)
	cases := []struct {
		name string
		head []byte
		mime string
		kind string
	}{
		{"jpeg", []byte("\xff\xd8\xff\xdb\x00\x43"), "image/jpeg", kindPicture},
		{"png", []byte("\x89PNG\r\n\x1a\n\x00\x00"), "image/png", kindPicture},
		{"gif", []byte("GIF89a\x01\x00"), "image/gif", kindPicture},
		{"webp", []byte("RIFF\x00\x00\x00\x00WEBPVP8 "), "image/webp", kindPicture},
		{"tiff", []byte("II*\x00\x08\x00"), "image/tiff", kindPicture},
		{"bmp", bmp, "image/bmp", kindPicture},
		{"ico", []byte("\x00\x00\x01\x00\x01\x00\x10\x10"), "image/x-icon", kindPicture},
		{"heic", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00"), "image/heic", kindPicture},
		{"heif", []byte("\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00"), "image/heic", kindPicture},
		{"avif", []byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00"), "image/avif", kindPicture},
		{"mp4", []byte("\x00\x00\x00\x20ftypisom\x00\x00\x02\x00"), "video/mp4", kindVideo},
		{"mov", []byte("\x00\x00\x00\x14ftypqt  \x00\x00\x00\x00"), "video/quicktime", kindVideo},
		{"3gp", []byte("\x00\x00\x00\x14ftyp3gp4\x00\x00\x00\x00"), "video/3gpp", kindVideo},
		{"avi", []byte("RIFF\x00\x00\x00\x00AVI LIST"), "video/x-msvideo", kindVideo},
		{"mkv", []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\x82\x88matroska"), "video/x-matroska", kindVideo},
		{"webm", []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\x82\x84webm"), "video/webm", kindVideo},
		{"wmv", []byte("0&\xb2\x75\x8e\x66\xcf\x11\xa6\xd9"), "video/x-ms-wmv", kindVideo},
		{"mpeg", []byte("\x00\x00\x01\xba\x44\x00"), "video/mpeg", kindVideo},
		{"mpeg-ts", ts, "video/mp2t", kindVideo},
		{"mp3 id3", []byte("ID3\x04\x00\x00\x00\x00"), "audio/*", kindAudio},
		{"mp3 frame", []byte("\xff\xfb\x90\x64\x00"), "audio/mpeg", kindAudio},
		{"aac adts", []byte("\xff\xf1\x50\x80"), "audio/mpeg", kindAudio},
		{"m4a", []byte("\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00"), "audio/mp4", kindAudio},
		{"wav", []byte("RIFF\x00\x00\x00\x00WAVEfmt "), "audio/wav", kindAudio},
		{"ogg", []byte("OggS\x00\x02"), "audio/*", kindAudio},
		{"flac", []byte("fLaC\x00\x00"), "audio/*", kindAudio},
		{"text", []byte("BM is how this text starts"), "", ""},
		{"pdf", []byte("%PDF-1.7\n"), "", ""},
		{"zip", []byte("PK\x03\x04"), "", ""},
		{"short ftyp", []byte("\x00\x00\x00\x18ftyp"), "", ""},
		{"empty", nil, "", ""},
		{"zeros", bytes.Repeat([]byte{0}, 64), "", ""},
	}
	for _, c := range cases {
		mime, kind := sniffMedia(c.head)
		if mime != c.mime || kind != c.kind {
			t.Errorf("%s: %q %q, want %q %q", c.name, mime, kind, c.mime, c.kind)
		}
	}
}
