package app

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"strings"

	"carrier/compose"
	"carrier/internal/app/message"
	"carrier/internal/platform"
)

// A draft opened in Compose comes back as the person wrote it: its
// recipients, subject and text from the raw message, and each attachment
// written to a file of its own (private, in the state folder's "opened"),
// so that Compose attaches files as it always does and saving or sending
// the draft again builds the message from them.

// openedDir holds the folders of drafts' attachments.
func (q *Queue) openedDir() string {
	if q.kept == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(q.kept), "opened")
}

// OpenDraft reads draft id's raw message (RFC 822, as drafts.get with
// format=raw gives it) into the fields Compose shows, its attachments
// written to files of their own. Saving the result updates the same draft
// (DraftID).
func (q *Queue) OpenDraft(id string, raw []byte) (*message.Composed, error) {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the draft is not a readable message: %w", err)
	}
	dec := new(mime.WordDecoder)
	header := func(name string) string {
		v := m.Header.Get(name)
		if d, err := dec.DecodeHeader(v); err == nil {
			v = d
		}
		return strings.TrimSpace(v)
	}
	c := &message.Composed{Subject: header("Subject"), Method: compose.Draft, DraftID: id}
	for _, f := range []struct {
		name string
		list *[]string
	}{{"To", &c.To}, {"Cc", &c.Cc}, {"Bcc", &c.Bcc}} {
		if v := people(m.Header, f.name); v != "" {
			*f.list = []string{v}
		} else if v := header(f.name); v != "" {
			*f.list = []string{v} // unreadable as addresses: as it is, for the person to mend
		}
	}
	// Attachments stream to their files as the parts are read: a draft
	// near the 35 MiB limit is not held twice in memory.
	var dir string
	used := map[string]bool{}
	fail := func(err error) (*message.Composed, error) {
		if dir != "" {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	attach := func(name string, body io.Reader) error {
		if dir == "" {
			d, err := q.openFolder()
			if err != nil {
				return err
			}
			dir = d
		}
		p := filepath.Join(dir, uniqueName(safeName(name, len(c.Attachments)), used))
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			_, err = io.Copy(f, body)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return fmt.Errorf("cannot write the draft's attachment %s: %w", Printable(name), err)
		}
		c.Attachments = append(c.Attachments, p)
		return nil
	}
	err = message.WalkLeaves(m.Header.Get("Content-Type"), m.Header.Get("Content-Transfer-Encoding"), m.Body, func(p message.LeafPart) error {
		name := p.DParam["filename"]
		if name == "" {
			name = p.Params["name"]
		}
		if d, err := dec.DecodeHeader(name); err == nil {
			name = d
		}
		if p.Disp == "attachment" || name != "" || p.Type != "text/plain" && p.Type != "text/html" {
			return attach(name, p.Body)
		}
		data, err := io.ReadAll(p.Body) // a text part: no larger than raw, in memory already
		if err != nil {
			return fmt.Errorf("the draft's parts are unreadable: %w", err)
		}
		switch {
		case p.Type == "text/plain" && c.Text == "":
			c.Text = strings.ReplaceAll(string(data), "\r\n", "\n")
		case p.Type == "text/html" && c.HTML == "":
			c.HTML = string(data)
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if c.Text != "" {
		// Compose writes an HTML part only for the links' block; the
		// text says the same, and is what the person edits.
		c.HTML = ""
	}
	return c, nil
}

// people is an address header as a person types it: "Name <addr>" with
// the name decoded, or the bare address; "" when it does not parse.
func people(h mail.Header, name string) string {
	list, err := h.AddressList(name)
	if err != nil {
		return ""
	}
	out := make([]string, len(list))
	for i, a := range list {
		switch {
		case a.Name == "":
			out[i] = a.Address
		case strings.ContainsAny(a.Name, `,;:"<>@()[]\.`):
			out[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(a.Name) + `" <` + a.Address + ">"
		default:
			out[i] = a.Name + " <" + a.Address + ">"
		}
	}
	return strings.Join(out, ", ")
}

// openFolder makes a new private folder for one opening's attachments:
// two openings of the same draft never share files.
func (q *Queue) openFolder() (string, error) {
	opened := q.openedDir()
	if opened == "" {
		return "", errors.New("no folder to open the draft's attachments in")
	}
	if err := platform.MkdirPrivate(opened); err != nil {
		return "", fmt.Errorf("cannot make a folder for the draft's attachments: %w", err)
	}
	dir, err := os.MkdirTemp(opened, "draft-*")
	if err != nil {
		return "", fmt.Errorf("cannot make a folder for the draft's attachments: %w", err)
	}
	return dir, nil
}

// safeName is an attachment's name as a file name here: its last element
// only (a name from a message must not reach another folder), without
// characters no system allows.
func safeName(name string, i int) string {
	name = name[strings.LastIndexAny(name, `/\`)+1:]
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`/\:*?"<>|`, r) {
			return '_'
		}
		return r
	}, name)
	name = strings.Trim(name, " .")
	if name == "" {
		return fmt.Sprintf("attachment-%d", i+1)
	}
	if len(name) > 200 {
		ext := filepath.Ext(name)
		if len(ext) > 20 {
			ext = ""
		}
		name = strings.ToValidUTF8(name[:200-len(ext)], "") + ext
	}
	return name
}

// uniqueName is name, or name with a number before its extension when
// another attachment took it.
func uniqueName(name string, used map[string]bool) string {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for n := 2; used[strings.ToLower(name)]; n++ {
		name = fmt.Sprintf("%s (%d)%s", base, n, ext)
	}
	used[strings.ToLower(name)] = true
	return name
}
