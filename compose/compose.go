// Package compose turns what a person writes into the exact bytes Google
// takes: an RFC822 message built with go-message, written once to a private
// spool file whose size and SHA-256 go into the upload job, so a resume
// sends exactly these bytes. It also prepares Mirror timeline items.
package compose

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	netmail "net/mail"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message/mail"

	"carrier/internal/platform"
)

// Method is where a message goes; it decides the size limit.
type Method string

const (
	Send   Method = "send"
	Draft  Method = "draft"
	Insert Method = "insert"
	Import Method = "import"
)

// Limits on the encoded message (PROTOCOL.md section 1): 35 MiB for send
// and drafts, 150 MiB for insert and import.
const (
	LimitSend   = 35 << 20
	LimitInsert = 150 << 20
)

// ParseMethod reads a --as value.
func ParseMethod(s string) (Method, error) {
	switch m := Method(strings.ToLower(strings.TrimSpace(s))); m {
	case Send, Draft, Insert, Import:
		return m, nil
	case "drafts":
		return Draft, nil
	}
	return "", fmt.Errorf("unknown method %q: use send, draft, insert or import", s)
}

// Limit is the largest encoded message the method takes.
func (m Method) Limit() int64 {
	if m == Insert || m == Import {
		return LimitInsert
	}
	return LimitSend
}

// Message is what a person wrote.
type Message struct {
	From        string   // optional: Gmail fills in the account
	To, Cc, Bcc []string // each entry may hold several addresses separated by commas
	ReplyTo     []string
	Subject     string
	Text        string // plain text body, UTF-8
	HTML        string // optional HTML alternative
	Attachments []string
	Links       []Link   // files shared as links (Drive), listed after the text
	InReplyTo   string   // Message-ID of the message replied to, with or without <>
	References  []string // Message-IDs of the thread
	Date        time.Time
	MessageID   string // without <>; generated when empty
}

// Problem is one thing to fix before a message can go.
type Problem struct {
	Field   string // "To", "Subject", "Attachment", "Size", ...
	Message string
}

// InputError lists every problem found, so a person can fix them at once.
type InputError struct{ Problems []Problem }

func (e *InputError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].Field + ": " + e.Problems[0].Message
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems:", len(e.Problems))
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  %s: %s", p.Field, p.Message)
	}
	return b.String()
}

// SizeError says a message is over its method's limit, and by how much.
type SizeError struct {
	Method Method
	Size   int64
	Limit  int64
}

func (e *SizeError) Error() string {
	over := e.Size - e.Limit
	if e.Method == "timeline" {
		return fmt.Sprintf("the file is %s; the timeline takes at most %s: it is %s over", HumanSize(e.Size), HumanSize(e.Limit), HumanSize(over))
	}
	return fmt.Sprintf("the encoded message is %s; %s takes at most %s: remove %s (attachments grow by about a third when encoded, so about %s of files)",
		HumanSize(e.Size), e.Method, HumanSize(e.Limit), HumanSize(over), HumanSize(over*3/4))
}

// HumanSize writes a byte count the way people read it.
func HumanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// ParseAddresses reads one field's entries into addresses, naming the
// entry that does not parse. Addresses must be ASCII: Gmail's API takes
// internationalized domains only in their punycode form.
func ParseAddresses(field string, entries []string) ([]*mail.Address, []Problem) {
	var out []*mail.Address
	var problems []Problem
	for _, e := range entries {
		if strings.TrimSpace(e) == "" {
			continue
		}
		if strings.ContainsAny(e, "\r\n") {
			problems = append(problems, Problem{field, fmt.Sprintf("%q contains a line break", e)})
			continue
		}
		list, err := netmail.ParseAddressList(e)
		if err != nil {
			problems = append(problems, Problem{field, fmt.Sprintf("%q is not an address (%v); write it as name@example.com or Name <name@example.com>", strings.TrimSpace(e), err)})
			continue
		}
		for _, a := range list {
			if !isASCII(a.Address) {
				problems = append(problems, Problem{field, fmt.Sprintf("%q has non-ASCII characters; write the domain in its punycode (xn--) form", a.Address)})
				continue
			}
			if _, domain, _ := strings.Cut(a.Address, "@"); !strings.Contains(strings.Trim(domain, "."), ".") {
				// "gina@example": Go's parser takes it, and Gmail would
				// send it into a bounce; no mail domain on the internet
				// is a single label.
				problems = append(problems, Problem{field, fmt.Sprintf("%q lacks the end of its domain (such as .com); write it as name@example.com", a.Address)})
				continue
			}
			out = append(out, a)
		}
	}
	return out, problems
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Check finds every problem with a message before anything is written.
func (m *Message) Check() error {
	var problems []Problem
	fields := []struct {
		name    string
		entries []string
	}{{"From", []string{m.From}}, {"To", m.To}, {"Cc", m.Cc}, {"Bcc", m.Bcc}, {"Reply-To", m.ReplyTo}}
	recipients := 0
	for _, f := range fields {
		addrs, ps := ParseAddresses(f.name, f.entries)
		problems = append(problems, ps...)
		if f.name == "From" && len(addrs) > 1 {
			problems = append(problems, Problem{"From", "give one sender address"})
		}
		if f.name == "To" || f.name == "Cc" || f.name == "Bcc" {
			recipients += len(addrs)
		}
	}
	if recipients == 0 && len(problems) == 0 {
		problems = append(problems, Problem{"To", "add at least one recipient (To, Cc or Bcc)"})
	}
	for _, h := range []struct{ name, value string }{{"Subject", m.Subject}, {"In-Reply-To", m.InReplyTo}, {"Message-ID", m.MessageID}} {
		if strings.ContainsAny(h.value, "\r\n") {
			problems = append(problems, Problem{h.name, "must be a single line (a line break in a header would let it add headers of its own)"})
		}
	}
	for _, r := range m.References {
		if strings.ContainsAny(r, "\r\n") || strings.TrimSpace(r) == "" {
			problems = append(problems, Problem{"References", fmt.Sprintf("%q is not a Message-ID", r)})
		}
	}
	for _, id := range append([]string{m.InReplyTo, m.MessageID}, m.References...) {
		if id = strings.Trim(strings.TrimSpace(id), "<>"); id != "" && (!strings.Contains(id, "@") || strings.ContainsAny(id, " <>\t")) {
			problems = append(problems, Problem{"Message-ID", fmt.Sprintf("%q is not of the form id@host", id)})
		}
	}
	if !utf8.ValidString(m.Subject) || !utf8.ValidString(m.Text) || !utf8.ValidString(m.HTML) {
		problems = append(problems, Problem{"Body", "is not valid UTF-8"})
	}
	for _, p := range m.Attachments {
		if err := checkReadable(p); err != nil {
			problems = append(problems, Problem{"Attachment", err.Error()})
		}
	}
	for _, l := range m.Links {
		if u, err := url.Parse(l.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.ContainsAny(l.URL, " \r\n\t<>\"") {
			problems = append(problems, Problem{"Link", fmt.Sprintf("%q is not a web address", l.URL)})
		}
	}
	if len(problems) > 0 {
		return &InputError{problems}
	}
	return nil
}

func checkReadable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read %s: %v", path, unwrapPathError(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("cannot read %s: %v", path, unwrapPathError(err))
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a folder; attach the files in it, or a zip of it", path)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	return nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Label names the message for people, in lists of uploads:
// "Subject · to a@example.com, b@example.com".
func (m *Message) Label() string {
	var to []string
	for _, l := range [][]string{m.To, m.Cc, m.Bcc} {
		for _, e := range l {
			if e = strings.TrimSpace(e); e != "" {
				to = append(to, e)
			}
		}
	}
	subj := strings.TrimSpace(m.Subject)
	if subj == "" {
		subj = "(no subject)"
	}
	rcpt := strings.Join(to, ", ")
	if r := []rune(rcpt); len(r) > 60 {
		rcpt = string(r[:57]) + "..."
	}
	return subj + " · to " + rcpt
}

// Spool is a built message on disk. Its bytes never change.
type Spool struct {
	Path   string
	Size   int64
	SHA256 string // hex
}

// Build checks the message, writes it to a new private file in dir, and
// checks its encoded size against the method's limit. Nothing is left
// behind when it fails.
func Build(ctx context.Context, m *Message, method Method, dir string) (*Spool, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	if est := m.EstimateSize(); est > method.Limit()+method.Limit()/50 {
		// Clearly over: refuse before spending time and disk on it.
		return nil, &SizeError{Method: method, Size: est, Limit: method.Limit()}
	}
	if err := platform.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the spool folder %s: %w", dir, err)
	}
	f, err := spoolDisk.create(dir, "msg-*.eml.tmp")
	if err != nil {
		return nil, fmt.Errorf("cannot create a spool file in %s: %w", dir, err)
	}
	final := strings.TrimSuffix(f.Name(), ".tmp")
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(f.Name())
			os.Remove(final) // the name is this build's alone
		}
	}()
	h := sha256.New()
	// The message's writers go down to 76-byte base64 lines and their
	// CRLFs: they reach the file (and the hash) in large blocks, about a
	// thousand times fewer system calls.
	bw := bufio.NewWriterSize(io.MultiWriter(spoolSink(f), h), spoolBuffer)
	// The spool stops at the limit: a file that grew since it was
	// checked (or was swapped for a bigger one) cannot fill the disk.
	cw := &countingWriter{w: bw, limit: method.Limit(), method: method}
	if err := m.WriteTo(ctx, cw); err != nil {
		var se *SizeError
		if errors.As(err, &se) {
			return nil, se
		}
		return nil, err
	}
	if cw.n > method.Limit() {
		return nil, &SizeError{Method: method, Size: cw.n, Limit: method.Limit()}
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("cannot write the spool file: %w", err)
	}
	// The job recorded for this spool keeps its path and, on Linux, its
	// change time (transfer's source identity), and a resume refuses a
	// file whose change time moved. So the file is whole and in place
	// for good before Build returns, and nothing changes it after: its
	// mode is set first (a reminder to everyone that these bytes never
	// change; a failure changes nothing, so it is not one), then the
	// bytes and the mode are synced, the file renamed to its name and the
	// folder synced. The rename moves the change time as well, and goes
	// to the disk with the folder's sync.
	spoolDisk.chmod(f.Name(), 0o400)
	if err := spoolDisk.sync(f); err != nil {
		return nil, fmt.Errorf("cannot write the spool file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("cannot write the spool file: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if err := spoolDisk.rename(f.Name(), final); err != nil {
		return nil, fmt.Errorf("cannot keep the spool file: %w", err)
	}
	if err := spoolDisk.syncDir(dir); err != nil {
		return nil, fmt.Errorf("cannot keep the spool file: %w", err)
	}
	ok = true
	return &Spool{Path: final, Size: cw.n, SHA256: sum}, nil
}

// spoolDisk is how Build makes its file and puts it in place; the
// power-cut test records each step.
var spoolDisk = struct {
	create  func(dir, pattern string) (*os.File, error)
	chmod   func(path string, mode os.FileMode) error
	sync    func(*os.File) error
	rename  func(from, to string) error
	syncDir func(dir string) error
}{platform.CreateTemp, platform.Chmod, platform.SyncFile, platform.DurableRename, platform.SyncDir}

// spoolBuffer is the size of the blocks the spool is written in.
const spoolBuffer = 256 << 10

// spoolSink is the spool file as Build writes to it; tests count the
// writes that reach it.
var spoolSink = func(f *os.File) io.Writer { return f }

type countingWriter struct {
	w      io.Writer
	n      int64
	limit  int64 // 0: none; else writing past it fails with a SizeError
	method Method
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.limit > 0 && c.n+int64(len(p)) > c.limit {
		return 0, &SizeError{Method: c.method, Size: c.n + int64(len(p)), Limit: c.limit}
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteTo writes the message. Attachments stream from disk; memory stays
// flat whatever their size.
func (m *Message) WriteTo(ctx context.Context, w io.Writer) error {
	return m.write(ctx, w, func(mw *mail.Writer) error {
		for _, p := range m.Attachments {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := writeAttachment(ctx, mw, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// TextSize is the size of the message as it would be written, but for
// its attachments' parts: its headers, MIME structure and encoded text
// measured by writing them (a window shows an empty message's true size,
// not a round guess). Each attachment adds EstimateAttachment. It reads
// nothing from disk.
func (m *Message) TextSize() int64 {
	var cw countingWriter
	cw.w = io.Discard
	if err := m.write(context.Background(), &cw, func(*mail.Writer) error { return nil }); err != nil {
		return m.EstimateText()
	}
	return cw.n
}

// write writes the message's headers and text, and attach its
// attachments' parts when it has any.
func (m *Message) write(ctx context.Context, w io.Writer, attach func(*mail.Writer) error) error {
	var h mail.Header
	if err := m.header(&h); err != nil {
		return err
	}
	text, htm := m.bodies()
	if len(m.Attachments) == 0 {
		if htm == "" {
			h.SetContentType("text/plain", map[string]string{"charset": "utf-8"})
			h.Set("Content-Transfer-Encoding", "quoted-printable")
			body, err := mail.CreateSingleInlineWriter(w, h)
			if err != nil {
				return err
			}
			return writeClose(body, text)
		}
		iw, err := mail.CreateInlineWriter(w, h)
		if err != nil {
			return err
		}
		if err := writeAlternatives(iw, text, htm); err != nil {
			return err
		}
		return iw.Close()
	}
	mw, err := mail.CreateWriter(w, h)
	if err != nil {
		return err
	}
	iw, err := mw.CreateInline()
	if err != nil {
		return err
	}
	if err := writeAlternatives(iw, text, htm); err != nil {
		return err
	}
	if err := iw.Close(); err != nil {
		return err
	}
	if err := attach(mw); err != nil {
		return err
	}
	return mw.Close()
}

func writeClose(wc io.WriteCloser, s string) error {
	if _, err := io.WriteString(wc, s); err != nil {
		wc.Close()
		return err
	}
	return wc.Close()
}

func writeAlternatives(iw *mail.InlineWriter, text, htm string) error {
	var th mail.InlineHeader
	th.SetContentType("text/plain", map[string]string{"charset": "utf-8"})
	pw, err := iw.CreatePart(th)
	if err != nil {
		return err
	}
	if err := writeClose(pw, text); err != nil {
		return err
	}
	if htm == "" {
		return nil
	}
	var hh mail.InlineHeader
	hh.SetContentType("text/html", map[string]string{"charset": "utf-8"})
	pw, err = iw.CreatePart(hh)
	if err != nil {
		return err
	}
	return writeClose(pw, htm)
}

func (m *Message) header(h *mail.Header) error {
	set := func(key string, entries []string) {
		addrs, _ := ParseAddresses(key, entries) // Check already vetted them
		if len(addrs) > 0 {
			h.SetAddressList(key, addrs)
		}
	}
	set("From", []string{m.From})
	set("To", m.To)
	set("Cc", m.Cc)
	set("Bcc", m.Bcc) // kept in the raw message: Gmail takes it from there and removes it on delivery
	set("Reply-To", m.ReplyTo)
	if m.Subject != "" {
		h.SetSubject(m.Subject)
	}
	date := m.Date
	if date.IsZero() {
		date = time.Now()
	}
	h.SetDate(date)
	id := strings.Trim(m.MessageID, "<> ")
	if id == "" {
		id = newMessageID(m.From)
	}
	h.SetMessageID(id)
	if r := strings.Trim(m.InReplyTo, "<> "); r != "" {
		h.SetMsgIDList("In-Reply-To", []string{r})
		refs := trimIDs(m.References)
		if len(refs) == 0 || refs[len(refs)-1] != r {
			refs = append(refs, r)
		}
		h.SetMsgIDList("References", refs)
	} else if refs := trimIDs(m.References); len(refs) > 0 {
		h.SetMsgIDList("References", refs)
	}
	h.Set("MIME-Version", "1.0")
	return nil
}

func trimIDs(ids []string) []string {
	var out []string
	for _, id := range ids {
		if id = strings.Trim(id, "<> "); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// newMessageID names the sender's domain, not this machine's host name.
func newMessageID(from string) string {
	domain := "carrier.local"
	if a, err := netmail.ParseAddress(from); err == nil {
		if _, d, ok := strings.Cut(a.Address, "@"); ok && d != "" {
			domain = d
		}
	}
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b) + "@" + domain
}

func writeAttachment(ctx context.Context, mw *mail.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &InputError{[]Problem{{"Attachment", fmt.Sprintf("cannot read %s: %v", path, unwrapPathError(err))}}}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return &InputError{[]Problem{{"Attachment", fmt.Sprintf("cannot read %s: %v", path, unwrapPathError(err))}}}
	}
	size := fi.Size()
	if afterStat != nil {
		afterStat(path)
	}
	mediaType, err := DetectType(f, path)
	if err != nil {
		return &InputError{[]Problem{{"Attachment", fmt.Sprintf("cannot read %s: %v", path, err)}}}
	}
	pw, err := mw.CreateAttachment(attachmentHeader(path, mediaType))
	if err != nil {
		return err
	}
	// At most the size checked, and one byte more to tell a file that
	// grew while it was being read (a log being written): the message
	// carries the file as it was checked, or nothing.
	n, err := io.Copy(pw, io.LimitReader(&ctxReader{ctx: ctx, r: f}, size+1))
	if err != nil {
		pw.Close()
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if n != size {
		pw.Close()
		how := "grew"
		if n < size {
			how = "shrank"
		}
		return &InputError{[]Problem{{"Attachment", fmt.Sprintf("%s %s while it was being attached: attach it once it is no longer being written, or attach a copy", path, how)}}}
	}
	return pw.Close()
}

// attachmentHeader is the header of the part that carries the file at
// path, of type mediaType.
func attachmentHeader(path, mediaType string) mail.AttachmentHeader {
	name := AttachmentName(path)
	var ah mail.AttachmentHeader
	ah.Set("Content-Type", mediaType+"; "+nameParam(name))
	ah.Set("Content-Disposition", "attachment; "+filenameParam(name))
	ah.Set("Content-Transfer-Encoding", "base64")
	return ah
}

// Attachment is a file as a message carries it: what its part needs, read
// once (ReadAttachment), so the message's exact size (EncodedSize) is known
// as often as a window asks without reading the file again.
type Attachment struct {
	Path string
	Size int64 // the file's bytes
	// Type is the file's media type as the part names it (DetectType);
	// "" while it is not known, counted as application/octet-stream.
	Type string
}

// ReadAttachment reads what the part carrying the file at path needs: its
// size and its media type (from its first 512 bytes and its name).
func ReadAttachment(path string) (Attachment, error) {
	f, err := os.Open(path)
	if err != nil {
		return Attachment{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Attachment{}, err
	}
	t, err := DetectType(f, path)
	if err != nil {
		return Attachment{}, err
	}
	return Attachment{Path: path, Size: fi.Size(), Type: t}, nil
}

// EncodedSize is the exact length of the message Build writes when its
// attachments are atts (in place of m.Attachments; their files as read),
// its links and text as they are. It writes the message's headers, text
// and the attachments' part headers, by the code that builds it, to
// nothing, and counts each attachment's base64 lines from its size: it
// reads nothing from disk, so a window may ask it at every keystroke.
func (m *Message) EncodedSize(atts []Attachment) int64 {
	mm := *m
	mm.Attachments = make([]string, len(atts))
	var bodies int64
	for i, a := range atts {
		mm.Attachments[i] = a.Path
		bodies += base64Lines(a.Size)
	}
	cw := countingWriter{w: io.Discard}
	err := mm.write(context.Background(), &cw, func(mw *mail.Writer) error {
		for _, a := range atts {
			pw, err := mw.CreateAttachment(attachmentHeader(a.Path, cmp.Or(a.Type, "application/octet-stream")))
			if err != nil {
				return err
			}
			if err := pw.Close(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil { // nothing the writers refuse reaches them: Check vetted the fields
		n := mm.EstimateText()
		for _, a := range atts {
			n += EstimateAttachment(a.Path, a.Size)
		}
		return n
	}
	return cw.n + bodies
}

// base64Lines is the length of n bytes in base64 as a part carries them:
// lines of 76 characters, a CRLF between two lines and none after the
// last (the part's boundary starts with its own).
func base64Lines(n int64) int64 {
	chars := (n + 2) / 3 * 4
	if chars == 0 {
		return 0
	}
	return chars + (chars-1)/76*2
}

// afterStat lets tests change a file between its size check and its read.
var afterStat func(path string)

// AttachmentName is the name an attachment goes under: the file's own,
// with every control character (C0, DEL, C1), bidirectional override and
// invalid UTF-8 byte made an underscore. A file name may hold a line
// break on Unix, and in a header that would start a header of its own; an
// override would make "gpj.exe" read as "exe.jpg".
func AttachmentName(path string) string {
	name := strings.ToValidUTF8(filepath.Base(path), "_")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return '_'
		}
		return r
	}, name)
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// nameParam is Content-Type's name parameter for old mail readers: plain
// when ASCII, an RFC 2047 encoded word otherwise (what such readers parse).
func nameParam(name string) string {
	if isASCII(name) {
		return `name="` + quoteEscaper.Replace(name) + `"`
	}
	return `name="` + mime.QEncoding.Encode("utf-8", name) + `"`
}

var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// filenameParam is Content-Disposition's filename in RFC 2231 form, split
// into continuations so no header line grows past what folding can fix.
func filenameParam(name string) string {
	if isASCII(name) && !strings.ContainsAny(name, "\"\\") && len(name) <= 60 {
		return `filename="` + name + `"`
	}
	var enc strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0) {
			enc.WriteByte(c)
		} else {
			fmt.Fprintf(&enc, "%%%02X", c)
		}
	}
	s := enc.String()
	if len(s) <= 60 {
		return "filename*=utf-8''" + s
	}
	var parts []string
	for i := 0; len(s) > 0; i++ {
		n := min(60, len(s))
		// Never split a %XX escape.
		if j := strings.LastIndexByte(s[:n], '%'); j >= 0 && j > n-3 {
			n = j
		}
		prefix := ""
		if i == 0 {
			prefix = "utf-8''"
		}
		parts = append(parts, fmt.Sprintf("filename*%d*=%s%s", i, prefix, s[:n]))
		s = s[n:]
	}
	return strings.Join(parts, "; ")
}

// EstimateSize is the encoded size of the message, from file sizes, without
// writing it: base64 turns 57 bytes into a 78-byte line. Build refuses a
// message clearly over its limit by it before writing a byte, and checks
// the exact size as it writes; EncodedSize is the exact size without
// writing the attachments.
func (m *Message) EstimateSize() int64 {
	n := m.EstimateText()
	for _, p := range m.Attachments {
		if fi, err := os.Stat(p); err == nil {
			n += EstimateAttachment(p, fi.Size())
		}
	}
	return n
}

// EstimateText is the encoded size of the message without attachments.
func (m *Message) EstimateText() int64 {
	n := 2048 + qpSize(m.Text) + qpSize(m.HTML) // 2048: headers and MIME structure
	if len(m.Links) > 0 {
		text, htm := m.bodies()
		n = 2048 + qpSize(text) + qpSize(htm)
	}
	return n
}

// EstimateAttachment is what a file of size bytes adds to the message:
// its base64 lines and its part's header, names encoded twice.
func EstimateAttachment(path string, size int64) int64 {
	return Base64Size(size) + 300 + 2*int64(len(filepath.Base(path)))*3
}

// Base64Size is the size of n bytes in base64 with CRLF every 76 characters.
func Base64Size(n int64) int64 {
	chars := (n + 2) / 3 * 4
	return chars + (chars+75)/76*2
}

func qpSize(s string) int64 {
	n := int64(0)
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] == '=' {
			n += 3
		} else {
			n++
		}
	}
	return n + n/75*3
}
