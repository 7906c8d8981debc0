package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// apiError is an error in Google's JSON form. Handlers return it instead of
// writing, so one place decides how errors look on the wire.
type apiError struct {
	Code    int
	Status  string // google.rpc code name, e.g. INVALID_ARGUMENT
	Reason  string // errors[0].reason, e.g. badContent
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Code, e.Status, e.Message) }

func errorf(code int, reason, format string, a ...any) *apiError {
	return &apiError{Code: code, Status: rpcStatus(code), Reason: reason, Message: fmt.Sprintf(format, a...)}
}

func badRequest(format string, a ...any) *apiError {
	return errorf(http.StatusBadRequest, "badRequest", format, a...)
}

func notFound(format string, a ...any) *apiError {
	return errorf(http.StatusNotFound, "notFound", format, a...)
}

func rpcStatus(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404, 410:
		return "NOT_FOUND"
	case 409:
		return "ALREADY_EXISTS"
	case 413:
		return "OUT_OF_RANGE"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "UNIMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if code >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

type errorItem struct {
	Message      string `json:"message"`
	Domain       string `json:"domain"`
	Reason       string `json:"reason"`
	Location     string `json:"location,omitempty"`
	LocationType string `json:"locationType,omitempty"`
}

type errorBody struct {
	Error struct {
		Code    int         `json:"code"`
		Message string      `json:"message"`
		Errors  []errorItem `json:"errors"`
		Status  string      `json:"status"`
	} `json:"error"`
}

// printable shows control characters as \xNN: messages quote what a
// request sent, and a client may print them to a terminal or a window.
func printable(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 }

func writeError(w http.ResponseWriter, e *apiError) {
	var b errorBody
	b.Error.Code = e.Code
	msg := printable(e.Message)
	b.Error.Message = msg
	b.Error.Status = e.Status
	item := errorItem{Message: msg, Domain: "global", Reason: e.Reason}
	if e.Code == http.StatusUnauthorized {
		item.Location, item.LocationType = "Authorization", "header"
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="invalid_token"`)
	}
	b.Error.Errors = []errorItem{item}
	writeJSON(w, e.Code, b)
}

// controlBody reads the body of a request to one of the sandbox's own
// controls (/sandbox/v1/...), at most 4 KiB; a longer or unreadable one is
// refused here, and ok is false.
func controlBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4096))
	if err != nil {
		writeError(w, badRequest("The body is too long or unreadable: %v", err))
		return nil, false
	}
	return body, true
}

// controlFields reads the body of a request to a control (controlBody)
// as a JSON object, its fields left for the caller; a body that is not
// one is refused here, with example, and ok is false.
func controlFields(w http.ResponseWriter, r *http.Request, example string) (in map[string]json.RawMessage, ok bool) {
	body, ok := controlBody(w, r)
	if !ok {
		return nil, false
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, badRequest("The body must be JSON such as %s: %v", example, err))
		return nil, false
	}
	return in, true
}

// apiErrorOr is err when it is an answer of Google's own (*apiError),
// else other.
func apiErrorOr(err error, other *apiError) *apiError {
	if ae, ok := err.(*apiError); ok {
		return ae
	}
	return other
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code = http.StatusInternalServerError
		body = []byte(`{"error":{"code":500,"message":"could not encode the response","status":"INTERNAL"}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	w.Write(body)
	w.Write([]byte("\n"))
}
