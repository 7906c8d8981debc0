package cli

import (
	"os"
	"path/filepath"
	"strings"
)

// Opens reports whether args are things to open in the window (files,
// file: URIs, mailto: links: `carrier FILE...`, the desktop entry's
// `carrier %U`) rather than a command. A first argument that is a
// command, a flag, or a plain word that is no file stays a command, so a
// mistyped command is still said to be unknown.
func Opens(args []string) bool {
	if len(args) == 0 {
		return false
	}
	a := args[0]
	switch {
	case a == "" || strings.HasPrefix(a, "-") || Lookup(a) || a == "help" || a == "version":
		return false
	case hasScheme(a, "mailto:") || hasScheme(a, "file:"):
		return true
	case strings.ContainsRune(a, '/') || strings.ContainsRune(a, filepath.Separator):
		return true
	}
	_, err := os.Stat(a)
	return err == nil
}

func hasScheme(s, scheme string) bool {
	return len(s) >= len(scheme) && strings.EqualFold(s[:len(scheme)], scheme)
}

// OpenItems are what the window is handed for args: mailto: links and
// file: URIs as given, paths made full against the folder Carrier was
// started in (the window may run in another).
func OpenItems(args []string) []string {
	items := make([]string, 0, len(args))
	for _, a := range args {
		if hasScheme(a, "mailto:") || hasScheme(a, "file:") {
			items = append(items, a)
			continue
		}
		if abs, err := filepath.Abs(a); err == nil {
			a = abs
		}
		items = append(items, a)
	}
	return items
}
