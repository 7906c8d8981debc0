package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"carrier/sandbox"
	"carrier/transfer"
)

type sendEnv struct {
	t     *testing.T
	url   string
	state string
}

func newSendEnv(t *testing.T) *sendEnv {
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(func() { sb.Close() })
	return &sendEnv{t: t, url: srv.URL, state: t.TempDir()}
}

// run runs a command against the sandbox and returns its stdout JSON.
func (e *sendEnv) run(args ...string) (map[string]any, string, int) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "--endpoint", e.url, "--token", "tok", "--state-dir", e.state, "--retry-base", "10ms")
	code := Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}, args)
	var m map[string]any
	if code == 0 {
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			e.t.Fatalf("%v: stdout is not JSON: %v\n%s", args, err, out.String())
		}
	}
	return m, errOut.String(), code
}

func (e *sendEnv) get(path string) map[string]any {
	e.t.Helper()
	var m map[string]any
	json.Unmarshal(e.getBytes(path), &m)
	return m
}

// raw fetches a message's bytes with format=raw.
func (e *sendEnv) raw(id string) []byte {
	e.t.Helper()
	b, err := base64.URLEncoding.DecodeString(e.get("/gmail/v1/users/me/messages/" + id + "?format=raw")["raw"].(string))
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// lastRecord is the newest job in the journal.
func (e *sendEnv) lastRecord() *transfer.Record {
	j, err := transfer.OpenJournal(e.state)
	if err != nil {
		e.t.Fatal(err)
	}
	recs, err := j.List()
	if err != nil || len(recs) == 0 {
		e.t.Fatalf("journal: %v", err)
	}
	last := recs[0]
	for _, r := range recs {
		if r.Created.After(last.Created) || r.Created.Equal(last.Created) && r.ID > last.ID {
			last = r
		}
	}
	return last
}

func TestSendEndToEnd(t *testing.T) {
	e := newSendEnv(t)
	dir := t.TempDir()
	attData := bytes.Repeat([]byte("données binaires \x00\x01\x02"), 40000)
	att := filepath.Join(dir, "Überweisung 報告.bin")
	os.WriteFile(att, attData, 0o600)
	msg, errs, code := e.run("send", "--to", "Zoë <zoe@example.com>", "--subject", "Grüße", "--body", "Hallo", "--attach", att, "--chunk-size", "262144")
	if code != 0 {
		t.Fatalf("send: %d %s", code, errs)
	}
	if msg["labelIds"].([]any)[0] != "SENT" {
		t.Fatalf("send answered %v", msg)
	}
	e.exact(msg["id"].(string))
	raw := e.raw(msg["id"].(string))
	rec := e.lastRecord()
	if _, err := os.Stat(rec.Path); !os.IsNotExist(err) {
		t.Errorf("the spool of a delivered message is kept: %v", err)
	}
	parsed, _ := mail.ReadMessage(bytes.NewReader(raw))
	_, params, _ := mime.ParseMediaType(parsed.Header.Get("Content-Type"))
	mr := multipart.NewReader(parsed.Body, params["boundary"])
	mr.NextPart()
	p, err := mr.NextPart()
	if err != nil || p.FileName() != "Überweisung 報告.bin" {
		t.Fatalf("attachment part: %v %q", err, p.FileName())
	}
	got, _ := io.ReadAll(base64.NewDecoder(base64.StdEncoding, p))
	if !bytes.Equal(got, attData) {
		t.Fatal("attachment bytes differ")
	}

	reply, _, code := e.run("send", "--to", "zoe@example.com", "--body", "again", "--thread", msg["threadId"].(string))
	if code != 0 || reply["threadId"] != msg["threadId"] {
		t.Fatalf("reply in thread: %v", reply)
	}
}

// exact checks that the sandbox holds exactly the bytes the last job sent:
// the spool's, whose SHA-256 the journal recorded before the first request.
func (e *sendEnv) exact(msgID string) {
	e.t.Helper()
	raw := e.raw(msgID)
	rec := e.lastRecord()
	sum := sha256.Sum256(raw)
	if rec.State != transfer.StateDone || rec.SHA256 != hex.EncodeToString(sum[:]) || rec.Size != int64(len(raw)) {
		e.t.Fatalf("message %s: the sandbox holds other bytes than the spool (%s, %d bytes vs %s, %d bytes)", msgID, hex.EncodeToString(sum[:]), len(raw), rec.SHA256, rec.Size)
	}
}

func TestSendDraftsInsertImport(t *testing.T) {
	e := newSendEnv(t)
	d, errs, code := e.run("send", "--as", "draft", "--to", "a@example.com", "--subject", "v1", "--body", "one")
	if code != 0 {
		t.Fatalf("draft: %s", errs)
	}
	id := d["id"].(string)
	if d["message"].(map[string]any)["labelIds"].([]any)[0] != "DRAFT" {
		t.Fatalf("draft: %v", d)
	}
	e.exact(d["message"].(map[string]any)["id"].(string))
	u, errs, code := e.run("send", "--draft-id", id, "--to", "a@example.com", "--subject", "v2", "--body", "two")
	if code != 0 || u["id"] != id {
		t.Fatalf("drafts.update: %v %s", u, errs)
	}
	if raw := e.raw(u["message"].(map[string]any)["id"].(string)); !bytes.Contains(raw, []byte("Subject: v2")) {
		t.Fatalf("updated draft: %s", raw)
	}
	e.exact(u["message"].(map[string]any)["id"].(string))
	sent, errs, code := e.run("send", "--send-draft", id)
	if code != 0 || sent["labelIds"].([]any)[0] != "SENT" {
		t.Fatalf("drafts.send: %v %s", sent, errs)
	}
	if raw := e.raw(sent["id"].(string)); !bytes.Contains(raw, []byte("Subject: v2")) {
		t.Fatal("the sent draft is not the updated one")
	}
	d2, _, _ := e.run("send", "--as", "draft", "--to", "a@example.com", "--body", "x")
	s2, errs, code := e.run("send", "--send-draft", d2["id"].(string), "--to", "b@example.com", "--subject", "final", "--body", "y")
	if code != 0 || !bytes.Contains(e.raw(s2["id"].(string)), []byte("Subject: final")) {
		t.Fatalf("drafts.send with a new message: %v %s", s2, errs)
	}
	e.exact(s2["id"].(string))
	ins, _, code := e.run("send", "--as", "insert", "--to", "me@example.com", "--body", "kept", "--label", "Label_7")
	if code != 0 || ins["labelIds"].([]any)[0] != "Label_7" {
		t.Fatalf("insert: %v", ins)
	}
	e.exact(ins["id"].(string))
	imp, _, code := e.run("send", "--as", "import", "--to", "me@example.com", "--body", "imported", "--upload-type", "multipart")
	if code != 0 || imp["labelIds"].([]any)[0] != "INBOX" {
		t.Fatalf("import: %v", imp)
	}
	e.exact(imp["id"].(string))
}

func TestSendRefusals(t *testing.T) {
	e := newSendEnv(t)
	big := filepath.Join(t.TempDir(), "big.bin")
	f, _ := os.Create(big)
	f.Truncate(27 << 20)
	f.Close()
	cases := []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"send", "--to", "a@example.com", "--attach", big, "--links", "never"}, 1, "takes at most 35.0 MiB"},
		{[]string{"send", "--to", "a@example.com", "--links", "sometimes"}, 2, "auto, always or never"},
		{[]string{"send", "--to", "a@example.com", "--share", "world"}, 2, "recipients or anyone"},
		{[]string{"send", "--to", "a@example.com", "--link-expiry", "400d"}, 2, "at most 365d"},
		{[]string{"send", "--to", "a@example.com", "--link-expiry", "soon"}, 2, "such as 30d"},
		{[]string{"send", "--to", "a@example.com", "--link-expiry", "30d", "--share", "anyone"}, 2, "recipients only"},
		{[]string{"send", "--to", "a@example.com", "--link-over", "lots"}, 2, "such as 25MB"},
		{[]string{"send", "--to", "not an address"}, 1, "not an address"},
		{[]string{"send", "--to", "a@example.com", "--thread", "nope"}, 1, "nope"},
		{[]string{"send", "--to", "a@example.com", "--draft-id", "r1", "--send-draft", "r2"}, 2, "not both"},
		{[]string{"send", "--send-draft", "r404"}, 1, "r404"},
		{[]string{"send", "--as", "draft", "--label", "X", "--to", "a@example.com"}, 2, "--label"},
		{[]string{"timeline", "--media", big}, 1, "pictures, videos and sounds"},
		{[]string{"timeline"}, 2, "--media"},
	}
	for _, c := range cases {
		_, errs, code := e.run(c.args...)
		if code != c.code || !strings.Contains(errs, c.say) {
			t.Errorf("%v: exit %d, %q", c.args, code, errs)
		}
	}
	mockKeyring(t) // an empty keychain, whatever this machine has
	var errOut bytes.Buffer
	code := Main(context.Background(), &Env{Stdout: io.Discard, Stderr: &errOut}, []string{"send", "--to", "a@example.com", "--endpoint", "http://127.0.0.1:1", "--state-dir", t.TempDir()})
	if code != 1 || !strings.Contains(errOut.String(), "carrier login") {
		t.Errorf("no credentials: %d %q", code, errOut.String())
	}
}

func TestTimelineCommand(t *testing.T) {
	e := newSendEnv(t)
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	pic := filepath.Join(t.TempDir(), "dot.png")
	os.WriteFile(pic, png, 0o600)
	item, errs, code := e.run("timeline", "--media", pic, "--text", "Hello ☃", "--notify")
	if code != 0 {
		t.Fatalf("timeline: %s", errs)
	}
	if item["text"] != "Hello ☃" || len(item["attachments"].([]any)) != 1 || item["notification"].(map[string]any)["level"] != "DEFAULT" {
		t.Fatalf("item: %v", item)
	}
	more, errs, code := e.run("timeline", "--media", pic, "--item", item["id"].(string))
	if code != 0 || len(more["attachments"].([]any)) != 2 || more["id"] != item["id"] {
		t.Fatalf("attachment: %v %s", more, errs)
	}
	att := more["attachments"].([]any)[1].(map[string]any)
	req, _ := http.NewRequest("GET", att["contentUrl"].(string), nil)
	req.Header.Set("Authorization", "Bearer tok")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if !bytes.Equal(got, png) || att["contentType"] != "image/png" {
		t.Fatal("the stored picture differs")
	}
}

// messageCount is how many messages the sandbox's mailbox holds.
func (e *sendEnv) messageCount() int {
	e.t.Helper()
	msgs, _ := e.get("/gmail/v1/users/me/messages")["messages"].([]any)
	return len(msgs)
}

// Ctrl+C within --undo-window is Undo: the line says so, the message is
// cancelled, its session deleted, and nothing reaches the mailbox.
func TestSendUndoWindowCtrlCUndoes(t *testing.T) {
	e := newSendEnv(t)
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var out bytes.Buffer
	errOut := &lockedBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- Main(ctx, &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: errOut}, []string{"send", "--to", "bob@example.com", "--subject", "Oops", "--body", "Not yet.",
			"--undo-window", "5m", "--endpoint", e.url, "--token", "tok", "--state-dir", e.state, "--retry-base", "10ms"})
	}()
	// Pressed once the message waits for its last bytes' time.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r := e.lastRecordIfAny(); r != nil && r.State == transfer.StateScheduled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the message never waited for its time; stderr:\n%s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(errOut.String(), "sending in 300 s: press Ctrl+C to undo") {
		t.Errorf("stderr does not say how to undo:\n%s", errOut.String())
	}
	interrupt()
	if c := <-code; c == 0 {
		t.Fatal("an undone send exited 0")
	}
	if !strings.Contains(errOut.String(), "undone: the message was not sent") {
		t.Errorf("stderr does not say the send was undone:\n%s", errOut.String())
	}
	if r := e.lastRecord(); r.State != transfer.StateCancelled || r.Error != "" {
		t.Fatalf("the message is %s (%q), want cancelled with the server told", r.State, r.Error)
	}
	if n := e.messageCount(); n != 0 {
		t.Fatalf("%d messages after Undo, want none", n)
	}
}

// Without Ctrl+C the message leaves when the window is over, once.
func TestSendUndoWindowSendsOnceAfterIt(t *testing.T) {
	e := newSendEnv(t)
	m, errOut, code := e.run("send", "--to", "bob@example.com", "--subject", "Go", "--body", "Now.", "--undo-window", "1s")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "sending in 1 s: press Ctrl+C to undo") || m["id"] == nil {
		t.Fatalf("stderr %q, stdout %v", errOut, m)
	}
	if n := e.messageCount(); n != 1 {
		t.Fatalf("%d messages, want exactly one", n)
	}
}

// The window is for a message that is sent, of a sensible length.
func TestSendUndoWindowRefusals(t *testing.T) {
	e := newSendEnv(t)
	for _, args := range [][]string{
		{"--undo-window", "-1s"},
		{"--undo-window", "1h"},
		{"--undo-window", "10s", "--as", "draft"},
		{"--undo-window", "10s", "--upload-type", "media"},
	} {
		_, errOut, code := e.run(append([]string{"send", "--to", "bob@example.com", "--body", "x"}, args...)...)
		if code != 2 || !strings.Contains(errOut, "--undo-window") {
			t.Errorf("%v: exit %d, %q: want a usage error naming --undo-window", args, code, errOut)
		}
	}
	if n := e.messageCount(); n != 0 {
		t.Fatalf("%d messages sent by refused commands", n)
	}
}

// lastRecordIfAny is lastRecord, or nil while the journal holds none.
func (e *sendEnv) lastRecordIfAny() *transfer.Record {
	j, err := transfer.OpenJournal(e.state)
	if err != nil {
		return nil
	}
	recs, _ := j.List()
	var last *transfer.Record
	for _, r := range recs {
		if last == nil || r.Created.After(last.Created) || r.Created.Equal(last.Created) && r.ID > last.ID {
			last = r
		}
	}
	return last
}

// lockedBuffer is a buffer a command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// `carrier send --at` holds the message until its time: every byte but
// the last is with the server first, nothing is sent before the time,
// the message's Date is the time, and it is sent once.
func TestSendAtSendsOnceAtItsTime(t *testing.T) {
	e := newSendEnv(t)
	defer func(f func() time.Time) { sendLaterNow = f }(sendLaterNow)
	sendLaterNow = func() time.Time { return time.Now().Add(-time.Minute) } // Send later's minute, passed at once
	at := time.Now().Add(4 * time.Second).Truncate(time.Second)
	errOut := &lockedBuffer{}
	var out bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: errOut}, []string{"send", "--to", "bob@example.com", "--subject", "Later", "--body", "At its time.",
			"--at", at.Format(time.RFC3339), "--endpoint", e.url, "--token", "tok", "--state-dir", e.state, "--retry-base", "10ms"})
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r := e.lastRecordIfAny(); r != nil && r.State == transfer.StateScheduled {
			if !r.SendAt.Equal(at) {
				t.Errorf("scheduled for %s, want %s", r.SendAt, at)
			}
			break
		}
		if time.Now().After(deadline) || !time.Now().Before(at) {
			t.Fatalf("the message did not wait for its time before it came; stderr:\n%s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := e.messageCount(); n != 0 {
		t.Fatalf("%d messages before the time, want none", n)
	}
	for _, cmd := range []string{"jobs", "status"} {
		var list bytes.Buffer
		Main(context.Background(), &Env{Stdout: &list, Stderr: &list}, []string{cmd, "--state-dir", e.state})
		if want := "sending at " + at.Local().Format(time.DateTime); !strings.Contains(list.String(), want) {
			t.Errorf("carrier %s does not say %q:\n%s", cmd, want, list.String())
		}
	}
	if !strings.Contains(errOut.String(), "scheduled for "+at.Format("2006-01-02 15:04")) || !strings.Contains(errOut.String(), "Ctrl+C leaves it scheduled") {
		t.Errorf("stderr does not say when the message goes:\n%s", errOut.String())
	}
	if c := <-code; c != 0 {
		t.Fatalf("exit %d:\n%s", c, errOut.String())
	}
	if time.Now().Before(at) {
		t.Fatal("carrier send --at ended before the time")
	}
	if n := e.messageCount(); n != 1 {
		t.Fatalf("%d messages, want exactly one", n)
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil || m["id"] == nil {
		t.Fatalf("stdout %q: %v", out.String(), err)
	}
	raw := string(e.raw(m["id"].(string)))
	if want := "Date: " + at.Format("Mon, 02 Jan 2006 15:04:05 -0700"); !strings.Contains(raw, want) {
		t.Errorf("the message does not say it was sent at its time (%q):\n%.400s", want, raw)
	}
}

// --at refuses, in words and before anything goes, a time that passed,
// one too far ahead, what it cannot read, and what it is not for.
func TestSendAtRefusals(t *testing.T) {
	e := newSendEnv(t)
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--at", time.Now().Add(-time.Hour).Format(time.RFC3339)}, "that time has passed"},
		{[]string{"--at", time.Now().Add(367 * 24 * time.Hour).Format(time.RFC3339)}, "at most a year ahead"},
		{[]string{"--at", "tomorrowish"}, "is not a time Carrier reads"},
		{[]string{"--at", "09:00", "--as", "draft"}, "not for a draft"},
		{[]string{"--at", "09:00", "--undo-window", "10s"}, "not both"},
		{[]string{"--at", "09:00", "--upload-type", "media"}, "needs --upload-type resumable"},
	} {
		_, errOut, code := e.run(append([]string{"send", "--to", "bob@example.com", "--body", "x"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, "--at") || !strings.Contains(errOut, c.says) {
			t.Errorf("%v: exit %d, %q: want a usage error naming --at that says %q", c.args, code, errOut, c.says)
		}
	}
	if n := e.messageCount(); n != 0 {
		t.Fatalf("%d messages sent by refused commands", n)
	}
}

func TestWaitWords(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{4 * time.Second, "4 s"},
		{59*time.Second + 400*time.Millisecond, "59 s"},
		{12*time.Minute + 20*time.Second, "12 min"},
		{3*time.Hour + 5*time.Minute, "3 h 5 min"},
		{2 * time.Hour, "2 h"},
		{50 * time.Hour, "2 days 2 h"},
	} {
		if got := waitWords(c.d); got != c.want {
			t.Errorf("%s: %q, want %q", c.d, got, c.want)
		}
	}
}

// A time more than six days ahead: nothing is uploaded yet (Google keeps
// an unfinished upload for a week), the command and `carrier jobs` say
// when the upload starts, and Ctrl+C leaves it scheduled.
func TestSendAtFarAheadStartsItsUploadLater(t *testing.T) {
	e := newSendEnv(t)
	at := time.Now().Add(10 * 24 * time.Hour).Truncate(time.Minute)
	from := at.Add(-transfer.ScheduleLead).Local().Format("2006-01-02 15:04")
	errOut := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- Main(ctx, &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: errOut}, []string{"send", "--to", "bob@example.com", "--subject", "Far", "--body", "In ten days.",
			"--at", at.Format(time.RFC3339), "--endpoint", e.url, "--token", "tok", "--state-dir", e.state, "--retry-base", "10ms"})
	}()
	deadline := time.Now().Add(30 * time.Second)
	var rec *transfer.Record
	for rec == nil || rec.State != transfer.StateScheduled {
		if time.Now().After(deadline) {
			t.Fatalf("the message was not scheduled; stderr:\n%s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
		rec = e.lastRecordIfAny()
	}
	if rec.Session != "" || rec.Confirmed != 0 {
		t.Errorf("a message for ten days ahead opened its session now (%d bytes confirmed): it would expire before the time", rec.Confirmed)
	}
	var list bytes.Buffer
	Main(context.Background(), &Env{Stdout: &list, Stderr: &list}, []string{"jobs", "--state-dir", e.state})
	if want := "its upload starts " + at.Add(-transfer.ScheduleLead).Local().Format(time.DateTime); !strings.Contains(list.String(), want) {
		t.Errorf("carrier jobs does not say %q:\n%s", want, list.String())
	}
	for !strings.Contains(errOut.String(), "scheduled for") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(errOut.String(), "its upload starts "+from) {
		t.Errorf("stderr does not say when the upload starts (%s):\n%s", from, errOut.String())
	}
	cancel()
	if c := <-code; c == 0 {
		t.Errorf("Ctrl+C before the time exited 0:\n%s", errOut.String())
	}
	if r := e.lastRecordIfAny(); r == nil || r.State != transfer.StateScheduled {
		t.Fatalf("after Ctrl+C the message is %v, want still scheduled", r)
	}
	if n := e.messageCount(); n != 0 {
		t.Fatalf("%d messages, want none", n)
	}
}
