package compose

import (
	"io"
	"mime"
	"net/http"
	"path/filepath"
	"strings"
)

// generic types say little about a file: the extension knows better
// (a .docx is a zip, a .csv is text).
var generic = map[string]bool{"application/octet-stream": true, "text/plain": true, "application/zip": true}

// DetectType names a file's media type from its content and its extension.
// The content decides, unless it only says something generic.
func DetectType(r io.ReaderAt, name string) (string, error) {
	head := make([]byte, 512)
	n, err := r.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return "", err
	}
	sniffed := http.DetectContentType(head[:n])
	base, _, _ := mime.ParseMediaType(sniffed)
	if base == "text/plain" && isBinary(head[:n]) {
		sniffed, base = "application/octet-stream", "application/octet-stream"
	}
	if !generic[base] {
		return sniffed, nil
	}
	if byExt := extensionType(name); byExt != "" {
		return byExt, nil
	}
	return sniffed, nil
}

// extensionType has the common types built in, so the answer does not
// depend on the machine's mime.types.
func extensionType(name string) string {
	ext := strings.ToLower(filepath.Ext(name))
	if t, ok := extraTypes[ext]; ok {
		return t
	}
	return mime.TypeByExtension(ext)
}

var extraTypes = map[string]string{
	".eml": "message/rfc822", ".txt": "text/plain; charset=utf-8", ".csv": "text/csv; charset=utf-8", ".md": "text/markdown; charset=utf-8",
	".pdf": "application/pdf", ".zip": "application/zip", ".gz": "application/gzip", ".tar": "application/x-tar", ".7z": "application/x-7z-compressed",
	".doc": "application/msword", ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xls": "application/vnd.ms-excel", ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".ppt": "application/vnd.ms-powerpoint", ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".odt": "application/vnd.oasis.opendocument.text", ".ods": "application/vnd.oasis.opendocument.spreadsheet",
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif", ".webp": "image/webp", ".heic": "image/heic", ".svg": "image/svg+xml",
	".mp3": "audio/mpeg", ".m4a": "audio/mp4", ".aac": "audio/aac", ".wav": "audio/wav", ".ogg": "audio/ogg", ".oga": "audio/ogg", ".opus": "audio/opus", ".flac": "audio/flac",
	".mp4": "video/mp4", ".m4v": "video/mp4", ".mov": "video/quicktime", ".webm": "video/webm", ".mkv": "video/x-matroska", ".avi": "video/x-msvideo", ".3gp": "video/3gpp",
}

// sniff is the media type the content alone suggests, without parameters.
func sniff(r io.ReaderAt) string {
	head := make([]byte, 512)
	n, _ := r.ReadAt(head, 0)
	base, _, _ := mime.ParseMediaType(http.DetectContentType(head[:n]))
	return base
}

// isBinary catches what DetectContentType calls text because it found no
// signature and no control bytes in the first few bytes.
func isBinary(b []byte) bool {
	for _, c := range b {
		if c < 0x09 || c > 0x0d && c < 0x20 && c != 0x1b {
			return true
		}
	}
	return false
}
