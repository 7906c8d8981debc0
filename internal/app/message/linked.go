package message

import (
	"bytes"
	"fmt"
	"io"
	"net/mail"
	"regexp"
	"strings"

	"carrier/compose"
)

// The Drive files a draft links to, and whom it goes to, read from the
// draft's raw message (RFC 822): app's draftlinks.go shares them when
// the draft is sent.

// driveViewLink finds a Drive file's id in a link of the form app's
// ViewLink makes.
var driveViewLink = regexp.MustCompile(`/file/d/([A-Za-z0-9_-]+)/view`)

// LinkedFiles are the ids of the Drive files the message raw (RFC 822)
// links to, in its text or HTML, each once.
func LinkedFiles(raw []byte) ([]string, error) {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the draft is not a readable message: %w", err)
	}
	var ids []string
	seen := map[string]bool{}
	err = walkText(m.Header.Get("Content-Type"), m.Header.Get("Content-Transfer-Encoding"), m.Body, func(text []byte) {
		for _, sub := range driveViewLink.FindAllSubmatch(text, -1) {
			if id := string(sub[1]); !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	})
	return ids, err
}

// walkText calls found with each text part's decoded bytes; attachments
// are skipped (a link in an attached file is not the message's).
func walkText(ctype, cte string, body io.Reader, found func([]byte)) error {
	return WalkLeaves(ctype, cte, body, func(p LeafPart) error {
		if p.Disp == "attachment" || p.Type != "text/plain" && p.Type != "text/html" {
			return nil
		}
		text, err := io.ReadAll(io.LimitReader(p.Body, 64<<20))
		if err != nil {
			return fmt.Errorf("the draft's text is unreadable: %w", err)
		}
		found(text)
		return nil
	})
}

// Recipients are the addresses of raw's To, Cc and Bcc, each once.
func Recipients(raw []byte) ([]string, error) {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the draft is not a readable message: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, h := range []string{"To", "Cc", "Bcc"} {
		v := m.Header.Get(h)
		if strings.TrimSpace(v) == "" {
			continue
		}
		list, err := mail.ParseAddressList(v)
		if err != nil {
			return nil, fmt.Errorf("the draft's %s is unreadable: %w", h, err)
		}
		for _, a := range list {
			if k := strings.ToLower(a.Address); !seen[k] {
				seen[k] = true
				out = append(out, a.Address)
			}
		}
	}
	return out, nil
}

// LinkedIn are the ids of the Drive files msg's text or HTML links to,
// each once: the links a draft's new content already holds.
func LinkedIn(msg *compose.Message) []string {
	var ids []string
	seen := map[string]bool{}
	for _, text := range []string{msg.Text, msg.HTML} {
		for _, sub := range driveViewLink.FindAllStringSubmatch(text, -1) {
			if !seen[sub[1]] {
				seen[sub[1]] = true
				ids = append(ids, sub[1])
			}
		}
	}
	return ids
}
