package mailbox

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"carrier/internal/gapi"
	"carrier/transfer"
)

// Mailbox reads what an account's Gmail and Mirror timeline hold, for the
// window's Mailbox: the messages, the drafts, the timeline, a message
// whole, an attachment as it arrives, a timeline item's picture. Every
// read goes through internal/gapi (one read limit, a 401 refreshed once,
// a transient failure tried again); the window talks to no server itself.
type Mailbox struct {
	Root   string              // the API root (the sandbox's)
	Auth   transfer.Authorizer // nil: none
	Client gapi.Doer           // nil: http.DefaultClient
}

// ErrElsewhere says a server named an address on another origin than the
// Mailbox's root: neither its token nor a request goes there (a request
// alone would tell that server the item was opened).
var ErrElsewhere = gapi.ErrElsewhere

// The server's words are "HOST answered 404: ...", as they always were.
func (m Mailbox) api() *gapi.Client {
	return &gapi.Client{Root: m.Root, Auth: m.Auth, HTTP: m.Client}
}

// MailHeader is one header of a message, as Gmail gives it.
type MailHeader struct{ Name, Value string }

// MailPart is one part of a message (format=full), its parts within.
type MailPart struct {
	MimeType string       `json:"mimeType"`
	Filename string       `json:"filename"`
	Headers  []MailHeader `json:"headers"`
	Body     struct {
		AttachmentID string `json:"attachmentId"`
		Size         int64  `json:"size"`
		Data         string `json:"data"`
	} `json:"body"`
	Parts []MailPart `json:"parts"`
}

// Walk calls fn with p, then with each part within, depth first.
func (p *MailPart) Walk(fn func(*MailPart)) {
	fn(p)
	for i := range p.Parts {
		p.Parts[i].Walk(fn)
	}
}

// MailMessage is a message as Gmail gives it: with format=metadata its
// payload holds only the headers asked for.
type MailMessage struct {
	ID           string   `json:"id"`
	ThreadID     string   `json:"threadId"`
	LabelIDs     []string `json:"labelIds"`
	Snippet      string   `json:"snippet"`
	InternalDate string   `json:"internalDate"` // milliseconds since 1970, in decimal
	SizeEstimate int64    `json:"sizeEstimate"`
	Payload      MailPart `json:"payload"`
}

// Header is the value of the message's first header of that name, "" for
// none.
func (mm *MailMessage) Header(name string) string {
	for _, h := range mm.Payload.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// MailDraft names a draft and the message it holds.
type MailDraft struct {
	ID      string `json:"id"`
	Message struct {
		ID string `json:"id"`
	} `json:"message"`
}

// Messages are the ids of the newest messages (at most 100), newest first.
func (m Mailbox) Messages(ctx context.Context) ([]string, error) {
	var list struct {
		Messages []struct{ ID string } `json:"messages"`
	}
	if err := m.api().Do(ctx, gapi.Call{Path: "/gmail/v1/users/me/messages", Query: url.Values{"maxResults": {"100"}}}, &list); err != nil {
		return nil, err
	}
	ids := make([]string, len(list.Messages))
	for i, r := range list.Messages {
		ids[i] = r.ID
	}
	return ids, nil
}

// Metadata is message id's labels, date and the headers named.
func (m Mailbox) Metadata(ctx context.Context, id string, headers ...string) (MailMessage, error) {
	var mm MailMessage
	err := m.api().Do(ctx, gapi.Call{Path: "/gmail/v1/users/me/messages/" + url.PathEscape(id), Query: url.Values{"format": {"metadata"}, "metadataHeaders": headers}}, &mm)
	return mm, err
}

// Message is message id whole (format=full): every part, the bodies of
// the small ones inline, the others named by an attachment id.
func (m Mailbox) Message(ctx context.Context, id string) (MailMessage, error) {
	var mm MailMessage
	err := m.api().Do(ctx, gapi.Call{Path: "/gmail/v1/users/me/messages/" + url.PathEscape(id), Query: url.Values{"format": {"full"}}}, &mm)
	return mm, err
}

// Drafts are the account's drafts.
func (m Mailbox) Drafts(ctx context.Context) ([]MailDraft, error) {
	var drafts struct {
		Drafts []MailDraft `json:"drafts"`
	}
	err := m.api().Get(ctx, "/gmail/v1/users/me/drafts", &drafts)
	return drafts.Drafts, err
}

// Address is the account's own address (Gmail's profile).
func (m Mailbox) Address(ctx context.Context) (string, error) {
	var profile struct {
		EmailAddress string `json:"emailAddress"`
	}
	err := m.api().Get(ctx, "/gmail/v1/users/me/profile", &profile)
	return profile.EmailAddress, err
}

// Timeline is the Mirror timeline's items, as the server gives them.
func (m Mailbox) Timeline(ctx context.Context) ([]map[string]any, error) {
	var tl struct {
		Items []map[string]any `json:"items"`
	}
	err := m.api().Get(ctx, "/mirror/v1/timeline", &tl)
	return tl.Items, err
}

// Content is what an address a server named holds (a timeline
// attachment's contentUrl: a path under the root, or an absolute address),
// read only from the Mailbox's own origin: anywhere else is ErrElsewhere,
// and nothing is asked.
func (m Mailbox) Content(ctx context.Context, address string) ([]byte, error) {
	var b []byte
	err := m.api().Do(ctx, gapi.Call{Method: http.MethodGet, Path: address}, &b)
	return b, err
}

// MailAttachment is a file a message carries.
type MailAttachment struct {
	MsgID string // the message's id (a draft's message, not the draft)
	AttID string // Gmail's attachmentId; empty when the body came inline
	Data  string // the body as base64url, when the server sent it inline
	Name  string // as the message names it
	Size  int64  // decoded bytes, as the server counts them
}

// Attachment is the decoded bytes of a message's attachment as they
// arrive: data when the message carried it inline (base64url), else asked
// of Gmail by its attachment id. Gmail answers attachments.get with the
// bytes as one base64url JSON string, decoded as it is read, nothing held
// but a buffer; an answer longer than size bytes' base64 and 64 KiB of
// other fields is refused before it fills a disk. A read fails with
// ErrNotBase64 or a base64.CorruptInputError where the data is not
// base64url. The caller checks the count against size and closes.
func (m Mailbox) Attachment(ctx context.Context, a MailAttachment) (io.ReadCloser, error) {
	if a.AttID == "" {
		return io.NopCloser(base64.NewDecoder(base64.RawURLEncoding, &jsonString{r: bufio.NewReader(strings.NewReader(a.Data)), inline: true})), nil
	}
	body, err := m.api().Open(ctx, gapi.Call{Path: "/gmail/v1/users/me/messages/" + url.PathEscape(a.MsgID) + "/attachments/" + url.PathEscape(a.AttID)})
	if err != nil {
		return nil, err
	}
	limit := (a.Size+2)/3*4 + 64<<10
	host := m.Root
	if u, err := url.Parse(m.Root); err == nil {
		host = u.Host
	}
	encoded, err := dataField(&capped{r: body, left: limit, host: host})
	if err != nil {
		body.Close()
		return nil, fmt.Errorf("the server's answer for %s: %w", a.Name, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{base64.NewDecoder(base64.RawURLEncoding, encoded), body}, nil
}

// capped reads at most left bytes of r and fails, rather than end early,
// when r holds more.
type capped struct {
	r    io.Reader
	left int64
	host string
}

func (c *capped) Read(b []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("%s answered with more than the attachment's size", c.host)
		}
		if err == nil {
			err = io.EOF
		}
		return 0, err
	}
	if int64(len(b)) > c.left {
		b = b[:c.left]
	}
	n, err := c.r.Read(b)
	c.left -= int64(n)
	return n, err
}

// ErrNotBase64 says an attachment's data holds what base64url never does.
var ErrNotBase64 = errors.New("the attachment's data is not base64url text")

// dataField walks the JSON object r holds up to its "data" member and
// returns that string's text as it is read (still base64url), without
// reading the string whole; members before it are skipped.
func dataField(r io.Reader) (io.Reader, error) {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		if key, _ := t.(string); key == "data" {
			// The decoder has read ahead; what it holds comes first.
			br := bufio.NewReaderSize(io.MultiReader(dec.Buffered(), r), 64<<10)
			for _, want := range []byte{':', '"'} {
				c, err := skipSpace(br)
				if err != nil {
					return nil, fmt.Errorf("not JSON: %w", err)
				}
				if c != want {
					return nil, errors.New("its data is not a JSON string")
				}
			}
			return &jsonString{r: br}, nil
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
	}
	return nil, errors.New("no data in it")
}

func skipSpace(r *bufio.Reader) (byte, error) {
	for {
		c, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, nil
		}
	}
}

// jsonString reads the text of a JSON string whose opening quote is
// behind it, up to its closing quote, for a base64url decoder: escapes
// are undone, the "=" padding Gmail may add is dropped (the decoder reads
// unpadded text), and anything else base64url never holds is refused. An
// inline string (already decoded from its JSON) ends at its end instead.
type jsonString struct {
	r      *bufio.Reader
	inline bool
	padded bool // a "=" came: only more of them may follow
	done   bool
}

func (s *jsonString) Read(p []byte) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) {
		if s.r.Buffered() == 0 {
			if n > 0 {
				return n, nil
			}
			if _, err := s.r.Peek(1); err != nil {
				if err == io.EOF && s.inline {
					s.done = true
					return n, io.EOF
				}
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return n, err
			}
		}
		chunk, _ := s.r.Peek(min(s.r.Buffered(), len(p)-n))
		plain := 0
		for plain < len(chunk) && !s.padded && plainBase64(chunk[plain]) {
			plain++
		}
		n += copy(p[n:], chunk[:plain])
		s.r.Discard(plain)
		if plain < len(chunk) {
			c, err := s.special()
			if err != nil {
				return n, err
			}
			if c != 0 {
				p[n] = c
				n++
			}
			if s.done {
				return n, nil
			}
		}
	}
	return n, nil
}

// plainBase64 reports whether c is a base64url letter, which stands for
// itself in a JSON string.
func plainBase64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// special reads one character that is not a plain letter: the closing
// quote, padding, an escape (JSON may escape any character) or a line
// break; it returns the letter it stands for, or 0 for none.
func (s *jsonString) special() (byte, error) {
	c, err := s.r.ReadByte()
	if err != nil {
		return 0, err
	}
	if c == '\\' && !s.inline {
		e, err := s.r.ReadByte()
		if err != nil {
			return 0, io.ErrUnexpectedEOF
		}
		switch e {
		case 'n', 'r':
			return 0, nil
		case 'u':
			var hex [4]byte
			if _, err := io.ReadFull(s.r, hex[:]); err != nil {
				return 0, io.ErrUnexpectedEOF
			}
			v, err := strconv.ParseUint(string(hex[:]), 16, 16)
			if err != nil || v >= 0x80 {
				return 0, ErrNotBase64
			}
			c = byte(v)
		default:
			return 0, ErrNotBase64
		}
	}
	switch {
	case c == '"' && !s.inline:
		s.done = true
		return 0, nil
	case c == '=':
		s.padded = true
		return 0, nil
	case c == '\n' || c == '\r':
		return 0, nil
	case s.padded || !plainBase64(c):
		return 0, ErrNotBase64
	}
	return c, nil
}
