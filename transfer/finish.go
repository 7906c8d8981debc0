package transfer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// The end of an upload: the server's finishing answer must be the uploaded
// resource (a JSON object, as every Google upload method answers) and, when
// the resource states its size, of the file's size. Anything else (an
// answer cut short, a proxy's page, another object) is not "done".

// checkResource judges a 2xx finishing answer. Its errors never quote the
// body: a fragment is not a resource to show anyone.
func checkResource(a *answer, size int64) error {
	body := bytes.TrimSpace(a.body)
	if len(body) == 0 {
		// A bare 2xx is a server in trouble (one shutting down answers
		// so), not the end of the upload.
		return &finishError{fmt.Sprintf("the server answered %d without the uploaded resource", a.status)}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return &finishError{fmt.Sprintf("the server answered %d with %d bytes that are not the uploaded resource (not a whole JSON object: cut short?)", a.status, len(a.body))}
	}
	if raw, ok := obj["size"]; ok {
		n, ok := jsonInt(raw)
		if !ok {
			return &finishError{fmt.Sprintf("the server answered %d with a resource whose size is unreadable", a.status)}
		}
		if n != size {
			return &finishError{fmt.Sprintf("the server answered %d with a resource of %d bytes, not the file's %d", a.status, n, size)}
		}
	}
	return nil
}

// jsonInt reads an integer that Google's APIs send as a number or, for
// 64-bit values, as a string.
func jsonInt(raw json.RawMessage) (int64, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(raw)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// finalResponse is the finishing answer as the engine reports it.
func finalResponse(a *answer) *Response {
	return &Response{Status: a.status, ContentType: a.header.Get("Content-Type"), Body: a.body, googHash: googHashOf(a.header)}
}
