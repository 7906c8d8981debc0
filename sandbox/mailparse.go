package sandbox

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"html"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Reading stored messages the way Gmail presents them: headers in order and
// decoded, a snippet of the text, and the MIME tree as a MessagePart. A
// message Gmail cannot make sense of is still stored; parsing only ever
// degrades to less detail, never to an error.

type header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Bounds on what one message may cost to read, whatever its shape: a
// message is stored whole, but only this much of it is ever parsed.
const (
	maxHeaderBytes = 1 << 20 // read as one part's header
	maxHeaderLines = 1000    // header fields kept per part
	maxParts       = 1000    // MIME parts read per message; the rest is left unparsed
	maxInlinePart  = 1 << 20 // a larger body goes by attachmentId in format=full
	maxInlineTotal = 8 << 20 // all bodies of one format=full answer
	snippetBytes   = 16 << 10
)

var wordDecoder = &mime.WordDecoder{}

// readHeader reads a header block in order, unfolding continuation lines
// and decoding RFC 2047 words.
func readHeader(br *bufio.Reader) ([]header, error) {
	var out []header
	read := 0
	for {
		line, err := br.ReadString('\n')
		read += len(line)
		if read > maxHeaderBytes {
			return out, nil
		}
		trimmed := strings.TrimRight(line, "\r\n")
		if trimmed == "" {
			return out, nil
		}
		if (trimmed[0] == ' ' || trimmed[0] == '\t') && len(out) > 0 {
			if len(out[len(out)-1].Value) < 64<<10 {
				out[len(out)-1].Value += " " + strings.TrimSpace(trimmed)
			}
		} else if len(out) >= maxHeaderLines {
			// read on to the blank line, keeping nothing more
		} else if name, value, ok := strings.Cut(trimmed, ":"); ok {
			out = append(out, header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
		}
		if err != nil {
			return out, err
		}
	}
}

func decodeHeaders(hs []header) []header {
	for i := range hs {
		if d, err := wordDecoder.DecodeHeader(hs[i].Value); err == nil {
			hs[i].Value = d
		}
	}
	return hs
}

func headerValue(hs []header, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// messagePart is Gmail's MessagePart.
type messagePart struct {
	PartID   string         `json:"partId"`
	MimeType string         `json:"mimeType"`
	Filename string         `json:"filename"`
	Headers  []header       `json:"headers"`
	Body     partBody       `json:"body"`
	Parts    []*messagePart `json:"parts,omitempty"`

	text string // decoded text for the snippet (text parts only, bounded)
}

type partBody struct {
	AttachmentID string `json:"attachmentId,omitempty"`
	Size         int64  `json:"size"`
	Data         string `json:"data,omitempty"`
}

// parseOptions say how much of a message to keep.
type parseOptions struct {
	data     bool      // keep base64url bodies of non-attachment parts (within maxInline*)
	wantPart string    // when set, stream the decoded body of this part id to partOut
	partOut  io.Writer // nil: io.Discard
}

type parser struct {
	opt    parseOptions
	parts  int
	inline int64
}

const maxNesting = 32

// parseHook, when set by a test, runs as each parse starts; the function
// it returns runs as the parse ends.
var parseHook func() func()

// parseMessage reads a stored message into a MessagePart tree.
func parseMessage(path string, opt parseOptions) (*messagePart, error) {
	if parseHook != nil {
		defer parseHook()()
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pr := &parser{opt: opt}
	return pr.part(bufio.NewReaderSize(f, 64<<10), "", 0), nil
}

func (pr *parser) part(br *bufio.Reader, id string, depth int) *messagePart {
	pr.parts++
	opt := pr.opt
	hs, _ := readHeader(br)
	hs = decodeHeaders(hs)
	p := &messagePart{PartID: id, Headers: hs}
	if p.Headers == nil {
		p.Headers = []header{}
	}
	ct := headerValue(hs, "Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil {
		mt, params = "text/plain", map[string]string{}
	}
	p.MimeType = mt
	if _, dp, err := mime.ParseMediaType(headerValue(hs, "Content-Disposition")); err == nil && dp["filename"] != "" {
		p.Filename = dp["filename"]
	} else if params["name"] != "" {
		p.Filename = params["name"]
	}
	if strings.HasPrefix(mt, "multipart/") && params["boundary"] != "" && depth < maxNesting {
		mr := multipart.NewReader(br, params["boundary"])
		for i := 0; pr.parts < maxParts; i++ {
			part, err := mr.NextRawPart()
			if err != nil {
				break
			}
			childID := itoa(i)
			if id != "" {
				childID = id + "." + childID
			}
			// Re-read the part's header ourselves to keep its order.
			var buf bytes.Buffer
			for _, k := range sortedKeys(part.Header) {
				for _, v := range part.Header[k] {
					buf.WriteString(k + ": " + v + "\r\n")
				}
			}
			buf.WriteString("\r\n")
			child := pr.part(bufio.NewReader(io.MultiReader(&buf, part)), childID, depth+1)
			p.Parts = append(p.Parts, child)
		}
		return p
	}
	var body io.Reader = br
	switch strings.ToLower(headerValue(hs, "Content-Transfer-Encoding")) {
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, &stripSpace{r: br})
	case "quoted-printable":
		body = quotedprintable.NewReader(br)
	}
	attID := "att" + strings.ReplaceAll(id, ".", "_")
	if opt.wantPart != "" && opt.wantPart == id {
		out := opt.partOut
		if out == nil {
			out = io.Discard
		}
		p.Body.Size, _ = io.Copy(out, body)
		p.Body.AttachmentID = attID
		return p
	}
	isText := strings.HasPrefix(mt, "text/") && p.Filename == ""
	inline := opt.data && p.Filename == ""
	if !isText && !inline {
		p.Body.Size, _ = io.Copy(io.Discard, body)
		if p.Filename != "" {
			p.Body.AttachmentID = attID
		}
		return p
	}
	limit := int64(snippetBytes)
	if inline {
		limit = maxInlinePart
	}
	data, _ := io.ReadAll(io.LimitReader(body, limit+1))
	rest, _ := io.Copy(io.Discard, body)
	p.Body.Size = int64(len(data)) + rest
	if isText {
		p.text = string(data[:min(len(data), snippetBytes)])
	}
	switch {
	case p.Filename != "":
		p.Body.AttachmentID = attID
	case inline && p.Body.Size <= maxInlinePart && pr.inline+p.Body.Size <= maxInlineTotal:
		pr.inline += p.Body.Size
		p.Body.Data = base64.URLEncoding.EncodeToString(data)
	case inline:
		// Gmail too sends a large body by reference.
		p.Body.AttachmentID = attID
	}
	return p
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func sortedKeys(h map[string][]string) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	// Content-Type first reads naturally; the rest alphabetically.
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

// stripSpace drops CR, LF and spaces that base64 bodies are wrapped with.
type stripSpace struct{ r io.Reader }

func (s *stripSpace) Read(p []byte) (int, error) {
	for {
		n, err := s.r.Read(p)
		j := 0
		for _, c := range p[:n] {
			if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
				p[j] = c
				j++
			}
		}
		if j > 0 || err != nil {
			return j, err
		}
	}
}

var (
	tagRE   = regexp.MustCompile(`(?s)<(script|style)[^>]*>.*?</(script|style)>|<[^>]*>`)
	spaceRE = regexp.MustCompile(`\s+`)
)

// snippet is Gmail's: the start of the text, whitespace collapsed,
// HTML-escaped, at most 200 characters.
func snippet(p *messagePart) string {
	text := findText(p, "text/plain")
	if text == "" {
		text = html.UnescapeString(tagRE.ReplaceAllString(findText(p, "text/html"), " "))
	}
	text = strings.TrimSpace(spaceRE.ReplaceAllString(text, " "))
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "")
	}
	if utf8.RuneCountInString(text) > 200 {
		r := []rune(text)
		text = strings.TrimSpace(string(r[:200]))
	}
	return html.EscapeString(text)
}

func findText(p *messagePart, mt string) string {
	if p.MimeType == mt && p.Filename == "" && p.text != "" {
		return p.text
	}
	for _, c := range p.Parts {
		if t := findText(c, mt); t != "" {
			return t
		}
	}
	return ""
}

func findPart(p *messagePart, id string) *messagePart {
	if p.PartID == id {
		return p
	}
	for _, c := range p.Parts {
		if f := findPart(c, id); f != nil {
			return f
		}
	}
	return nil
}

// dateMillis reads the Date header, for internalDateSource=dateHeader.
func dateMillis(hs []header) (int64, bool) {
	t, err := mail.ParseDate(headerValue(hs, "Date"))
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}
