package sandbox

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
)

// A JSON answer may carry a whole stored file as a base64url string
// (format=raw, attachments.get): the file is encoded as it is sent, never
// held. The answer is built with a placeholder string where the file goes,
// one no request can know (a random nonce), and the file is streamed in
// its place.

var streamNonce = hex.EncodeToString(randomBytes(12))

// streamedFile is a stored file to send base64url-encoded in place of a
// placeholder string.
type streamedFile struct {
	placeholder string
	path        string // the file; from is where its bytes start
	from        int64
	write       func(w io.Writer) error // instead of path, when set
}

func newStreamedFile(path string) *streamedFile {
	return &streamedFile{placeholder: "\x00" + streamNonce + "\x00" + path, path: path}
}

// writeJSONStreamed writes v as writeJSON does, with each placeholder's
// file in its place. Files are opened before the status is sent, so a
// missing one is still an error answer.
func writeJSONStreamed(w http.ResponseWriter, code int, v any, files ...*streamedFile) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		writeError(w, errorf(500, "backendError", "could not encode the response"))
		return
	}
	opened := map[*streamedFile]*os.File{}
	defer func() {
		for _, f := range opened {
			f.Close()
		}
	}()
	for _, sf := range files {
		if sf.write != nil {
			continue
		}
		f, err := os.Open(sf.path)
		if err != nil {
			writeError(w, errorf(500, "backendError", "the stored bytes are missing: %v", pathless(err)))
			return
		}
		if sf.from > 0 {
			f.Seek(sf.from, io.SeekStart)
		}
		opened[sf] = f
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	bw := bufio.NewWriterSize(w, 64<<10)
	rest := body
	for _, sf := range files {
		quoted, _ := json.Marshal(sf.placeholder)
		i := bytes.Index(rest, quoted)
		if i < 0 {
			continue
		}
		bw.Write(rest[:i+1]) // through the opening quote
		enc := base64.NewEncoder(base64.URLEncoding, bw)
		var err error
		if sf.write != nil {
			err = sf.write(enc)
		} else {
			_, err = io.Copy(enc, opened[sf])
		}
		enc.Close()
		if err != nil {
			// The status is sent: a cut connection is the only way left
			// to say the answer is not whole.
			panic(http.ErrAbortHandler)
		}
		bw.WriteByte('"')
		rest = rest[i+len(quoted):]
	}
	bw.Write(rest)
	bw.WriteByte('\n')
	bw.Flush()
}
