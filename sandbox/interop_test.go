package sandbox_test

// Interop with a client nobody here wrote: the official Go client
// (google.golang.org/api v0.310.0, gmail/v1, mirror/v1, storage/v1) uploads
// through the sandbox with Media(), below its chunk size (one multipart
// request) and above it (a resumable session whose chunks go as POST with
// X-GUploader-No-308: yes), and what the sandbox keeps equals the source
// byte for byte. A tap on the client's transport records what went over the
// wire, so every test also proves which upload path the client really took.

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
	gmail "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
	mirror "google.golang.org/api/mirror/v1"
	"google.golang.org/api/option"
	storage "google.golang.org/api/storage/v1"

	"carrier/sandbox"
)

const (
	interopToken = "test-token"
	// chunk is the chunk size given to the official client: the smallest
	// the protocol allows, so a 1-2 MiB upload takes several chunks.
	chunk = 256 << 10
)

// wireReq is one request the official client sent, with the answer.
type wireReq struct {
	Method       string
	Path         string
	UploadType   string // uploadType query parameter
	Session      bool   // sent to a session URI (has upload_id)
	ContentType  string
	ContentRange string
	No308        string // X-GUploader-No-308
	Status       int    // 0 when no answer came
	Override     string // X-HTTP-Status-Code-Override of the answer
	Err          string // the transport's error when no answer came
}

func (w wireReq) String() string {
	s := fmt.Sprintf("%s %s", w.Method, w.Path)
	if w.UploadType != "" {
		s += " uploadType=" + w.UploadType
	}
	if w.Session {
		s += " (session)"
	}
	if w.ContentRange != "" {
		s += " Content-Range: " + w.ContentRange
	}
	if w.Err != "" {
		return s + " -> " + w.Err
	}
	s += fmt.Sprintf(" -> %d", w.Status)
	if w.Override != "" {
		s += " override " + w.Override
	}
	return s
}

// wireTap is the official client's transport: it adds the bearer token
// (as an oauth2 transport would) and records every exchange.
type wireTap struct {
	base  http.RoundTripper
	token string

	mu   sync.Mutex
	reqs []wireReq
}

func (t *wireTap) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+t.token)
	q := r.URL.Query()
	rec := wireReq{
		Method: r.Method, Path: r.URL.Path, UploadType: q.Get("uploadType"), Session: q.Has("upload_id"),
		ContentType: r.Header.Get("Content-Type"), ContentRange: r.Header.Get("Content-Range"),
		No308: r.Header.Get("X-GUploader-No-308"),
	}
	resp, err := t.base.RoundTrip(r2)
	if err != nil {
		rec.Err = err.Error()
	}
	if resp != nil {
		rec.Status = resp.StatusCode
		rec.Override = resp.Header.Get("X-HTTP-Status-Code-Override")
	}
	t.mu.Lock()
	t.reqs = append(t.reqs, rec)
	t.mu.Unlock()
	return resp, err
}

// uploads returns the recorded upload requests (media URIs and session
// URIs) and forgets everything recorded so far.
func (t *wireTap) uploads() []wireReq {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []wireReq
	for _, r := range t.reqs {
		if strings.HasPrefix(r.Path, "/upload/") {
			out = append(out, r)
		}
	}
	t.reqs = nil
	return out
}

func (t *wireTap) reset() {
	t.mu.Lock()
	t.reqs = nil
	t.mu.Unlock()
}

type interop struct {
	sb      *sandbox.Sandbox
	srv     *httptest.Server
	tap     *wireTap
	gmail   *gmail.Service
	mirror  *mirror.Service
	storage *storage.Service
}

func newInterop(t *testing.T) *interop {
	t.Helper()
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: interopToken})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(func() { sb.Close() }) // runs first, releasing any injected stall
	tap := &wireTap{base: srv.Client().Transport, token: interopToken}
	hc := &http.Client{Transport: tap}
	ctx := context.Background()
	// gmail/v1's BasePath is the host root ("https://gmail.googleapis.com/");
	// mirror/v1 and storage/v1 carry their API path in it, so the endpoint
	// must too for their metadata calls (their media URIs are absolute
	// paths, /upload/..., and land on the host root either way).
	gs, err := gmail.NewService(ctx, option.WithEndpoint(srv.URL+"/"), option.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := mirror.NewService(ctx, option.WithEndpoint(srv.URL+"/mirror/v1/"), option.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	ss, err := storage.NewService(ctx, option.WithEndpoint(srv.URL+"/storage/v1/"), option.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return &interop{sb: sb, srv: srv, tap: tap, gmail: gs, mirror: ms, storage: ss}
}

// checkMultipart asserts that one multipart request carried the upload.
func checkMultipart(t *testing.T, reqs []wireReq, method string) {
	t.Helper()
	if len(reqs) != 1 || reqs[0].Method != method || reqs[0].UploadType != "multipart" ||
		!strings.HasPrefix(reqs[0].ContentType, "multipart/related") || reqs[0].Status != http.StatusOK {
		t.Fatalf("want one %s uploadType=multipart (multipart/related) answered 200; the wire saw:\n%s", method, wireDump(reqs))
	}
}

// checkResumable asserts the official client's resumable shape: a session
// started with initMethod, then at least minChunks chunks sent as POST with
// X-GUploader-No-308, answered 200 + X-HTTP-Status-Code-Override: 308 until
// the last, which gets finalStatus (Gmail and Mirror: 201 after POST, 200
// after PUT; Cloud Storage: 200 always).
func checkResumable(t *testing.T, reqs []wireReq, initMethod string, minChunks, finalStatus int) {
	t.Helper()
	fail := func(why string) {
		t.Helper()
		t.Fatalf("%s; the wire saw:\n%s", why, wireDump(reqs))
	}
	if len(reqs) < 1+minChunks {
		fail(fmt.Sprintf("want a session start and at least %d chunks", minChunks))
	}
	start, chunks := reqs[0], reqs[1:]
	if start.Method != initMethod || start.UploadType != "resumable" || start.Session || start.Status != http.StatusOK {
		fail(fmt.Sprintf("want the session started by %s uploadType=resumable answered 200", initMethod))
	}
	for i, c := range chunks {
		if !c.Session || c.Method != http.MethodPost || c.No308 != "yes" || c.ContentRange == "" {
			fail(fmt.Sprintf("chunk %d: want POST to the session URI with X-GUploader-No-308: yes and Content-Range", i))
		}
		last := i == len(chunks)-1
		switch {
		case !last && (c.Status != http.StatusOK || c.Override != "308"):
			fail(fmt.Sprintf("chunk %d: want 200 with X-HTTP-Status-Code-Override: 308", i))
		case last && (c.Status != finalStatus || c.Override != ""):
			fail(fmt.Sprintf("last chunk: want %d with no status override", finalStatus))
		}
	}
	if want := fmt.Sprintf("bytes 0-%d/*", chunk-1); len(chunks) > 1 && chunks[0].ContentRange != want {
		fail(fmt.Sprintf("first chunk: want Content-Range %q", want))
	}
}

// failedAttempts splits off the attempts that failed: answered 5xx, or not
// answered at all (a server that answers before reading a body may make
// the client's write fail first). The official client sends those again.
func failedAttempts(reqs []wireReq) (ok []wireReq, failed int) {
	for _, r := range reqs {
		if r.Status >= 500 || r.Status == 0 {
			failed++
			continue
		}
		ok = append(ok, r)
	}
	return ok, failed
}

func wireDump(reqs []wireReq) string {
	var b strings.Builder
	for _, r := range reqs {
		b.WriteString("  " + r.String() + "\n")
	}
	if b.Len() == 0 {
		return "  (no upload request)\n"
	}
	return b.String()
}

func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Fatalf("%s: %d bytes read back, %d sent; first difference at byte %d", what, len(got), len(want), i)
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed*0x9e3779b97f4a7c15+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// mailDate is the Date header of every test message.
var mailDate = time.Date(2026, 3, 3, 10, 20, 30, 0, time.FixedZone("", 3600))

// buildMail makes an RFC 822 message with CRLF lines: a text body, and
// when attach > 0 an attachment of that many random bytes (base64).
func buildMail(subject, text string, attach int, seed uint64) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: Carrier Interop <%s>\r\n", sandbox.DefaultAccount)
	b.WriteString("To: friend@example.com\r\n")
	fmt.Fprintf(&b, "Subject: %s\r\n", subject)
	fmt.Fprintf(&b, "Date: %s\r\n", mailDate.Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: <interop-%d@carrier.test>\r\n", seed)
	b.WriteString("MIME-Version: 1.0\r\n")
	if attach == 0 {
		b.WriteString("Content-Type: text/plain; charset=UTF-8\r\n\r\n")
		b.WriteString(text + "\r\n")
		return b.Bytes()
	}
	const boundary = "interop-boundary-7b1c"
	fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=%q\r\n\r\n", boundary)
	fmt.Fprintf(&b, "--%s\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n%s\r\n", boundary, text)
	fmt.Fprintf(&b, "--%s\r\nContent-Type: application/octet-stream\r\n", boundary)
	b.WriteString("Content-Disposition: attachment; filename=\"data.bin\"\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	enc := base64.StdEncoding.EncodeToString(randomBytes(seed, attach))
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	b.WriteString(enc + "\r\n")
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return b.Bytes()
}

// makePNG encodes a w x h image of noise: a real PNG whose size is
// about 4*w*h bytes, since noise does not compress.
func makePNG(t *testing.T, w, h int, seed uint64) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	px := randomBytes(seed, 4*w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := 4 * (y*w + x)
			img.SetNRGBA(x, y, color.NRGBA{px[i], px[i+1], px[i+2], px[i+3]})
		}
	}
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.NoCompression}
	if err := enc.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func apiError(t *testing.T, err error, code int) *googleapi.Error {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("want a *googleapi.Error with code %d, got %v", code, err)
	}
	if ge.Code != code {
		t.Fatalf("want code %d, got %d: %v", code, ge.Code, ge)
	}
	return ge
}

var mailType = googleapi.ContentType("message/rfc822")

// rawMessage reads a message back with format=raw and decodes it.
func (e *interop) rawMessage(t *testing.T, id string) (*gmail.Message, []byte) {
	t.Helper()
	m, err := e.gmail.Users.Messages.Get("me", id).Format("raw").Do()
	if err != nil {
		t.Fatalf("messages.get %s format=raw: %v", id, err)
	}
	raw, err := base64.URLEncoding.DecodeString(m.Raw)
	if err != nil {
		t.Fatalf("messages.get %s: raw is not base64url: %v", id, err)
	}
	return m, raw
}

// gmailUpload is one of the six Gmail upload methods, called through the
// official client. prepare (optional) runs before, e.g. to create the
// draft that drafts.update and drafts.send need.
type gmailUpload struct {
	name       string
	initMethod string   // HTTP method of the media URI
	labels     []string // labelIds the resulting message must carry
	isDraft    bool     // the method answers a Draft
	prepare    func(t *testing.T, e *interop) (draftID string)
	call       func(e *interop, draftID string, mail []byte, opts ...googleapi.MediaOption) (*gmail.Message, *gmail.Draft, error)
}

func createDraft(t *testing.T, e *interop) string {
	t.Helper()
	d, err := e.gmail.Users.Drafts.Create("me", &gmail.Draft{}).
		Media(bytes.NewReader(buildMail("first version", "The draft before the update.", 0, 99)), mailType).Do()
	if err != nil {
		t.Fatalf("drafts.create (setup): %v", err)
	}
	return d.Id
}

var gmailUploads = []gmailUpload{
	{name: "messages.send", initMethod: "POST", labels: []string{"SENT"},
		call: func(e *interop, _ string, mail []byte, opts ...googleapi.MediaOption) (*gmail.Message, *gmail.Draft, error) {
			m, err := e.gmail.Users.Messages.Send("me", &gmail.Message{}).Media(bytes.NewReader(mail), opts...).Do()
			return m, nil, err
		}},
	{name: "messages.insert", initMethod: "POST", labels: []string{"INBOX", "UNREAD"},
		call: func(e *interop, _ string, mail []byte, opts ...googleapi.MediaOption) (*gmail.Message, *gmail.Draft, error) {
			m, err := e.gmail.Users.Messages.Insert("me", &gmail.Message{}).Media(bytes.NewReader(mail), opts...).Do()
			return m, nil, err
		}},
	{name: "messages.import", initMethod: "POST", labels: []string{"INBOX", "UNREAD"},
		call: func(e *interop, _ string, mail []byte, opts ...googleapi.MediaOption) (*gmail.Message, *gmail.Draft, error) {
			m, err := e.gmail.Users.Messages.Import("me", &gmail.Message{}).Media(bytes.NewReader(mail), opts...).Do()
			return m, nil, err
		}},
	{name: "drafts.create", initMethod: "POST", labels: []string{"DRAFT"}, isDraft: true,
		call: func(e *interop, _ string, mail []byte, opts ...googleapi.MediaOption) (*gmail.Message, *gmail.Draft, error) {
			d, err := e.gmail.Users.Drafts.Create("me", &gmail.Draft{}).Media(bytes.NewReader(mail), opts...).Do()
			if err != nil {
				return nil, nil, err
			}
			return d.Message, d, nil
		}},
	{name: "drafts.update", initMethod: "PUT", labels: []string{"DRAFT"}, isDraft: true, prepare: createDraft,
		call: func(e *interop, id string, mail []byte, opts ...googleapi.MediaOption) (*gmail.Message, *gmail.Draft, error) {
			d, err := e.gmail.Users.Drafts.Update("me", id, &gmail.Draft{Id: id}).Media(bytes.NewReader(mail), opts...).Do()
			if err != nil {
				return nil, nil, err
			}
			return d.Message, d, nil
		}},
	{name: "drafts.send", initMethod: "POST", labels: []string{"SENT"}, prepare: createDraft,
		call: func(e *interop, id string, mail []byte, opts ...googleapi.MediaOption) (*gmail.Message, *gmail.Draft, error) {
			m, err := e.gmail.Users.Drafts.Send("me", &gmail.Draft{Id: id}).Media(bytes.NewReader(mail), opts...).Do()
			return m, nil, err
		}},
}

// TestInteropGmailUploads sends a message through each of the six Gmail
// upload methods, below the client's chunk size (multipart) and above it
// (resumable), and reads it back byte for byte.
func TestInteropGmailUploads(t *testing.T) {
	t.Parallel()
	sizes := []struct {
		name   string
		attach int
		opts   []googleapi.MediaOption
	}{
		// Below the chunk size the client sends one multipart request.
		{"multipart", 3 << 10, []googleapi.MediaOption{mailType}},
		// ~1.4 MiB of message in 256 KiB chunks: six chunks.
		{"resumable", 1 << 20, []googleapi.MediaOption{mailType, googleapi.ChunkSize(chunk)}},
	}
	for i, m := range gmailUploads {
		for j, size := range sizes {
			t.Run(m.name+"/"+size.name, func(t *testing.T) {
				t.Parallel()
				e := newInterop(t)
				var draftID string
				if m.prepare != nil {
					draftID = m.prepare(t, e)
				}
				text := fmt.Sprintf("Hello from the official Go client, %s over %s.", m.name, size.name)
				mail := buildMail("interop "+m.name, text, size.attach, uint64(10*i+j))
				e.tap.reset()
				msg, draft, err := m.call(e, draftID, mail, size.opts...)
				if err != nil {
					t.Fatalf("%s: %v", m.name, err)
				}
				reqs := e.tap.uploads()
				if size.name == "multipart" {
					checkMultipart(t, reqs, m.initMethod)
				} else {
					final := http.StatusCreated
					if m.initMethod == http.MethodPut {
						final = http.StatusOK
					}
					checkResumable(t, reqs, m.initMethod, len(mail)/chunk, final)
				}
				if msg == nil || msg.Id == "" {
					t.Fatalf("%s answered no message id: %+v", m.name, msg)
				}
				if !slices.Equal(msg.LabelIds, m.labels) {
					t.Errorf("%s answered labelIds %v, want %v", m.name, msg.LabelIds, m.labels)
				}
				if msg.ThreadId != msg.Id {
					t.Errorf("a new conversation: want threadId == id (%s), got %q", msg.Id, msg.ThreadId)
				}
				if m.isDraft {
					if draft.Id == "" {
						t.Fatalf("%s answered no draft id", m.name)
					}
					if draftID != "" && draft.Id != draftID {
						t.Errorf("drafts.update answered draft %s, want %s", draft.Id, draftID)
					}
				}

				got, raw := e.rawMessage(t, msg.Id)
				sameBytes(t, m.name+" raw", raw, mail)
				if !slices.Equal(got.LabelIds, m.labels) {
					t.Errorf("messages.get labelIds %v, want %v", got.LabelIds, m.labels)
				}
				if got.ThreadId != msg.ThreadId {
					t.Errorf("messages.get threadId %q, upload answered %q", got.ThreadId, msg.ThreadId)
				}
				if got.Snippet != text {
					t.Errorf("snippet %q, want the text body %q", got.Snippet, text)
				}
				if got.SizeEstimate != int64(len(mail)) {
					t.Errorf("sizeEstimate %d, want %d", got.SizeEstimate, len(mail))
				}
				if got.HistoryId == 0 || got.InternalDate == 0 {
					t.Errorf("want historyId and internalDate set, got %d and %d", got.HistoryId, got.InternalDate)
				}
				if m.isDraft {
					d, err := e.gmail.Users.Drafts.Get("me", draft.Id).Format("raw").Do()
					if err != nil {
						t.Fatalf("drafts.get: %v", err)
					}
					if d.Message == nil || d.Message.Id != msg.Id {
						t.Fatalf("drafts.get %s: message %+v, want id %s", draft.Id, d.Message, msg.Id)
					}
					raw, err := base64.URLEncoding.DecodeString(d.Message.Raw)
					if err != nil {
						t.Fatal(err)
					}
					sameBytes(t, "drafts.get raw", raw, mail)
				}
				if draftID != "" && !m.isDraft {
					// drafts.send: the draft is gone once sent.
					_, err := e.gmail.Users.Drafts.Get("me", draftID).Do()
					apiError(t, err, http.StatusNotFound)
				}
			})
		}
	}
}

// TestInteropGmailConversation follows one conversation: a message sent,
// a reply in its thread, a draft reply that is updated and then sent,
// an inserted and an imported message, the labels and the profile.
func TestInteropGmailConversation(t *testing.T) {
	t.Parallel()
	e := newInterop(t)
	u := e.gmail.Users

	first, err := u.Messages.Send("me", &gmail.Message{}).
		Media(bytes.NewReader(buildMail("plans", "Shall we meet on Friday?", 0, 1)), mailType).Do()
	if err != nil {
		t.Fatal(err)
	}
	thread := first.ThreadId

	// A reply names the thread in the metadata.
	reply, err := u.Messages.Send("me", &gmail.Message{ThreadId: thread}).
		Media(bytes.NewReader(buildMail("Re: plans", "Friday works.", 0, 2)), mailType).Do()
	if err != nil {
		t.Fatal(err)
	}
	if reply.ThreadId != thread || reply.Id == first.Id {
		t.Fatalf("reply: id %s thread %s, want a new id in thread %s", reply.Id, reply.ThreadId, thread)
	}

	// A draft reply in the same thread, updated (resumable, through PUT),
	// then sent.
	d, err := u.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{ThreadId: thread}}).
		Media(bytes.NewReader(buildMail("Re: plans", "Draft: bring the maps.", 0, 3)), mailType).Do()
	if err != nil {
		t.Fatal(err)
	}
	if d.Message.ThreadId != thread || !slices.Equal(d.Message.LabelIds, []string{"DRAFT"}) {
		t.Fatalf("drafts.create: thread %s labels %v, want thread %s labels [DRAFT]", d.Message.ThreadId, d.Message.LabelIds, thread)
	}
	updated := buildMail("Re: plans", "Draft: bring the maps and the photos.", 600<<10, 4)
	e.tap.reset()
	d2, err := u.Drafts.Update("me", d.Id, &gmail.Draft{Id: d.Id, Message: &gmail.Message{ThreadId: thread}}).
		Media(bytes.NewReader(updated), mailType, googleapi.ChunkSize(chunk)).Do()
	if err != nil {
		t.Fatal(err)
	}
	checkResumable(t, e.tap.uploads(), http.MethodPut, 3, http.StatusOK)
	if d2.Id != d.Id || d2.Message.ThreadId != thread {
		t.Fatalf("drafts.update: draft %s thread %s, want draft %s thread %s", d2.Id, d2.Message.ThreadId, d.Id, thread)
	}
	if d2.Message.Id != d.Message.Id {
		// The replaced version is gone.
		_, err := u.Messages.Get("me", d.Message.Id).Do()
		apiError(t, err, http.StatusNotFound)
	}
	list, err := u.Drafts.List("me").Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Drafts) != 1 || list.Drafts[0].Id != d.Id || list.Drafts[0].Message.Id != d2.Message.Id {
		t.Fatalf("drafts.list: %s, want only draft %s with message %s", jsonOf(list.Drafts), d.Id, d2.Message.Id)
	}
	sent, err := u.Drafts.Send("me", &gmail.Draft{Id: d.Id}).Media(bytes.NewReader(updated), mailType).Do()
	if err != nil {
		t.Fatal(err)
	}
	if sent.ThreadId != thread || !slices.Equal(sent.LabelIds, []string{"SENT"}) {
		t.Fatalf("drafts.send: thread %s labels %v, want thread %s labels [SENT]", sent.ThreadId, sent.LabelIds, thread)
	}
	sentMsg, raw := e.rawMessage(t, sent.Id)
	sameBytes(t, "sent draft", raw, updated)
	maxHistory := sentMsg.HistoryId
	if _, err := u.Drafts.Get("me", d.Id).Do(); err == nil {
		t.Fatal("drafts.get after drafts.send: want 404, got the draft")
	} else {
		apiError(t, err, http.StatusNotFound)
	}
	if list, err := u.Drafts.List("me").Do(); err != nil || len(list.Drafts) != 0 {
		t.Fatalf("drafts.list after drafts.send: %v %s, want none", err, jsonOf(list))
	}

	// insert keeps the time it was received; import takes the Date header.
	before := time.Now().UnixMilli()
	ins, err := u.Messages.Insert("me", &gmail.Message{}).
		Media(bytes.NewReader(buildMail("inserted", "Filed straight into the mailbox.", 0, 5)), mailType).Do()
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().UnixMilli()
	imp, err := u.Messages.Import("me", &gmail.Message{LabelIds: []string{"INBOX"}}).
		Media(bytes.NewReader(buildMail("imported", "Imported from elsewhere.", 0, 6)), mailType).Do()
	if err != nil {
		t.Fatal(err)
	}
	insDated, err := u.Messages.Insert("me", &gmail.Message{}).InternalDateSource("dateHeader").
		Media(bytes.NewReader(buildMail("inserted, dated", "Dated by its header.", 0, 7)), mailType).Do()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		id     string
		labels []string
		lo, hi int64
	}{
		{"insert", ins.Id, []string{"INBOX", "UNREAD"}, before, after},
		{"import with labelIds [INBOX]", imp.Id, []string{"INBOX"}, mailDate.UnixMilli(), mailDate.UnixMilli()},
		{"insert internalDateSource=dateHeader", insDated.Id, []string{"INBOX", "UNREAD"}, mailDate.UnixMilli(), mailDate.UnixMilli()},
	} {
		m, err := u.Messages.Get("me", c.id).Format("minimal").Do()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m.LabelIds, c.labels) {
			t.Errorf("%s: labelIds %v, want %v", c.name, m.LabelIds, c.labels)
		}
		if m.InternalDate < c.lo || m.InternalDate > c.hi {
			t.Errorf("%s: internalDate %d, want within [%d, %d]", c.name, m.InternalDate, c.lo, c.hi)
		}
		if m.ThreadId != m.Id {
			t.Errorf("%s: threadId %s, want a thread of its own (%s)", c.name, m.ThreadId, m.Id)
		}
		if m.HistoryId <= maxHistory {
			t.Errorf("%s: historyId %d, want it past every earlier change (%d)", c.name, m.HistoryId, maxHistory)
		}
		maxHistory = m.HistoryId
	}

	// The thread holds the three messages sent in it.
	inThread := 0
	all, err := u.Messages.List("me").Do()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all.Messages {
		if m.ThreadId == thread {
			inThread++
		}
	}
	if len(all.Messages) != 6 || inThread != 3 {
		t.Fatalf("messages.list: %d messages, %d in thread %s; want 6 and 3: %s", len(all.Messages), inThread, thread, jsonOf(all.Messages))
	}
	sentList, err := u.Messages.List("me").LabelIds("SENT").Do()
	if err != nil {
		t.Fatal(err)
	}
	var sentIDs []string
	for _, m := range sentList.Messages {
		sentIDs = append(sentIDs, m.Id)
	}
	slices.Sort(sentIDs)
	wantSent := []string{first.Id, reply.Id, sent.Id}
	slices.Sort(wantSent)
	if !slices.Equal(sentIDs, wantSent) {
		t.Fatalf("messages.list labelIds=SENT: %v, want %v", sentIDs, wantSent)
	}

	p, err := u.GetProfile("me").Do()
	if err != nil {
		t.Fatal(err)
	}
	if p.EmailAddress != sandbox.DefaultAccount || p.MessagesTotal != 6 || p.ThreadsTotal != 4 || p.HistoryId < maxHistory {
		t.Fatalf("getProfile: %s; want %s, 6 messages, 4 threads, historyId >= %d", jsonOf(p), sandbox.DefaultAccount, maxHistory)
	}
}

// TestInteropGmailReadShapes reads an uploaded message back in each of
// Gmail's formats and its attachment through the official client's types,
// and pages through messages.list.
func TestInteropGmailReadShapes(t *testing.T) {
	t.Parallel()
	e := newInterop(t)
	u := e.gmail.Users
	const text, attach, seed = "Photos attached, as promised.", 40 << 10, 60
	mail := buildMail("with attachment", text, attach, seed)
	m, err := u.Messages.Insert("me", &gmail.Message{}).Media(bytes.NewReader(mail), mailType).Do()
	if err != nil {
		t.Fatal(err)
	}

	full, err := u.Messages.Get("me", m.Id).Format("full").Do()
	if err != nil {
		t.Fatal(err)
	}
	p := full.Payload
	if p == nil || p.MimeType != "multipart/mixed" || len(p.Parts) != 2 {
		t.Fatalf("format=full: payload %s, want multipart/mixed with two parts", jsonOf(p))
	}
	subject := ""
	for _, h := range p.Headers {
		if h.Name == "Subject" {
			subject = h.Value
		}
	}
	if subject != "with attachment" {
		t.Errorf("format=full: Subject header %q, want %q", subject, "with attachment")
	}
	body, att := p.Parts[0], p.Parts[1]
	if body.MimeType != "text/plain" || body.Body == nil {
		t.Fatalf("format=full: first part %s, want text/plain with a body", jsonOf(body))
	}
	if data, err := base64.URLEncoding.DecodeString(body.Body.Data); err != nil || string(data) != text || body.Body.Size != int64(len(text)) {
		t.Errorf("format=full: text body %q (size %d, %v), want %q", data, body.Body.Size, err, text)
	}
	if att.Filename != "data.bin" || att.Body == nil || att.Body.AttachmentId == "" || att.Body.Size != attach || att.Body.Data != "" {
		t.Fatalf("format=full: attachment part %s, want data.bin of %d bytes with an attachmentId and no inline data", jsonOf(att), attach)
	}
	ab, err := u.Messages.Attachments.Get("me", m.Id, att.Body.AttachmentId).Do()
	if err != nil {
		t.Fatalf("messages.attachments.get: %v", err)
	}
	data, err := base64.URLEncoding.DecodeString(ab.Data)
	if err != nil {
		t.Fatalf("messages.attachments.get: data is not base64url: %v", err)
	}
	sameBytes(t, "attachment", data, randomBytes(seed, attach))
	if ab.Size != attach {
		t.Errorf("messages.attachments.get: size %d, want %d", ab.Size, attach)
	}

	meta, err := u.Messages.Get("me", m.Id).Format("metadata").MetadataHeaders("Message-ID", "Subject").Do()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range meta.Payload.Headers {
		names = append(names, h.Name+": "+h.Value)
	}
	if want := []string{"Subject: with attachment", fmt.Sprintf("Message-ID: <interop-%d@carrier.test>", seed)}; !slices.Equal(names, want) {
		t.Errorf("format=metadata with metadataHeaders: %q, want %q", names, want)
	}
	minimal, err := u.Messages.Get("me", m.Id).Format("minimal").Do()
	if err != nil {
		t.Fatal(err)
	}
	if minimal.Payload != nil || minimal.Raw != "" || minimal.Id != m.Id || minimal.SizeEstimate != int64(len(mail)) {
		t.Errorf("format=minimal: %s, want id, labels and sizes only", jsonOf(minimal))
	}

	// Five more, then page through all six two at a time.
	want := []string{m.Id}
	for i := range 5 {
		mm, err := u.Messages.Insert("me", &gmail.Message{}).
			Media(bytes.NewReader(buildMail("filler", "more", 0, uint64(70+i))), mailType).Do()
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, mm.Id)
	}
	var got []string
	pages := 0
	err = u.Messages.List("me").MaxResults(2).Pages(context.Background(), func(r *gmail.ListMessagesResponse) error {
		pages++
		if len(r.Messages) > 2 {
			return fmt.Errorf("page of %d messages with maxResults=2", len(r.Messages))
		}
		for _, mm := range r.Messages {
			got = append(got, mm.Id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(want) // newest first, as Gmail lists
	if pages != 3 || !slices.Equal(got, want) {
		t.Fatalf("messages.list in pages of 2: %d pages %v, want 3 pages %v", pages, got, want)
	}
}

// TestInteropGmailUserID: userId may be "me" or the mailbox's address (in
// any case); another address is refused with a 403 whose message says
// which mailbox this sandbox serves.
func TestInteropGmailUserID(t *testing.T) {
	t.Parallel()
	e := newInterop(t)
	for _, user := range []string{"me", sandbox.DefaultAccount, strings.ToUpper(sandbox.DefaultAccount)} {
		p, err := e.gmail.Users.GetProfile(user).Do()
		if err != nil || p.EmailAddress != sandbox.DefaultAccount {
			t.Fatalf("getProfile(%q): %v %+v", user, err, p)
		}
		m, err := e.gmail.Users.Messages.Send(user, &gmail.Message{}).
			Media(bytes.NewReader(buildMail("as "+user, "Sent naming the user "+user+".", 0, 90)), mailType).Do()
		if err != nil || !slices.Equal(m.LabelIds, []string{"SENT"}) {
			t.Fatalf("messages.send as %q: %v %+v", user, err, m)
		}
	}
	const other = "someone.else@example.com"
	_, err := e.gmail.Users.GetProfile(other).Do()
	ge := apiError(t, err, http.StatusForbidden)
	// Google's own message is "Delegation denied for <the signed-in
	// account>"; the hint after it must name the sandbox's mailbox, not
	// the address that was refused.
	if !strings.Contains(ge.Message, "mailbox is "+sandbox.DefaultAccount) || strings.Contains(ge.Message, "mailbox is "+other) {
		t.Errorf("403 message %q: want it to say the sandbox's mailbox is %s (not %s)", ge.Message, sandbox.DefaultAccount, other)
	}
	_, err = e.gmail.Users.Messages.Send(other, &gmail.Message{}).
		Media(bytes.NewReader(buildMail("as someone else", "Not mine to send.", 0, 91)), mailType).Do()
	apiError(t, err, http.StatusForbidden)
}

// TestInteropAuth goes through the client's own auth stack: a static
// oauth2 token source with the sandbox's token works, a wrong one gets
// Google's 401.
func TestInteropAuth(t *testing.T) {
	t.Parallel()
	e := newInterop(t)
	for _, c := range []struct {
		token string
		code  int
	}{{interopToken, http.StatusOK}, {"not-the-token", http.StatusUnauthorized}} {
		ts := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: c.token, TokenType: "Bearer"})
		gs, err := gmail.NewService(context.Background(), option.WithEndpoint(e.srv.URL+"/"), option.WithTokenSource(ts))
		if err != nil {
			t.Fatal(err)
		}
		p, err := gs.Users.GetProfile("me").Do()
		if c.code == http.StatusOK {
			if err != nil || p.EmailAddress != sandbox.DefaultAccount {
				t.Fatalf("getProfile with the token: %v %+v", err, p)
			}
			continue
		}
		ge := apiError(t, err, c.code)
		if len(ge.Errors) != 1 || ge.Errors[0].Reason != "required" || !strings.Contains(ge.Message, "Authorization") {
			t.Fatalf("401: want Google's error form naming the Authorization header, got %s", ge.Body)
		}
	}
}

// TestInteropSniffedMediaType is PROTOCOL.md section 6's trap: media
// without an explicit type is sniffed by the client as text/plain, and
// the upload is refused with a message naming the valid types, for both
// upload paths, and nothing is stored.
func TestInteropSniffedMediaType(t *testing.T) {
	t.Parallel()
	e := newInterop(t)
	mail := buildMail("no type", "Sent without a media type.", 0, 20)
	big := buildMail("no type, big", "Sent without a media type.", 600<<10, 21)
	png := makePNG(t, 16, 16, 22)
	cases := []struct {
		name     string
		call     func() error
		upload   string
		mentions []string
	}{
		{"gmail send multipart", func() error {
			_, err := e.gmail.Users.Messages.Send("me", &gmail.Message{}).Media(bytes.NewReader(mail)).Do()
			return err
		}, "multipart", []string{"text/plain", "message/*", "message/rfc822"}},
		{"gmail send resumable", func() error {
			_, err := e.gmail.Users.Messages.Send("me", &gmail.Message{}).Media(bytes.NewReader(big), googleapi.ChunkSize(chunk)).Do()
			return err
		}, "resumable", []string{"text/plain", "message/*", "message/rfc822"}},
		{"gmail drafts.create multipart", func() error {
			_, err := e.gmail.Users.Drafts.Create("me", &gmail.Draft{}).Media(bytes.NewReader(mail)).Do()
			return err
		}, "multipart", []string{"text/plain", "message/*"}},
		{"mirror timeline.insert with text", func() error {
			_, err := e.mirror.Timeline.Insert(&mirror.TimelineItem{Text: "x"}).Media(strings.NewReader("just text")).Do()
			return err
		}, "multipart", []string{"text/plain", "image/*", "audio/*", "video/*"}},
		{"gmail send with an image", func() error {
			_, err := e.gmail.Users.Messages.Send("me", &gmail.Message{}).Media(bytes.NewReader(png)).Do()
			return err
		}, "multipart", []string{"image/png", "message/*"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.tap.reset()
			err := c.call()
			ge := apiError(t, err, http.StatusBadRequest)
			for _, s := range c.mentions {
				if !strings.Contains(ge.Message, s) {
					t.Errorf("the message %q does not mention %q", ge.Message, s)
				}
			}
			if len(ge.Errors) != 1 || ge.Errors[0].Reason != "badContent" {
				t.Errorf("want errors[0].reason badContent, got %s", ge.Body)
			}
			reqs := e.tap.uploads()
			if len(reqs) != 1 || reqs[0].UploadType != c.upload || reqs[0].Session {
				t.Fatalf("want the refusal on the one %s request; the wire saw:\n%s", c.upload, wireDump(reqs))
			}
		})
	}
	l, err := e.gmail.Users.Messages.List("me").Do()
	if err != nil || len(l.Messages) != 0 {
		t.Fatalf("refused uploads stored messages: %v %s", err, jsonOf(l))
	}
}

// TestInteropMirror inserts timeline items with image media (multipart and
// resumable), updates one, adds attachments, and reads every attachment
// back: through contentUrl with the token and through attachments.get.
func TestInteropMirror(t *testing.T) {
	t.Parallel()
	e := newInterop(t)
	tl := e.mirror.Timeline
	small := makePNG(t, 24, 24, 30)    // ~2 KiB: multipart
	large := makePNG(t, 480, 480, 31)  // ~900 KiB: four chunks
	second := makePNG(t, 400, 400, 32) // for the update, resumable through PUT
	extra := makePNG(t, 8, 8, 33)

	// Small, content type sniffed by the client (image/png).
	e.tap.reset()
	a, err := tl.Insert(&mirror.TimelineItem{Text: "small card", Notification: &mirror.NotificationConfig{Level: "DEFAULT"}}).
		Media(bytes.NewReader(small)).Do()
	if err != nil {
		t.Fatal(err)
	}
	checkMultipart(t, e.tap.uploads(), http.MethodPost)
	e.checkItem(t, a, "small card", small)
	if a.Notification == nil || a.Notification.Level != "DEFAULT" || a.Kind != "mirror#timelineItem" {
		t.Errorf("timeline.insert answered %s", jsonOf(a))
	}

	// Large, in 256 KiB chunks.
	b, err := tl.Insert(&mirror.TimelineItem{Html: "<article><p>large card</p></article>"}).
		Media(bytes.NewReader(large), googleapi.ContentType("image/png"), googleapi.ChunkSize(chunk)).Do()
	if err != nil {
		t.Fatal(err)
	}
	checkResumable(t, e.tap.uploads(), http.MethodPost, len(large)/chunk, http.StatusCreated)
	e.checkItem(t, b, "", large)
	if b.Html != "<article><p>large card</p></article>" {
		t.Errorf("html %q lost", b.Html)
	}

	// Update the small item with new media, resumable: PUT then 200.
	u, err := tl.Update(a.Id, &mirror.TimelineItem{Text: "small card, updated"}).
		Media(bytes.NewReader(second), googleapi.ContentType("image/png"), googleapi.ChunkSize(chunk)).Do()
	if err != nil {
		t.Fatal(err)
	}
	checkResumable(t, e.tap.uploads(), http.MethodPut, len(second)/chunk, http.StatusOK)
	if u.Id != a.Id {
		t.Fatalf("timeline.update answered item %s, want %s", u.Id, a.Id)
	}
	e.checkItem(t, u, "small card, updated", second)

	// Attachments on the large item: one small (multipart), one chunked.
	var added []*mirror.Attachment
	for _, c := range []struct {
		data  []byte
		opts  []googleapi.MediaOption
		check func([]wireReq)
	}{
		{extra, nil, func(r []wireReq) { checkMultipart(t, r, http.MethodPost) }},
		{large, []googleapi.MediaOption{googleapi.ContentType("image/png"), googleapi.ChunkSize(chunk)},
			func(r []wireReq) { checkResumable(t, r, http.MethodPost, len(large)/chunk, http.StatusCreated) }},
	} {
		att, err := tl.Attachments.Insert(b.Id).Media(bytes.NewReader(c.data), c.opts...).Do()
		if err != nil {
			t.Fatalf("attachments.insert: %v", err)
		}
		c.check(e.tap.uploads())
		if att.Id == "" || att.ContentType != "image/png" || att.ContentUrl == "" {
			t.Fatalf("attachments.insert answered %s", jsonOf(att))
		}
		sameBytes(t, "attachment via contentUrl", e.fetch(t, att.ContentUrl, true), c.data)
		res, err := tl.Attachments.Get(b.Id, att.Id).Download()
		if err != nil {
			t.Fatalf("attachments.get alt=media: %v", err)
		}
		got, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, "attachment via attachments.get", got, c.data)
		added = append(added, att)
	}
	list, err := tl.Attachments.List(b.Id).Do()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, at := range list.Items {
		ids = append(ids, at.Id)
	}
	for _, at := range append([]*mirror.Attachment{b.Attachments[0]}, added...) {
		if !slices.Contains(ids, at.Id) {
			t.Errorf("attachments.list %v lacks %s", ids, at.Id)
		}
	}

	// The attachment content is an API request: it needs the token.
	if code := e.fetchStatus(t, added[0].ContentUrl, false); code != http.StatusUnauthorized {
		t.Errorf("contentUrl without a token: %d, want 401", code)
	}

	// get and list see the items as stored.
	g, err := tl.Get(b.Id).Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Attachments) != 3 {
		t.Errorf("timeline.get: %d attachments, want 3: %s", len(g.Attachments), jsonOf(g.Attachments))
	}
	var items []string
	err = tl.List().MaxResults(1).Pages(context.Background(), func(r *mirror.TimelineListResponse) error {
		if len(r.Items) > 1 || r.Kind != "mirror#timeline" {
			return fmt.Errorf("page of %d items, kind %q, with maxResults=1", len(r.Items), r.Kind)
		}
		for _, it := range r.Items {
			items = append(items, it.Id)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("timeline.list: %v", err)
	}
	if len(items) != 2 || !slices.Contains(items, a.Id) || !slices.Contains(items, b.Id) {
		t.Fatalf("timeline.list in pages of 1: %v, want %s and %s", items, a.Id, b.Id)
	}
}

// TestInteropMirrorLimit: the 10 MiB limit of Mirror's upload methods is
// enforced on both of the client's upload paths and surfaces as a 413
// googleapi.Error that says by how much; media of exactly the limit passes.
func TestInteropMirrorLimit(t *testing.T) {
	t.Parallel()
	e := newInterop(t)
	const limit = 10 << 20
	jpeg := googleapi.ContentType("image/jpeg")
	big := randomBytes(80, limit+1)
	for _, c := range []struct {
		name string
		opts []googleapi.MediaOption
		path string
	}{
		{"multipart", []googleapi.MediaOption{jpeg}, "multipart"},
		{"resumable", []googleapi.MediaOption{jpeg, googleapi.ChunkSize(2 << 20)}, "resumable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.tap.reset()
			_, err := e.mirror.Timeline.Insert(&mirror.TimelineItem{Text: "too big"}).Media(bytes.NewReader(big), c.opts...).Do()
			ge := apiError(t, err, http.StatusRequestEntityTooLarge)
			if !strings.Contains(ge.Message, fmt.Sprint(limit)) || !strings.Contains(ge.Message, "10 MiB") {
				t.Errorf("413 message %q: want the limit stated (%d bytes, 10 MiB)", ge.Message, limit)
			}
			reqs := e.tap.uploads()
			if len(reqs) == 0 || reqs[0].UploadType != c.path {
				t.Fatalf("want the %s path; the wire saw:\n%s", c.path, wireDump(reqs))
			}
		})
	}
	l, err := e.mirror.Timeline.List().Do()
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("refused uploads left items: %v %s", err, jsonOf(l))
	}
	exact := big[:limit]
	it, err := e.mirror.Timeline.Insert(&mirror.TimelineItem{Text: "just fits"}).
		Media(bytes.NewReader(exact), jpeg, googleapi.ChunkSize(2<<20)).Do()
	if err != nil {
		t.Fatalf("media of exactly %d bytes: %v", limit, err)
	}
	if len(it.Attachments) != 1 {
		t.Fatalf("timeline.insert answered %s", jsonOf(it))
	}
	sameBytes(t, "10 MiB attachment", e.fetch(t, it.Attachments[0].ContentUrl, true), exact)
}

// checkItem checks a TimelineItem's text and that its one attachment is
// the media, as answered and as timeline.get sees it.
func (e *interop) checkItem(t *testing.T, it *mirror.TimelineItem, text string, media []byte) {
	t.Helper()
	if it.Id == "" || it.Text != text {
		t.Fatalf("timeline item: id %q text %q, want text %q", it.Id, it.Text, text)
	}
	g, err := e.mirror.Timeline.Get(it.Id).Do()
	if err != nil {
		t.Fatalf("timeline.get %s: %v", it.Id, err)
	}
	for _, x := range []*mirror.TimelineItem{it, g} {
		if len(x.Attachments) != 1 || x.Attachments[0].ContentType != "image/png" {
			t.Fatalf("timeline item %s: attachments %s, want one image/png", x.Id, jsonOf(x.Attachments))
		}
	}
	if g.Text != text {
		t.Fatalf("timeline.get text %q, want %q", g.Text, text)
	}
	sameBytes(t, "timeline attachment", e.fetch(t, g.Attachments[0].ContentUrl, true), media)
}

func (e *interop) fetchStatus(t *testing.T, u string, auth bool) int {
	t.Helper()
	res := e.get(t, u, auth)
	res.Body.Close()
	return res.StatusCode
}

func (e *interop) fetch(t *testing.T, u string, auth bool) []byte {
	t.Helper()
	res := e.get(t, u, auth)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", u, res.StatusCode, b)
	}
	return b
}

func (e *interop) get(t *testing.T, u string, auth bool) *http.Response {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil || !strings.HasPrefix(u, e.srv.URL+"/") {
		t.Fatalf("link %q does not point into the sandbox at %s", u, e.srv.URL)
	}
	req, _ := http.NewRequest(http.MethodGet, pu.String(), nil)
	if auth {
		req.Header.Set("Authorization", "Bearer "+interopToken)
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// objectWant is what a Cloud Storage object resource must say for data.
func objectWant(data []byte) (size uint64, md5Hash, crc string) {
	sum := md5.Sum(data)
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
	return uint64(len(data)), base64.StdEncoding.EncodeToString(sum[:]), base64.StdEncoding.EncodeToString(c[:])
}

func (e *interop) checkObject(t *testing.T, o *storage.Object, bucket, name, ctype string, data []byte) {
	t.Helper()
	size, md5Hash, crc := objectWant(data)
	g, err := e.storage.Objects.Get(bucket, name).Do()
	if err != nil {
		t.Fatalf("objects.get %s: %v", name, err)
	}
	for _, x := range []struct {
		how string
		o   *storage.Object
	}{{"objects.insert", o}, {"objects.get", g}} {
		if x.o.Name != name || x.o.Bucket != bucket || x.o.Size != size || x.o.Md5Hash != md5Hash || x.o.Crc32c != crc ||
			x.o.ContentType != ctype || x.o.Kind != "storage#object" {
			t.Fatalf("%s answered name %q bucket %q size %d md5Hash %s crc32c %s contentType %q kind %q;\n"+
				"want %q %q %d %s %s %q storage#object", x.how, x.o.Name, x.o.Bucket, x.o.Size, x.o.Md5Hash, x.o.Crc32c,
				x.o.ContentType, x.o.Kind, name, bucket, size, md5Hash, crc, ctype)
		}
	}
	res, err := e.storage.Objects.Get(bucket, name).Download()
	if err != nil {
		t.Fatalf("objects.get alt=media %s: %v", name, err)
	}
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "object "+name, got, data)
	if ct := res.Header.Get("Content-Type"); ct != ctype {
		t.Errorf("download Content-Type %q, want %q", ct, ctype)
	}
	sameBytes(t, "object "+name+" via mediaLink", e.fetch(t, o.MediaLink, true), data)
}

// TestInteropStorage uploads objects of several sizes through
// objects.insert and reads them back with their hashes, then lists them.
func TestInteropStorage(t *testing.T) {
	t.Parallel()
	const bucket = "carrier-interop"
	octets := googleapi.ContentType("application/octet-stream")
	cases := []struct {
		name  string
		obj   string // the object's name
		meta  *storage.Object
		query bool // name given with the name query parameter, not in meta
		// resumableMedia uses the client's (deprecated) ResumableMedia,
		// which always opens a session, even for a few bytes or none.
		resumableMedia bool
		size           int
		ctype          string // contentType the object must have
		opts           []googleapi.MediaOption
		// resumable: at least this many chunks; 0 means multipart.
		chunks int
		// lastRange is the Content-Range of the last request, if it matters.
		lastRange string
	}{
		{name: "multipart", obj: "small.bin", size: 100 << 10, ctype: "application/octet-stream",
			opts: []googleapi.MediaOption{octets}},
		{name: "multipart empty", obj: "empty", size: 0, ctype: "application/x-empty",
			opts: []googleapi.MediaOption{googleapi.ContentType("application/x-empty")}},
		{name: "multipart with auto checksum", obj: "sum/small.bin", size: 70 << 10, ctype: "application/octet-stream",
			opts: []googleapi.MediaOption{octets, googleapi.EnableAutoChecksum()}},
		{name: "multipart named in the query", obj: "by-query.bin", query: true, size: 5000, ctype: "application/octet-stream",
			opts: []googleapi.MediaOption{octets}},
		// The metadata's contentType wins over the media's, as in GCS.
		{name: "multipart with metadata", obj: "table.csv", size: 9000, ctype: "text/csv",
			meta: &storage.Object{Name: "table.csv", ContentType: "text/csv", Metadata: map[string]string{"origin": "interop"}},
			opts: []googleapi.MediaOption{octets}},
		// Names that need escaping in a URL path, or that a path cleaner
		// would change, must still be read back under their own name.
		{name: "multipart odd name", obj: "odd//../100% real?#[x] +.bin", size: 3000, ctype: "application/octet-stream",
			opts: []googleapi.MediaOption{octets}},
		{name: "ResumableMedia one chunk", obj: "rm/one", size: 5000, ctype: "application/octet-stream",
			resumableMedia: true, chunks: 1, lastRange: "bytes 0-4999/5000"},
		{name: "ResumableMedia empty", obj: "rm/empty", size: 0, ctype: "application/octet-stream",
			resumableMedia: true, chunks: 1, lastRange: "bytes */0"},
		{name: "resumable", obj: "dir/sub/größer objekt.bin", size: 1<<20 + 12345, ctype: "video/mp4",
			opts: []googleapi.MediaOption{googleapi.ContentType("video/mp4"), googleapi.ChunkSize(chunk)}, chunks: 5},
		// A multiple of the chunk size: the client learns the end only
		// after the last full chunk and ends with an empty "bytes */N".
		{name: "resumable exact multiple", obj: "exact.bin", size: 4 * chunk, ctype: "application/octet-stream",
			opts:   []googleapi.MediaOption{octets, googleapi.ChunkSize(chunk)},
			chunks: 5, lastRange: fmt.Sprintf("bytes */%d", 4*chunk)},
		{name: "resumable with auto checksum", obj: "sum/large.bin", size: 3*chunk + 1, ctype: "application/octet-stream",
			opts: []googleapi.MediaOption{octets, googleapi.ChunkSize(chunk), googleapi.EnableAutoChecksum()}, chunks: 4},
		{name: "resumable with metadata", obj: "clip.bin", size: 2*chunk + 10, ctype: "audio/ogg",
			meta:   &storage.Object{Name: "clip.bin", ContentType: "audio/ogg", Metadata: map[string]string{"take": "2"}},
			opts:   []googleapi.MediaOption{octets, googleapi.ChunkSize(chunk)},
			chunks: 3},
	}
	e := newInterop(t)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.tap.reset()
			data := randomBytes(uint64(40+i), c.size)
			meta := c.meta
			if meta == nil {
				meta = &storage.Object{Name: c.obj}
			}
			call := e.storage.Objects.Insert(bucket, meta)
			if c.query {
				call = e.storage.Objects.Insert(bucket, &storage.Object{}).Name(c.obj)
			}
			if c.resumableMedia {
				call = call.ResumableMedia(context.Background(), bytes.NewReader(data), int64(len(data)), c.ctype)
			} else {
				call = call.Media(bytes.NewReader(data), c.opts...)
			}
			o, err := call.Do()
			if err != nil {
				t.Fatalf("objects.insert: %v", err)
			}
			reqs := e.tap.uploads()
			if c.chunks == 0 {
				checkMultipart(t, reqs, http.MethodPost)
			} else {
				checkResumable(t, reqs, http.MethodPost, c.chunks, http.StatusOK)
			}
			if c.lastRange != "" {
				if last := reqs[len(reqs)-1]; last.ContentRange != c.lastRange {
					t.Fatalf("last request: Content-Range %q, want %q", last.ContentRange, c.lastRange)
				}
			}
			e.checkObject(t, o, bucket, c.obj, c.ctype, data)
			if c.meta != nil && !maps.Equal(o.Metadata, c.meta.Metadata) {
				t.Errorf("custom metadata %v, want %v", o.Metadata, c.meta.Metadata)
			}
		})
	}

	list := func(prefix string) []string {
		t.Helper()
		var names []string
		err := e.storage.Objects.List(bucket).Prefix(prefix).Pages(context.Background(), func(os *storage.Objects) error {
			for _, o := range os.Items {
				names = append(names, o.Name)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("objects.list prefix=%q: %v", prefix, err)
		}
		return names
	}
	var all []string
	for _, c := range cases {
		all = append(all, c.obj)
	}
	slices.Sort(all)
	if got := list(""); !slices.Equal(got, all) {
		t.Errorf("objects.list: %q, want %q", got, all)
	}
	if got, want := list("sum/"), []string{"sum/large.bin", "sum/small.bin"}; !slices.Equal(got, want) {
		t.Errorf("objects.list prefix=sum/: %q, want %q", got, want)
	}
	if _, err := e.storage.Objects.Get(bucket, "never-uploaded").Do(); err == nil {
		t.Error("objects.get of a missing object: want 404, got an object")
	} else {
		apiError(t, err, http.StatusNotFound)
	}
}

// TestInteropStorageFaults uploads through injected 500/502/503/504
// answers, which the official client retries on its own (chunks always;
// the session start and a multipart request with WithRetry), and every
// object still ends byte-identical.
func TestInteropStorageFaults(t *testing.T) {
	t.Parallel()
	e := newInterop(t)
	if err := e.sb.SetFaults("seed=3,err5xx=0.2"); err != nil {
		t.Fatal(err)
	}
	const bucket = "carrier-faults"
	cases := []struct {
		name   string
		size   int
		chunks int // 0: multipart
	}{
		{"multipart", 200 << 10, 0},
		{"resumable", 2<<20 + 777, 8},
		{"resumable exact multiple", 5 * chunk, 6},
	}
	objects := make([]*storage.Object, len(cases))
	datas := make([][]byte, len(cases))
	var all []wireReq
	for i, c := range cases {
		datas[i] = randomBytes(uint64(50+i), c.size)
		// WithRetry acts only with a context: without one the client's
		// SendRequestWithRetry sends the first request once.
		o, err := e.storage.Objects.Insert(bucket, &storage.Object{Name: c.name}).
			WithRetry(nil, nil).Context(context.Background()).
			Media(bytes.NewReader(datas[i]), googleapi.ContentType("application/octet-stream"), googleapi.ChunkSize(chunk)).Do()
		if err != nil {
			t.Fatalf("%s: objects.insert under faults: %v; the wire saw:\n%s", c.name, err, wireDump(e.tap.uploads()))
		}
		objects[i] = o
		reqs := e.tap.uploads()
		all = append(all, reqs...)
		ok, _ := failedAttempts(reqs)
		if c.chunks == 0 {
			checkMultipart(t, ok, http.MethodPost)
		} else {
			checkResumable(t, ok, http.MethodPost, c.chunks, http.StatusOK)
		}
	}
	if _, failed := failedAttempts(all); failed == 0 || e.sb.Stats().FaultsInjected == 0 {
		t.Fatalf("no fault was injected, so no retry was shown; the wire saw:\n%s", wireDump(all))
	} else {
		t.Logf("%d of %d upload requests failed by injection; the client sent them again", failed, len(all))
	}
	if err := e.sb.SetFaults(""); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		e.checkObject(t, objects[i], bucket, c.name, "application/octet-stream", datas[i])
	}
}

func jsonOf(v any) string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}
