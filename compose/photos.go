package compose

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// What Google Photos takes (PROTOCOL.md section 8): pictures up to 200 MB
// and videos up to 20 GB, read as binary units as the sandbox reads them;
// no sound. Photos reads the type from the bytes, never the name, so
// Carrier does too, and refuses before a byte goes what Photos would
// refuse after all of them.
const (
	PhotosPictureLimit = 200 << 20
	PhotosVideoLimit   = 20 << 30
)

// PhotosMedia is a file Google Photos will take.
type PhotosMedia struct {
	Path     string
	Name     string // the file name Photos shows
	Size     int64
	MimeType string // read from the bytes
	Video    bool
}

// ErrNotForPhotos says a file is no picture or video Photos takes.
var ErrNotForPhotos = errors.New("Google Photos does not take this file")

// CheckPhotos reads the file at path's type from its first bytes and
// checks it against Photos' limits.
func CheckPhotos(path string) (*PhotosMedia, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	name := filepath.Base(path)
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a file", name)
	}
	head := make([]byte, 512)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	mt, kind := sniffPhotos(head[:n])
	m := &PhotosMedia{Path: path, Name: name, Size: fi.Size(), MimeType: mt, Video: kind == "video"}
	switch {
	case fi.Size() == 0:
		return nil, fmt.Errorf("%w: %s is empty", ErrNotForPhotos, name)
	case kind == "audio":
		return nil, fmt.Errorf("%w: %s is sound, and Google Photos keeps only pictures and videos", ErrNotForPhotos, name)
	case kind == "":
		return nil, fmt.Errorf("%w: %s is no picture or video Google Photos knows (its bytes say so, whatever its name)", ErrNotForPhotos, name)
	case kind == "picture" && fi.Size() > PhotosPictureLimit:
		return nil, fmt.Errorf("%w: %s is a picture of %s; Google Photos takes pictures up to %s", ErrNotForPhotos, name, HumanSize(fi.Size()), HumanSize(PhotosPictureLimit))
	case kind == "video" && fi.Size() > PhotosVideoLimit:
		return nil, fmt.Errorf("%w: %s is a video of %s; Google Photos takes videos up to %s", ErrNotForPhotos, name, HumanSize(fi.Size()), HumanSize(PhotosVideoLimit))
	}
	return m, nil
}

// sniffPhotos names the type and kind ("picture", "video", "audio", or ""
// for unknown) of a file's first bytes, by their magic numbers.
func sniffPhotos(b []byte) (string, string) {
	has := func(off int, sig string) bool {
		return len(b) >= off+len(sig) && string(b[off:off+len(sig)]) == sig
	}
	switch {
	case has(0, "\xff\xd8\xff"):
		return "image/jpeg", "picture"
	case has(0, "\x89PNG\r\n\x1a\n"):
		return "image/png", "picture"
	case has(0, "GIF87a"), has(0, "GIF89a"):
		return "image/gif", "picture"
	case has(0, "RIFF") && has(8, "WEBP"):
		return "image/webp", "picture"
	case has(0, "RIFF") && has(8, "AVI "):
		return "video/x-msvideo", "video"
	case has(0, "RIFF") && has(8, "WAVE"):
		return "audio/wav", "audio"
	case has(0, "II*\x00"), has(0, "MM\x00*"):
		return "image/tiff", "picture"
	case has(0, "BM") && len(b) >= 18 && bmpInfo(binary.LittleEndian.Uint32(b[14:18])):
		return "image/bmp", "picture"
	case has(4, "ftyp") && len(b) >= 12:
		switch string(b[8:12]) {
		case "heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs", "mif1", "msf1":
			return "image/heic", "picture"
		case "avif", "avis":
			return "image/avif", "picture"
		case "qt  ":
			return "video/quicktime", "video"
		case "M4A ", "M4B ", "M4P ", "F4A ", "F4B ":
			return "audio/mp4", "audio"
		}
		return "video/mp4", "video"
	case has(0, "\x1a\x45\xdf\xa3"):
		if bytes.Contains(b[:min(len(b), 64)], []byte("webm")) {
			return "video/webm", "video"
		}
		return "video/x-matroska", "video"
	case has(0, "0&\xb2\x75\x8e\x66\xcf\x11"):
		return "video/x-ms-wmv", "video"
	case has(0, "\x00\x00\x01\xba"), has(0, "\x00\x00\x01\xb3"):
		return "video/mpeg", "video"
	case len(b) > 188 && b[0] == 0x47 && b[188] == 0x47:
		return "video/mp2t", "video"
	case has(0, "ID3"), has(0, "OggS"), has(0, "fLaC"), has(0, "#!AMR"), has(0, "MThd"):
		return "audio/*", "audio"
	case len(b) >= 2 && b[0] == 0xff && b[1]&0xe0 == 0xe0:
		return "audio/mpeg", "audio"
	}
	return "", ""
}

func bmpInfo(n uint32) bool {
	switch n {
	case 12, 40, 52, 56, 64, 108, 124:
		return true
	}
	return false
}
