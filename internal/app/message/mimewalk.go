package message

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"strings"
)

// maxDraftParts bounds the parts a draft may have before it is refused as
// unreadable: a hostile draft must not make the app walk forever.
const maxDraftParts = 1000

// LeafPart is one part of a message that is not itself multipart, its body
// decoded of its transfer encoding.
type LeafPart struct {
	Type   string            // the media type; RFC 2045's text/plain when unreadable
	Params map[string]string // the type's parameters
	Disp   string            // the disposition: "attachment", "inline" or ""
	DParam map[string]string // the disposition's parameters
	Body   io.Reader
}

// WalkLeaves calls visit with each leaf part of a message, in order, at
// most maxDraftParts of them and 20 levels deep. A part visit does not
// read is skipped.
func WalkLeaves(ctype, cte string, body io.Reader, visit func(LeafPart) error) error {
	parts := 0
	var walk func(ctype, cte, disposition string, body io.Reader, depth int) error
	walk = func(ctype, cte, disposition string, body io.Reader, depth int) error {
		if parts++; depth > 20 || parts > maxDraftParts {
			return errors.New("the draft has too many parts to open")
		}
		mt, params, err := mime.ParseMediaType(ctype)
		if err != nil {
			mt, params = "text/plain", nil // RFC 2045's default
		}
		if strings.HasPrefix(mt, "multipart/") {
			mr := multipart.NewReader(body, params["boundary"])
			for {
				p, err := mr.NextRawPart()
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return fmt.Errorf("the draft's parts are unreadable: %w", err)
				}
				if err := walk(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p.Header.Get("Content-Disposition"), p, depth+1); err != nil {
					return err
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(cte)) {
		case "quoted-printable":
			body = quotedprintable.NewReader(body)
		case "base64":
			body = base64.NewDecoder(base64.StdEncoding, &lineless{r: body})
		}
		disp, dparams, _ := mime.ParseMediaType(disposition)
		return visit(LeafPart{Type: mt, Params: params, Disp: disp, DParam: dparams, Body: body})
	}
	return walk(ctype, cte, "", body, 0)
}

// lineless drops the line breaks of base64 text.
type lineless struct{ r io.Reader }

func (l *lineless) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	j := 0
	for _, c := range p[:n] {
		if c != '\r' && c != '\n' {
			p[j] = c
			j++
		}
	}
	return j, err
}
