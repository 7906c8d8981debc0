// Package mdsection writes a benchmark's section of a Markdown report
// between its markers, so each bench program replaces its own figures
// and leaves the rest of the document alone.
package mdsection

import (
	"errors"
	"os"
	"strings"
)

// Write puts md into path between the markers begin and end,
// replacing an earlier section, or at the end.
func Write(path, md, begin, end string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	s := string(old)
	if i := strings.Index(s, begin); i >= 0 {
		if j := strings.Index(s[i:], end); j >= 0 {
			s = s[:i] + strings.TrimSuffix(md, "\n") + s[i+j+len(end):]
			return os.WriteFile(path, []byte(s), 0o644)
		}
	}
	if s != "" && !strings.HasSuffix(s, "\n\n") {
		s = strings.TrimRight(s, "\n") + "\n\n"
	}
	return os.WriteFile(path, []byte(s+md), 0o644)
}
