package transfer

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// oneShot sends a media or multipart upload: one request, which cannot be
// asked about afterwards. It is sent again only when the server said it
// failed or when the body never fully left: then it cannot have arrived.
func (up *upload) oneShot(ctx context.Context) (*Response, error) {
	rec := up.rec
	target, err := withUploadType(rec.URL, rec.Type)
	if rec.Type == Call {
		target, err = rec.URL, nil
	}
	if err != nil {
		return nil, &permanent{err}
	}
	sums := ""
	for {
		if _, err := up.waitHeld(ctx); err != nil {
			return nil, err
		}
		if err := up.checkUnchanged(up.f); err != nil {
			return nil, err
		}
		if up.extra != nil && sums == "" {
			// The one request states the file's sums in its header, before
			// its body: here alone they take a pass over the file first
			// (the sending then reads it without hashing it again).
			if err := up.catchUp(ctx, rec.Size); err != nil {
				return nil, err
			}
			sums = up.goog()
		}
		media := up.source(0, rec.Size)
		var src io.Reader = media
		length := rec.Size
		if len(rec.Quote) > 0 {
			filled, err := up.fill(media)
			if err != nil {
				return nil, err
			}
			src, length = bytes.NewReader(filled), int64(len(filled))
		}
		contentType := rec.ContentType
		if rec.Type == Multipart {
			src, length, contentType = multipartBody(rec.Metadata, rec.ContentType, media, rec.Size)
		}
		body := &progressBody{r: src, onRead: func(m int64) { up.sentTo(min(m, rec.Size)) }}
		var rb io.Reader = body
		if length == 0 {
			rb = http.NoBody
		}
		req, err := http.NewRequest(rec.Method, target, rb)
		if err != nil {
			return nil, &permanent{fmt.Errorf("cannot build the request: %w", err)}
		}
		req.ContentLength = length
		req.Header.Set("Content-Type", contentType)
		if sums != "" {
			req.Header.Set("X-Goog-Hash", sums)
		}
		if err := up.authorize(ctx, req, true); err != nil {
			return nil, err
		}
		if err := up.markSent(true); err != nil {
			return nil, err
		}
		up.sent = 0
		a, err := up.exchange(ctx, req, "upload", targetWhere(rec.URL), body)
		if err == nil && a.status/100 == 2 {
			ferr := checkResource(a, rec.Size)
			switch {
			case ferr == nil:
				return finalResponse(a), nil
			case rec.Type != Call:
				// It arrived, most likely, but what the server holds is
				// unknown; this type cannot be asked, nor sent again blindly.
				return nil, &permanent{fmt.Errorf("%w: the server answered %d to the %s upload, %w; this type of upload cannot be asked, so it was not sent again", ErrMaybeSent, a.status, rec.Type, ferr)}
			}
			err = ferr // a call made twice has one effect: make it again
		}
		switch {
		case err == nil:
			// The server refused it: nothing was made.
			err = parseAPIError(a.status, a.body)
			if uerr := up.markSent(false); uerr != nil {
				return nil, uerr
			}
		case body.count() < length:
			// The body never fully left, so the server cannot have made
			// the resource: sending again is safe, now or after a restart.
			if uerr := up.markSent(false); uerr != nil {
				return nil, uerr
			}
		case rec.Type == Call:
			// Its effect is the same made twice: ask again.
		case ctx.Err() == nil:
			return nil, &permanent{fmt.Errorf("%w: the connection failed after the whole %s upload was sent, and this type of upload cannot be asked, so it was not sent again: %w", ErrMaybeSent, rec.Type, err)}
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		switch decide(stepStart, err) {
		case verdictRefresh:
			if err := up.refresh(ctx, err); err != nil {
				return nil, err
			}
		case verdictRetry:
			if err := up.backoff(ctx, err); err != nil {
				return nil, err
			}
		default:
			return nil, err
		}
	}
}

// markSent records, durably, whether the bytes may have gone out.
func (up *upload) markSent(sent bool) error {
	if up.rec.Sent == sent {
		return nil
	}
	return up.keep(true, func(c *Cursor) { c.Sent = sent })
}

// multipartBody streams metadata then media as multipart/related, with an
// exact length so no byte of the media is held in memory.
func multipartBody(meta []byte, mediaType string, media io.Reader, size int64) (io.Reader, int64, string) {
	if len(meta) == 0 {
		meta = []byte("{}") // the form requires two parts; an empty object says "no metadata"
	}
	var b [24]byte
	rand.Read(b[:])
	boundary := "carrier_" + hex.EncodeToString(b[:])
	head := "--" + boundary + "\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n" + string(meta) +
		"\r\n--" + boundary + "\r\nContent-Type: " + mediaType + "\r\n\r\n"
	tail := "\r\n--" + boundary + "--\r\n"
	r := io.MultiReader(bytes.NewReader([]byte(head)), media, bytes.NewReader([]byte(tail)))
	return r, int64(len(head)) + size + int64(len(tail)), "multipart/related; boundary=" + boundary
}

// maxQuoteTemplate bounds a quoting call's template, read into memory: an
// API call's body, not a file.
const maxQuoteTemplate = 4 << 20

// fill reads a quoting call's template and puts each quoted result, as a
// JSON string, where its NUL stands.
func (up *upload) fill(tmpl io.Reader) ([]byte, error) {
	if up.rec.Size > maxQuoteTemplate {
		return nil, &permanent{fmt.Errorf("the call's body is %d bytes; a call that quotes results takes at most %d", up.rec.Size, maxQuoteTemplate)}
	}
	t, err := io.ReadAll(tmpl)
	if err != nil {
		return nil, &permanent{fmt.Errorf("cannot read the call's body: %w", err)}
	}
	parts := bytes.Split(t, []byte{0})
	if len(parts) != len(up.quoted)+1 {
		return nil, &permanent{fmt.Errorf("the call's body has %d places for results but quotes %d jobs", len(parts)-1, len(up.quoted))}
	}
	var b bytes.Buffer
	for i, q := range up.quoted {
		v := bytes.TrimSpace(q)
		if _, field := quoteOf(up.rec.Quote[i]); field != "" && len(v) > 0 {
			var obj map[string]any
			s, ok := "", json.Unmarshal(v, &obj) == nil
			if ok {
				s, ok = obj[field].(string)
			}
			if !ok {
				return nil, &permanent{fmt.Errorf("the result of job %s, which the call quotes, has no string %q", up.rec.Quote[i], field)}
			}
			v = []byte(s)
		}
		if len(v) == 0 {
			return nil, &permanent{fmt.Errorf("job %s, whose result the call quotes, has none", up.rec.Quote[i])}
		}
		js, _ := json.Marshal(string(v))
		b.Write(parts[i])
		b.Write(js)
	}
	b.Write(parts[len(parts)-1])
	return b.Bytes(), nil
}
