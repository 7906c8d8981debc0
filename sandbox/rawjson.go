package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Gmail's metadata URIs carry the whole message inside the JSON, as the
// base64url string "raw" (or "message"."raw"): up to 200 MB of JSON. It is
// read in one pass: the raw string's bytes go through a base64 decoder to
// the caller as they arrive, and only the rest of the document (bounded by
// maxMetadata) is kept, with raw's value replaced by "", for
// json.Unmarshal.

var errNotJSON = errors.New("not JSON")

type rawScanner struct {
	br    *bufio.Reader
	meta  bytes.Buffer
	onRaw func(path string, r io.Reader) error // must read r to its end
	err   error
}

const maxJSONDepth = 64

// scanRawJSON reads one JSON object from br and calls onRaw with the
// decoded bytes of each string at "raw" or "message"."raw".
func scanRawJSON(br *bufio.Reader, onRaw func(path string, r io.Reader) error) ([]byte, error) {
	sc := &rawScanner{br: br, onRaw: onRaw}
	sc.ws()
	if c, err := sc.peek(); err != nil || c != '{' {
		return nil, fmt.Errorf("%w: the body must be a JSON object", errNotJSON)
	}
	if err := sc.value("", 0); err != nil {
		return nil, err
	}
	sc.ws()
	if _, err := br.ReadByte(); err != io.EOF {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: data after the object", errNotJSON)
	}
	return sc.meta.Bytes(), nil
}

func (sc *rawScanner) peek() (byte, error) {
	b, err := sc.br.Peek(1)
	if err != nil {
		if err == io.EOF {
			err = fmt.Errorf("%w: the document ends too early", errNotJSON)
		}
		return 0, err
	}
	return b[0], nil
}

func (sc *rawScanner) emit(b ...byte) error {
	if sc.meta.Len()+len(b) > maxMetadata {
		return fmt.Errorf("%w: besides raw, the request is larger than %d bytes", errNotJSON, maxMetadata)
	}
	sc.meta.Write(b)
	return nil
}

func (sc *rawScanner) ws() {
	for {
		c, err := sc.br.ReadByte()
		if err != nil {
			return
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			sc.br.UnreadByte()
			return
		}
	}
}

func (sc *rawScanner) expect(want byte) error {
	sc.ws()
	c, err := sc.br.ReadByte()
	if err != nil {
		return fmt.Errorf("%w: the document ends too early", errNotJSON)
	}
	if c != want {
		return fmt.Errorf("%w: %q where %q was expected", errNotJSON, c, want)
	}
	return sc.emit(c)
}

// value copies one JSON value; path is where it sits ("" for the top,
// "message" for the object under that key, "raw" and "message.raw" for
// the strings to stream).
// separator reads what follows a member or an element: a comma (more to
// come) or the closing byte (end reports it); anything else is an error.
func (sc *rawScanner) separator(closing byte, where string) (end bool, err error) {
	sc.ws()
	c, err := sc.br.ReadByte()
	if err != nil {
		return false, fmt.Errorf("%w: the document ends too early", errNotJSON)
	}
	if err := sc.emit(c); err != nil {
		return false, err
	}
	if c == closing {
		return true, nil
	}
	if c != ',' {
		return false, fmt.Errorf("%w: %q %s", errNotJSON, c, where)
	}
	return false, nil
}

func (sc *rawScanner) value(path string, depth int) error {
	if depth > maxJSONDepth {
		return fmt.Errorf("%w: nested deeper than %d", errNotJSON, maxJSONDepth)
	}
	sc.ws()
	c, err := sc.peek()
	if err != nil {
		return err
	}
	switch {
	case c == '{':
		sc.br.ReadByte()
		sc.emit('{')
		sc.ws()
		if c, _ := sc.peek(); c == '}' {
			sc.br.ReadByte()
			return sc.emit('}')
		}
		for {
			sc.ws()
			key, err := sc.copyString()
			if err != nil {
				return err
			}
			if err := sc.expect(':'); err != nil {
				return err
			}
			child := "-"
			switch {
			case depth == 0 && (key == "raw" || key == "message"):
				child = key
			case depth == 1 && path == "message" && key == "raw":
				child = "message.raw"
			}
			if err := sc.value(child, depth+1); err != nil {
				return err
			}
			if end, err := sc.separator('}', "after a member"); end || err != nil {
				return err
			}
		}
	case c == '[':
		sc.br.ReadByte()
		sc.emit('[')
		sc.ws()
		if c, _ := sc.peek(); c == ']' {
			sc.br.ReadByte()
			return sc.emit(']')
		}
		for {
			if err := sc.value("-", depth+1); err != nil {
				return err
			}
			if end, err := sc.separator(']', "in an array"); end || err != nil {
				return err
			}
		}
	case c == '"' && (path == "raw" || path == "message.raw"):
		sc.br.ReadByte()
		if err := sc.emit('"', '"'); err != nil {
			return err
		}
		sr := &jsonStringReader{br: sc.br}
		err := sc.onRaw(path, sr)
		if err == nil && !sr.done {
			_, err = io.Copy(io.Discard, sr)
		}
		if err == nil {
			err = sr.err
		}
		return err
	case c == '"':
		_, err := sc.copyString()
		return err
	default:
		// true, false, null, a number: json.Unmarshal checks the spelling.
		n := 0
		for {
			c, err := sc.br.ReadByte()
			if err != nil {
				break
			}
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'E') {
				sc.br.UnreadByte()
				break
			}
			if err := sc.emit(c); err != nil {
				return err
			}
			n++
		}
		if n == 0 {
			return fmt.Errorf("%w: unexpected %q", errNotJSON, c)
		}
		return nil
	}
}

// copyString copies a string verbatim and returns it decoded.
func (sc *rawScanner) copyString() (string, error) {
	c, err := sc.br.ReadByte()
	if err != nil || c != '"' {
		return "", fmt.Errorf("%w: a string was expected", errNotJSON)
	}
	start := sc.meta.Len()
	sc.emit('"')
	escaped := false
	for {
		c, err := sc.br.ReadByte()
		if err != nil {
			return "", fmt.Errorf("%w: a string does not end", errNotJSON)
		}
		if err := sc.emit(c); err != nil {
			return "", err
		}
		if escaped {
			escaped = false
		} else if c == '\\' {
			escaped = true
		} else if c == '"' {
			break
		}
	}
	var s string
	if err := json.Unmarshal(sc.meta.Bytes()[start:], &s); err != nil {
		return "", fmt.Errorf("%w: %v", errNotJSON, err)
	}
	return s, nil
}

// jsonStringReader yields the decoded content of a JSON string whose
// opening quote was read, and stops after its closing quote.
type jsonStringReader struct {
	br   *bufio.Reader
	done bool
	err  error
}

func (r *jsonStringReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.done {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) {
		if n > 0 && r.br.Buffered() == 0 {
			break // hand over what there is rather than wait
		}
		// The common case: a run of plain characters, copied at once.
		if buf, _ := r.br.Peek(max(1, min(r.br.Buffered(), len(p)-n))); len(buf) > 0 {
			k := 0
			for k < len(buf) && buf[k] != '"' && buf[k] != '\\' && buf[k] >= 0x20 {
				k++
			}
			if k > 0 {
				copy(p[n:], buf[:k])
				r.br.Discard(k)
				n += k
				continue
			}
		}
		c, err := r.br.ReadByte()
		if err != nil {
			r.err = fmt.Errorf("%w: raw does not end", errNotJSON)
			if err != io.EOF {
				r.err = err
			}
			return n, r.err
		}
		switch {
		case c == '"':
			r.done = true
			return n, io.EOF
		case c < 0x20:
			r.err = fmt.Errorf("%w: a control character in raw", errNotJSON)
			return n, r.err
		case c != '\\':
			p[n] = c
			n++
			continue
		}
		e, err := r.br.ReadByte()
		if err != nil {
			r.err = fmt.Errorf("%w: raw does not end", errNotJSON)
			return n, r.err
		}
		var out rune
		switch e {
		case '"', '\\', '/':
			out = rune(e)
		case 'b':
			out = '\b'
		case 'f':
			out = '\f'
		case 'n':
			out = '\n'
		case 'r':
			out = '\r'
		case 't':
			out = '\t'
		case 'u':
			var hex [4]byte
			if _, err := io.ReadFull(r.br, hex[:]); err != nil {
				r.err = fmt.Errorf("%w: a broken \\u escape in raw", errNotJSON)
				return n, r.err
			}
			v, err := strconv.ParseUint(string(hex[:]), 16, 16)
			if err != nil {
				r.err = fmt.Errorf("%w: a broken \\u escape in raw", errNotJSON)
				return n, r.err
			}
			out = rune(v)
		default:
			r.err = fmt.Errorf("%w: the escape \\%c in raw", errNotJSON, e)
			return n, r.err
		}
		if out < utf8.RuneSelf {
			p[n] = byte(out)
			n++
		} else {
			// Not base64 in any case: the decoder refuses it.
			p[n] = '!'
			n++
		}
	}
	return n, nil
}

// b64Either turns base64url or standard base64, padded or not, into
// padded standard base64 as it streams, refusing a mix of the two
// alphabets (as decoding with one, then the other, would).
type b64Either struct {
	r        io.Reader
	url, std bool
	held     int   // '=' seen but not yet passed on
	count    int64 // characters passed on, '=' and newlines aside
	eof      bool
	tail     []byte
	err      error
}

func (b *b64Either) Read(p []byte) (int, error) {
	if len(b.tail) > 0 {
		n := copy(p, b.tail)
		b.tail = b.tail[n:]
		return n, nil
	}
	if b.eof {
		return 0, io.EOF
	}
	if b.err != nil {
		return 0, b.err
	}
	buf := p
	if len(buf) > 1 {
		buf = buf[:len(p)/2] // room for held '=' put back
	}
	n, err := b.r.Read(buf)
	var out []byte
	for _, c := range buf[:n] {
		switch c {
		case '=':
			b.held++
			continue
		case '-':
			b.url, c = true, '+'
		case '_':
			b.url, c = true, '/'
		case '+', '/':
			b.std = true
		}
		for ; b.held > 0; b.held-- {
			out = append(out, '=') // '=' inside: the decoder refuses it
		}
		if c != '\r' && c != '\n' {
			b.count++
		}
		out = append(out, c)
	}
	if b.url && b.std {
		b.err = errors.New("it mixes the base64url and base64 alphabets")
		return 0, b.err
	}
	if err == io.EOF {
		// Padding is what decides, not what was sent (as padBase64 does).
		if k := b.count % 4; k != 0 {
			out = append(out, bytes.Repeat([]byte{'='}, int(4-k))...)
		}
		b.eof = true
	} else if err != nil {
		b.err = err
	}
	c := copy(p, out)
	b.tail = out[c:]
	if c == 0 && (b.eof || b.err != nil) {
		if b.eof {
			return 0, io.EOF
		}
		return 0, b.err
	}
	return c, nil
}
