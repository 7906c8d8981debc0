package sandbox

import (
	"fmt"
	"strconv"
	"strings"
)

// contentRange is a parsed Content-Range request header of a resumable
// session: "bytes FIRST-LAST/TOTAL", with "*" for an unknown total or for
// no bytes at all (a status query).
type contentRange struct {
	Query bool  // "bytes */TOTAL": no bytes carried
	First int64 // valid unless Query
	Last  int64 // inclusive
	Total int64 // -1 when "*"
}

// maxUploadSize bounds every number a client may state, so arithmetic on
// offsets cannot overflow. 1 PiB is far past any Google limit.
const maxUploadSize = 1 << 50

func parseContentRange(s string) (contentRange, error) {
	cr := contentRange{Total: -1}
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "bytes")
	if !ok {
		return cr, fmt.Errorf("Content-Range %q must start with \"bytes \"", s)
	}
	rest = strings.TrimLeft(rest, " =")
	span, total, ok := strings.Cut(rest, "/")
	if !ok {
		return cr, fmt.Errorf("Content-Range %q has no \"/TOTAL\" part (use * while the total is unknown)", s)
	}
	if total != "*" {
		n, err := parseSize(total)
		if err != nil {
			return cr, fmt.Errorf("Content-Range %q: total: %v", s, err)
		}
		cr.Total = n
	}
	if span == "*" {
		cr.Query = true
		return cr, nil
	}
	first, last, ok := strings.Cut(span, "-")
	if !ok {
		return cr, fmt.Errorf("Content-Range %q: expected FIRST-LAST or *", s)
	}
	var err error
	if cr.First, err = parseSize(first); err != nil {
		return cr, fmt.Errorf("Content-Range %q: first byte: %v", s, err)
	}
	if cr.Last, err = parseSize(last); err != nil {
		return cr, fmt.Errorf("Content-Range %q: last byte: %v", s, err)
	}
	if cr.Last < cr.First {
		return cr, fmt.Errorf("Content-Range %q: last byte is before the first", s)
	}
	if cr.Total >= 0 && cr.Last >= cr.Total {
		return cr, fmt.Errorf("Content-Range %q: last byte is past the total", s)
	}
	return cr, nil
}

// parseSize accepts a plain decimal byte count: no sign, no spaces, no hex.
func parseSize(s string) (int64, error) {
	if s == "" || len(s) > 16 {
		return 0, fmt.Errorf("%q is not a byte count", s)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a byte count", s)
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > maxUploadSize {
		return 0, fmt.Errorf("%q is not a byte count this server accepts", s)
	}
	return n, nil
}

// rangeHeader is the Range response header for stored bytes, or "" when
// nothing is stored (Google then sends no Range at all).
func rangeHeader(stored int64) string {
	if stored <= 0 {
		return ""
	}
	return "bytes=0-" + strconv.FormatInt(stored-1, 10)
}
