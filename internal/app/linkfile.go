package app

import (
	"carrier/internal/app/message"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// A mail link too long for a command line. Windows starts a program with
// at most 32,767 characters; a program's "Send by email" of many files or
// of a long text makes a longer mailto: link. Carrier's Simple MAPI DLL
// (scripts/windows/mapi) then writes the link to a file of its own in
// MailLinksDir and starts Carrier.exe with MailLinkFileFlag and that
// file's path. Carrier reads it once (ReadMailLinkFile) and removes it,
// whether it takes it or not: only a file directly in that folder, a
// private folder of the person's, and no longer than a link may be.

// MailLinkFileFlag is how the DLL names the file: Carrier.exe
// --mail-link-file PATH.
const MailLinkFileFlag = "--mail-link-file"

// MailLinksDir is the folder the DLL writes long links to, in the data
// folder dataDir (%LOCALAPPDATA%\Carrier on Windows).
func MailLinksDir(dataDir string) string { return filepath.Join(dataDir, "Links from programs") }

// ReadMailLinkFile reads the mail link in path and removes the file. It
// refuses (an *OpenRefusal of kind RefusedLinkFile, and reads nothing) a
// path that is not a plain file directly in MailLinksDir(dataDir), a
// folder that is not private to the person, and a file longer than
// MaxMailtoURL (RefusedTooLong); what it reads is a link for ParseMailto
// to judge.
func ReadMailLinkFile(dataDir, path string) (string, error) {
	refuse := func(why string) error {
		return &message.OpenRefusal{Kind: message.RefusedLinkFile, What: message.Shortened(path) + ": " + why}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", refuse(err.Error())
	}
	dir, err := filepath.Abs(MailLinksDir(dataDir))
	if err != nil {
		return "", refuse(err.Error())
	}
	if pathKey(filepath.Dir(abs)) != pathKey(dir) {
		return "", refuse("not in " + dir)
	}
	if err := checkPrivate(dir); err != nil {
		return "", refuse(err.Error())
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return "", refuse(err.Error())
	}
	if !fi.Mode().IsRegular() {
		return "", refuse("not a plain file")
	}
	// Read once: gone whatever comes of it.
	defer os.Remove(abs)
	if fi.Size() > message.MaxMailtoURL {
		return "", &message.OpenRefusal{Kind: message.RefusedTooLong, What: fmt.Sprintf("%d bytes", fi.Size())}
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", refuse(err.Error())
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, message.MaxMailtoURL+1))
	if err != nil {
		return "", refuse(err.Error())
	}
	if len(data) > message.MaxMailtoURL {
		return "", &message.OpenRefusal{Kind: message.RefusedTooLong, What: fmt.Sprintf("over %d bytes", message.MaxMailtoURL)}
	}
	link := strings.TrimRight(string(data), "\r\n")
	if !hasMailto(link) {
		return "", &message.OpenRefusal{Kind: message.RefusedMalformed, What: message.Shortened(link)}
	}
	return link, nil
}

func hasMailto(s string) bool { return len(s) >= 7 && strings.EqualFold(s[:7], "mailto:") }
