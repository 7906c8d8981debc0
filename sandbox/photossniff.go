package sandbox

import (
	"bytes"
	"encoding/binary"
)

// The kinds of media Google Photos tells apart: its limits differ by kind,
// and sound is refused.
const (
	kindPicture = "picture"
	kindVideo   = "video"
	kindAudio   = "audio"
)

// sniffLen is how many leading bytes decide a file's type: MPEG-TS needs
// its second sync byte at 188.
const sniffLen = 512

// sniffMedia reads a file's type from its first bytes (magic numbers),
// never from its name or the type a client declared: Photos stores what
// the bytes are. It returns "" for bytes it does not recognise.
func sniffMedia(b []byte) (mimeType, kind string) {
	has := func(off int, sig string) bool {
		return len(b) >= off+len(sig) && string(b[off:off+len(sig)]) == sig
	}
	switch {
	case has(0, "\xff\xd8\xff"):
		return "image/jpeg", kindPicture
	case has(0, "\x89PNG\r\n\x1a\n"):
		return "image/png", kindPicture
	case has(0, "GIF87a"), has(0, "GIF89a"):
		return "image/gif", kindPicture
	case has(0, "RIFF") && has(8, "WEBP"):
		return "image/webp", kindPicture
	case has(0, "RIFF") && has(8, "AVI "):
		return "video/x-msvideo", kindVideo
	case has(0, "RIFF") && has(8, "WAVE"):
		return "audio/wav", kindAudio
	case has(0, "II*\x00"), has(0, "MM\x00*"):
		// Also the raw formats built on TIFF (DNG, CR2, NEF, ARW).
		return "image/tiff", kindPicture
	case has(0, "BM") && len(b) >= 14 && binary.LittleEndian.Uint32(b[10:14]) < 1<<20 && bmpHeader(b):
		return "image/bmp", kindPicture
	case has(0, "\x00\x00\x01\x00") && len(b) >= 6 && b[4]|b[5] != 0:
		return "image/x-icon", kindPicture
	case has(4, "ftyp"):
		return isoBrand(b)
	case has(0, "\x1a\x45\xdf\xa3"):
		if bytes.Contains(b[:min(len(b), 64)], []byte("webm")) {
			return "video/webm", kindVideo
		}
		return "video/x-matroska", kindVideo
	case has(0, "0&\xb2\x75\x8e\x66\xcf\x11"):
		return "video/x-ms-wmv", kindVideo
	case has(0, "FLV\x01"):
		return "video/x-flv", kindVideo
	case has(0, "\x00\x00\x01\xba"), has(0, "\x00\x00\x01\xb3"):
		return "video/mpeg", kindVideo
	case len(b) > 188 && b[0] == 0x47 && b[188] == 0x47:
		return "video/mp2t", kindVideo
	case has(0, "ID3"), has(0, "OggS"), has(0, "fLaC"), has(0, "#!AMR"), has(0, "MThd"),
		has(0, "FORM") && (has(8, "AIFF") || has(8, "AIFC")):
		return "audio/*", kindAudio
	case len(b) >= 2 && b[0] == 0xff && b[1]&0xe0 == 0xe0:
		// An MPEG audio frame or an ADTS AAC header (JPEG's ff d8 is above).
		return "audio/mpeg", kindAudio
	}
	return "", ""
}

// bmpHeader checks a BMP's info header size, since "BM" alone is two
// letters any text may start with.
func bmpHeader(b []byte) bool {
	if len(b) < 18 {
		return false
	}
	switch binary.LittleEndian.Uint32(b[14:18]) {
	case 12, 40, 52, 56, 64, 108, 124:
		return true
	}
	return false
}

// isoBrand tells the ISO base media files apart by their major brand:
// HEIF and AVIF are pictures, MP4, QuickTime and 3GP videos, M4A sound.
func isoBrand(b []byte) (string, string) {
	if len(b) < 12 {
		return "", ""
	}
	switch string(b[8:12]) {
	case "heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs", "mif1", "msf1":
		return "image/heic", kindPicture
	case "avif", "avis":
		return "image/avif", kindPicture
	case "crx ":
		return "image/x-canon-cr3", kindPicture
	case "qt  ":
		return "video/quicktime", kindVideo
	case "3gp4", "3gp5", "3gp6", "3ge6", "3ge7", "3gg6":
		return "video/3gpp", kindVideo
	case "3g2a", "3g2b", "3g2c":
		return "video/3gpp2", kindVideo
	case "M4A ", "M4B ", "M4P ", "F4A ", "F4B ":
		return "audio/mp4", kindAudio
	}
	return "video/mp4", kindVideo
}
