package transfer

import (
	"net/http"
	"strconv"
	"testing"
)

// FuzzParseRange feeds arbitrary Range headers to the client's reading of
// a 308: it never panics, never yields a negative or overflowing offset,
// and reads back what it would itself accept.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"", "bytes=0-42", "0-42", "bytes=0-0", "bytes=1-5", "bytes=0-", "bytes=0-9223372036854775806", "bytes=0-9223372036854775807", "bytes=0--1", " bytes=0-7 ", "bytes=0-+5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{}
		h.Set("Range", v)
		n, err := parseRange(h)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("Range %q gave offset %d", v, n)
		}
		if n == 0 {
			return // no Range: nothing stored
		}
		h.Set("Range", "bytes=0-"+strconv.FormatInt(n-1, 10))
		if again, err := parseRange(h); err != nil || again != n {
			t.Fatalf("Range %q gave %d, whose canonical form gives %d, %v", v, n, again, err)
		}
	})
}
