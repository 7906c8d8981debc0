//go:build unix && !darwin

package platform

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

const mailtoType = "x-scheme-handler/mailto"

// mimeTool is the desktop's tool for its default apps: xdg-mime, which
// asks the desktop's own (KDE's, GNOME's) where there is one, else gio.
func mimeTool() (string, error) {
	for _, t := range []string{"xdg-mime", "gio"} {
		if p, err := exec.LookPath(t); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: neither xdg-mime (xdg-utils) nor gio is installed", ErrMailAppUnsupported)
}

func canMakeMailApp() bool {
	_, err := mimeTool()
	return err == nil
}

func runMime(tool string, args ...string) (string, error) {
	cmd := exec.Command(tool, args...)
	// gio words its answer in the person's language; C for parsing it.
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("%s %s: %s", tool, strings.Join(args, " "), msg)
	}
	return out.String(), nil
}

// mailtoDefault is the desktop entry that opens mail links, "" for none.
func mailtoDefault(tool string) (string, error) {
	if strings.HasSuffix(tool, "gio") {
		out, err := runMime(tool, "mime", mailtoType)
		if err != nil {
			return "", err
		}
		// Default application for "x-scheme-handler/mailto": foo.desktop
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "Default application for") {
				if i := strings.LastIndex(line, ": "); i >= 0 {
					return strings.TrimSpace(line[i+2:]), nil
				}
			}
		}
		return "", nil
	}
	out, err := runMime(tool, "query", "default", mailtoType)
	return strings.TrimSpace(out), err
}

func makeMailApp(appID string) (MailApp, error) {
	id := appID + ".desktop"
	tool, err := mimeTool()
	if err != nil {
		return MailApp{}, err
	}
	before, err := mailtoDefault(tool)
	if err != nil {
		return MailApp{}, err
	}
	if before == id {
		return MailApp{Before: before, Already: true}, nil
	}
	if strings.HasSuffix(tool, "gio") {
		_, err = runMime(tool, "mime", mailtoType, id)
	} else {
		_, err = runMime(tool, "default", id, mailtoType)
	}
	if err != nil {
		return MailApp{}, err
	}
	after, err := mailtoDefault(tool)
	if err != nil {
		return MailApp{}, err
	}
	if after != id {
		if after == "" {
			after = "no app"
		}
		return MailApp{}, fmt.Errorf("the desktop still opens mail links with %s, not Carrier (%s): is Carrier's desktop entry installed?", after, id)
	}
	return MailApp{Before: before}, nil
}
