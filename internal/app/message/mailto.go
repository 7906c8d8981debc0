package message

import (
	"errors"
	"fmt"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"carrier/internal/text"
)

// What another program hands Carrier to send: a mailto: URL (RFC 6068, and
// the attachment forms mail programs take: xdg-email's and Thunderbird's
// attach=/attachment= with a file: URI or an absolute path) or files, by
// path or file: URI. Each becomes fields of Compose; nothing is sent
// without the person. A file named is only looked at (os.Stat), never
// read: the person reads the message before it goes.

// Limits on what a mailto: URL may carry; more is refused whole.
const (
	MaxMailtoURL         = 1 << 20   // the URL as given
	MaxMailtoBody        = 256 << 10 // the body's text, once decoded
	MaxMailtoRecipients  = 500
	MaxMailtoAttachments = 100
)

// OpenRefusal is why something handed to Carrier was not taken: Kind for
// the window to word it, What the part refused (an address, a path, the
// URL shortened).
type OpenRefusal struct {
	Kind OpenRefusalKind
	What string
}

// OpenRefusalKind names why.
type OpenRefusalKind int

const (
	RefusedMalformed OpenRefusalKind = iota // not a mailto: URL as RFC 6068 writes one
	RefusedNotFile                          // an attachment that is not a file on this computer (http:, a remote host)
	RefusedRelative                         // a path that is not absolute, or has .. in it
	RefusedMissing                          // no file there
	RefusedFolder                           // a folder, not a file
	RefusedTooLong                          // over the limits above
	RefusedUnknown                          // neither a file nor a mailto: URL
	RefusedHidden                           // a link's attachment in a hidden folder, or a hidden file
	RefusedSpecial                          // not a plain file (a device, a pipe, a socket)
	RefusedLinkFile                         // a long link's file (app's linkfile.go) not where, or not as, the DLL writes one
)

func (e *OpenRefusal) Error() string {
	switch e.Kind {
	case RefusedNotFile:
		return fmt.Sprintf("%s is not a file on this computer: only files on this computer can be attached", e.What)
	case RefusedRelative:
		return fmt.Sprintf("%s is not a full path (from / without ..): a file to attach must be named in full", e.What)
	case RefusedMissing:
		return fmt.Sprintf("there is no file at %s", e.What)
	case RefusedFolder:
		return fmt.Sprintf("%s is a folder: attach the files in it, or a zip of it", e.What)
	case RefusedTooLong:
		return fmt.Sprintf("the mail link is too long (%s): Carrier takes a body of up to %d KiB, %d recipients and %d attachments", e.What, MaxMailtoBody>>10, MaxMailtoRecipients, MaxMailtoAttachments)
	case RefusedUnknown:
		return fmt.Sprintf("%s is neither a file nor a mailto: link", e.What)
	case RefusedHidden:
		return fmt.Sprintf("%s is hidden (its name or a folder's starts with a dot): a mail link may not attach it; attach it yourself if you mean to send it", e.What)
	case RefusedSpecial:
		return fmt.Sprintf("%s is not a plain file (a device, a pipe or a socket)", e.What)
	case RefusedLinkFile:
		return fmt.Sprintf("the mail link a program left for Carrier was not read (%s): Carrier reads one only from its own private folder", e.What)
	}
	return fmt.Sprintf("%s is not a mail link Carrier can read", e.What)
}

// Shortened is s cut for quoting in a refusal (OpenRefusal.What), made
// printable.
func Shortened(s string) string {
	if utf8.RuneCountInString(s) <= 80 {
		return text.Printable(s)
	}
	r := []rune(s)
	return text.Printable(string(r[:77])) + "…"
}

// ParseMailto reads a mailto: URL into the fields of Compose. Addresses
// come from the path and every to header, cc and bcc from theirs;
// subject and body from the first of each (an encoded word in the subject
// decoded, line breaks made plain); attach and attachment name files, by
// file: URI or absolute path, each checked to exist (and not read).
// Headers RFC 6068 does not make safe (From, In-Reply-To, ...) are
// ignored. Whatever it refuses, it refuses whole, in an *OpenRefusal.
func ParseMailto(raw string) (*Composed, error) {
	bad := func(kind OpenRefusalKind, what string) error { return &OpenRefusal{Kind: kind, What: what} }
	if len(raw) > MaxMailtoURL {
		return nil, bad(RefusedTooLong, fmt.Sprintf("%d bytes", len(raw)))
	}
	scheme, rest, ok := strings.Cut(raw, ":")
	if !ok || !strings.EqualFold(scheme, "mailto") {
		return nil, bad(RefusedMalformed, Shortened(raw))
	}
	// A fragment is no part of a mailto: URL; a browser may leave one.
	rest, _, _ = strings.Cut(rest, "#")
	path, query, _ := strings.Cut(rest, "?")
	c := &Composed{}
	addrs := func(list *[]string, value string) error {
		for _, part := range strings.Split(value, ",") {
			a, err := decodeMailto(part)
			if err != nil {
				return err
			}
			a = strings.TrimSpace(a)
			if a == "" {
				continue
			}
			if strings.ContainsFunc(a, unicode.IsControl) {
				return bad(RefusedMalformed, Shortened(a))
			}
			*list = append(*list, a)
		}
		return nil
	}
	if err := addrs(&c.To, path); err != nil {
		return nil, err
	}
	var subject, body *string
	if query != "" {
		for _, field := range strings.Split(query, "&") {
			if field == "" {
				continue
			}
			rawName, value, _ := strings.Cut(field, "=")
			name, err := decodeMailto(rawName)
			if err != nil {
				return nil, err
			}
			switch strings.ToLower(name) {
			case "to":
				err = addrs(&c.To, value)
			case "cc":
				err = addrs(&c.Cc, value)
			case "bcc":
				err = addrs(&c.Bcc, value)
			case "subject":
				if subject == nil {
					var s string
					if s, err = decodeMailto(value); err == nil {
						subject = &s
					}
				}
			case "body":
				if body == nil {
					var s string
					if s, err = decodeMailto(value); err == nil {
						body = &s
					}
				}
			case "attach", "attachment":
				var s string
				if s, err = decodeMailto(value); err == nil {
					var p string
					if p, err = attachmentPath(s); err == nil {
						if hidden(p) {
							err = bad(RefusedHidden, Shortened(p))
						} else {
							c.Attachments = append(c.Attachments, p)
						}
					}
				}
			}
			if err != nil {
				return nil, err
			}
		}
	}
	if n := len(c.To) + len(c.Cc) + len(c.Bcc); n > MaxMailtoRecipients {
		return nil, bad(RefusedTooLong, fmt.Sprintf("%d recipients", n))
	}
	if len(c.Attachments) > MaxMailtoAttachments {
		return nil, bad(RefusedTooLong, fmt.Sprintf("%d attachments", len(c.Attachments)))
	}
	if subject != nil {
		s := *subject
		// RFC 6068 section 2 lets a subject be an RFC 2047 encoded word.
		if d, err := new(mime.WordDecoder).DecodeHeader(s); err == nil {
			s = d
		}
		// A subject is one line: a break in it would start a header.
		s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' }), " ")
		if strings.ContainsFunc(s, unicode.IsControl) {
			return nil, bad(RefusedMalformed, Shortened(s))
		}
		c.Subject = s
	}
	if body != nil {
		if len(*body) > MaxMailtoBody {
			return nil, bad(RefusedTooLong, fmt.Sprintf("a body of %d KiB", len(*body)>>10))
		}
		text := strings.ReplaceAll(*body, "\r\n", "\n")
		if strings.ContainsFunc(text, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) {
			return nil, bad(RefusedMalformed, "body")
		}
		c.Text = text
	}
	if err := checkFiles(c.Attachments); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeMailto undoes percent-encoding, which in a mailto: URL is all
// there is ('+' is a plus, not a space), and wants UTF-8.
func decodeMailto(s string) (string, error) {
	d, err := url.PathUnescape(s)
	if err != nil || !utf8.ValidString(d) {
		return "", &OpenRefusal{Kind: RefusedMalformed, What: Shortened(s)}
	}
	return d, nil
}

// attachmentPath is the path a file: URI or a plain path names, refused
// when it is anything but a full path on this computer.
func attachmentPath(s string) (string, error) {
	p := s
	if scheme, _, ok := strings.Cut(s, ":"); ok && len(scheme) > 1 && !strings.ContainsAny(scheme, `/\`) {
		if !strings.EqualFold(scheme, "file") {
			return "", &OpenRefusal{Kind: RefusedNotFile, What: Shortened(s)}
		}
		u, err := url.Parse(s)
		if err != nil {
			return "", &OpenRefusal{Kind: RefusedMalformed, What: Shortened(s)}
		}
		if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
			return "", &OpenRefusal{Kind: RefusedNotFile, What: Shortened(s)}
		}
		p = filepath.FromSlash(u.Path)
		if len(p) > 2 && p[0] == '\\' && p[2] == ':' { // file:///C:/x on Windows
			p = p[1:]
		}
	}
	return FullPath(p)
}

// FullPath checks that p names a file by its full path, with no ..
// anywhere in it, and returns it cleaned.
func FullPath(p string) (string, error) {
	if p == "" || !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
		return "", &OpenRefusal{Kind: RefusedRelative, What: Shortened(p)}
	}
	for _, el := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if el == ".." {
			return "", &OpenRefusal{Kind: RefusedRelative, What: Shortened(p)}
		}
	}
	return filepath.Clean(p), nil
}

// hidden reports whether a path has an element that starts with a dot
// (~/.ssh/id_ed25519, ~/.config/...): a link from a web page or another
// program names such a file only to take what the person keeps out of
// sight. The person may still attach it themselves.
func hidden(p string) bool {
	for _, el := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if strings.HasPrefix(el, ".") {
			return true
		}
	}
	return false
}

// checkFiles looks at each file (never reads it): it must be there and
// not be a folder.
func checkFiles(paths []string) error {
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			return &OpenRefusal{Kind: RefusedMissing, What: Shortened(p)}
		case fi.IsDir():
			return &OpenRefusal{Kind: RefusedFolder, What: Shortened(p)}
		case !fi.Mode().IsRegular():
			return &OpenRefusal{Kind: RefusedSpecial, What: Shortened(p)}
		}
	}
	return nil
}

// Opened reads what a second Carrier, the desktop's Open with or a mail
// link hands the window: each item a mailto: URL, a file: URI or a full
// path. The mail links' fields are taken together (recipients added,
// the first subject and body), the files attached after theirs; what is
// refused is said, one refusal each, and the rest is taken.
func Opened(items []string) (*Composed, []error) {
	c := &Composed{}
	var refused []error
	for _, it := range items {
		if len(it) >= 7 && strings.EqualFold(it[:7], "mailto:") {
			m, err := ParseMailto(it)
			if err != nil {
				refused = append(refused, err)
				continue
			}
			c.To = append(c.To, m.To...)
			c.Cc = append(c.Cc, m.Cc...)
			c.Bcc = append(c.Bcc, m.Bcc...)
			if c.Subject == "" {
				c.Subject = m.Subject
			}
			if c.Text == "" {
				c.Text = m.Text
			}
			c.Attachments = appendNew(c.Attachments, m.Attachments...)
			continue
		}
		p, err := attachmentPath(it)
		if err == nil {
			err = checkFiles([]string{p})
		}
		var r *OpenRefusal
		if errors.As(err, &r) && r.Kind == RefusedMalformed {
			err = &OpenRefusal{Kind: RefusedUnknown, What: Shortened(it)}
		}
		if err != nil {
			refused = append(refused, err)
			continue
		}
		c.Attachments = appendNew(c.Attachments, p)
	}
	return c, refused
}

func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		dup := false
		for _, l := range list {
			dup = dup || l == a
		}
		if !dup {
			list = append(list, a)
		}
	}
	return list
}
