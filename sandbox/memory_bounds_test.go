package sandbox

import (
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"carrier/internal/memtest"
)

// The memory findings of issue 11, each as the request that cost memory.
// BenchmarkPeakRSS measures the whole process; these watch the heap.

func (e *testEnv) stream(method, path, ctype string, body io.Reader) (int, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, body)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	r, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer r.Body.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(r.Body, head)
	io.Copy(io.Discard, r.Body)
	return r.StatusCode, head[:n]
}

const lineOfText = "The quick brown fox jumps over the lazy dog, again and again and again.\r\n"

func bigMail(n int64) io.Reader {
	return io.MultiReader(strings.NewReader("Subject: big\r\nContent-Type: text/plain\r\n\r\n"), &genReader{n: n, line: lineOfText})
}

func TestRawJSONIsStreamedIn(t *testing.T) {
	e := newEnv(t)
	const size = 24 << 20
	runtime.GC()
	var code int
	var out []byte
	peak := memtest.PeakHeap(func() {
		body := io.MultiReader(strings.NewReader(`{"labelIds":["INBOX"], "raw": "`), base64Of(bigMail(size)), strings.NewReader(`" }`))
		code, out = e.stream("POST", "/gmail/v1/users/me/messages", "application/json", body)
	})
	if code != 200 {
		t.Fatalf("insert by the metadata URI: %d %s", code, out)
	}
	t.Logf("peak heap %.1f MiB for a %d MiB message as JSON", float64(peak)/(1<<20), size>>20)
	if peak > 16<<20 {
		t.Fatalf("the heap reached %.1f MiB", float64(peak)/(1<<20))
	}
	var m struct{ ID string }
	json.Unmarshal(out, &m)
	got := e.do("GET", "/gmail/v1/users/me/messages/"+m.ID+"?format=metadata", auth(), nil).json(t)
	if got["sizeEstimate"].(float64) < size || !strings.Contains(string(e.do("GET", "/gmail/v1/users/me/messages/"+m.ID, auth(), nil).body), "quick brown fox") {
		t.Fatalf("stored: %v", got)
	}
}

func TestRawJSONShapes(t *testing.T) {
	e := newEnv(t)
	mail := "Subject: s\r\n\r\nhello?>"
	url := "U3ViamVjdDogcw0KDQpoZWxsbz8-"          // base64url, unpadded
	std := "U3ViamVjdDogcw0KDQpoZWxsbz8+"          // standard alphabet
	escaped := `U3ViamVjdDogcw0KDQpoZWxsbz8\u002d` // a JSON escape inside
	for _, c := range []struct {
		name, body string
		code       int
	}{
		{"base64url", `{"raw":"` + url + `"}`, 200},
		{"padded", `{"raw":"` + url + `=="}`, 200},
		{"standard alphabet", `{"raw":"` + std + `"}`, 200},
		{"escaped", `{"raw":"` + escaped + `"}`, 200},
		{"under message", `{"message":{"threadId":"","raw":"` + url + `"}}`, 200},
		{"raw first wins over message", `{"message":{"raw":"eA"},"raw":"` + url + `"}`, 200},
		{"mixed alphabets", `{"raw":"U3ViamVjdDogcw0KDQpoZWxsbz8-+/"}`, 400},
		{"not base64", `{"raw":"***"}`, 400},
		{"not JSON", `{"raw":"` + url + `"`, 400},
		{"trailing data", `{"raw":"` + url + `"} x`, 400},
		{"raw a number", `{"raw":12}`, 400},
		{"empty", `{"raw":""}`, 400},
		{"control character", "{\"raw\":\"U3Vi\x01\"}", 400},
	} {
		r := e.do("POST", "/gmail/v1/users/me/messages", auth("Content-Type", "application/json"), []byte(c.body))
		if r.code != c.code {
			t.Errorf("%s: %d %s, want %d", c.name, r.code, r.body, c.code)
			continue
		}
		if c.code == 200 {
			id := r.json(t)["id"].(string)
			raw := e.do("GET", "/gmail/v1/users/me/messages/"+id+"?format=raw", auth(), nil).json(t)["raw"].(string)
			if want := "U3ViamVjdDogcw0KDQpoZWxsbz8-"; strings.TrimRight(raw, "=") != want {
				t.Errorf("%s: stored %q, want %q (%q)", c.name, raw, want, mail)
			}
		}
	}
}

func TestFormatRawIsStreamedOut(t *testing.T) {
	e := newEnv(t)
	const size = 32 << 20
	code, out := e.stream("POST", "/upload/gmail/v1/users/me/messages?uploadType=media", "message/rfc822", bigMail(size))
	if code != 200 {
		t.Fatalf("insert: %d %s", code, out)
	}
	var m struct{ ID string }
	json.Unmarshal(out, &m)
	runtime.GC()
	peak := memtest.PeakHeap(func() {
		if code, out := e.stream("GET", "/gmail/v1/users/me/messages/"+m.ID+"?format=raw", "", nil); code != 200 || !strings.Contains(string(out), `"raw": "U3ViamVjdDogYmln`) {
			t.Errorf("format=raw: %d %.200s", code, out)
		}
	})
	t.Logf("peak heap %.1f MiB for format=raw of %d MiB", float64(peak)/(1<<20), size>>20)
	if peak > 16<<20 {
		t.Fatalf("the heap reached %.1f MiB", float64(peak)/(1<<20))
	}
}

func countParts(p map[string]any) int {
	n := 1
	parts, _ := p["parts"].([]any)
	for _, c := range parts {
		n += countParts(c.(map[string]any))
	}
	return n
}

func TestMIMEShapesAreBounded(t *testing.T) {
	e := newEnv(t)
	parts := io.MultiReader(strings.NewReader("Subject: parts\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"),
		&genReader{n: 400000 * 7, line: "--b\r\n\r\n"}, strings.NewReader("--b--\r\n"))
	headers := io.MultiReader(&genReader{n: 1<<20 - 4, line: "a:\n"}, strings.NewReader("\r\n\r\nx"))
	for name, body := range map[string]io.Reader{"400,000 empty parts": parts, "1 MiB of header lines": headers} {
		var code int
		var out []byte
		runtime.GC()
		peak := memtest.PeakHeap(func() {
			code, out = e.stream("POST", "/upload/gmail/v1/users/me/messages?uploadType=media", "message/rfc822", body)
		})
		if code != 200 {
			t.Fatalf("%s: %d %s", name, code, out)
		}
		var m struct{ ID string }
		json.Unmarshal(out, &m)
		full := e.do("GET", "/gmail/v1/users/me/messages/"+m.ID+"?format=full", auth(), nil)
		var res struct {
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal(full.body, &res); err != nil || full.code != 200 {
			t.Fatalf("%s: format=full %d %v", name, full.code, err)
		}
		hs, _ := res.Payload["headers"].([]any)
		t.Logf("%s: peak heap %.1f MiB, %d parts, %d header fields", name, float64(peak)/(1<<20), countParts(res.Payload), len(hs))
		if n := countParts(res.Payload); n > maxParts {
			t.Errorf("%s: %d parts read", name, n)
		}
		if len(hs) > maxHeaderLines {
			t.Errorf("%s: %d header fields kept", name, len(hs))
		}
		if peak > 64<<20 {
			t.Errorf("%s: the heap reached %.1f MiB", name, float64(peak)/(1<<20))
		}
	}
}

// TestMessagesAreParsedOutsideTheWriteTransaction writes to the store
// while a message is being parsed: bbolt has one writer, so a parse inside
// the write transaction would keep this write (and every upload) waiting.
func TestMessagesAreParsedOutsideTheWriteTransaction(t *testing.T) {
	e := newEnv(t)
	var wrote atomic.Bool
	var once sync.Once
	parseHook = func() func() {
		once.Do(func() {
			done := make(chan struct{})
			go func() {
				e.sb.db.Update(func(*bolt.Tx) error { return nil })
				close(done)
			}()
			select {
			case <-done:
				wrote.Store(true)
			case <-time.After(5 * time.Second):
			}
		})
		return func() {}
	}
	t.Cleanup(func() { parseHook = nil })
	e.sendMail("/upload/gmail/v1/users/me/messages/send", "", testMail)
	if !wrote.Load() {
		t.Fatal("a write waited for a message's parse: the parse runs inside the write transaction")
	}
}

// TestHeavyRequestsAreBounded sends many format=full reads and uploads at
// once: no more than HeavyRequests parse at the same time.
func TestHeavyRequestsAreBounded(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.HeavyRequests = 2 })
	id := e.sendMail("/upload/gmail/v1/users/me/messages/send", "", testMail)["id"].(string)
	var now, most atomic.Int32
	parseHook = func() func() {
		n := now.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond) // a parse that takes a while
		return func() { now.Add(-1) }
	}
	t.Cleanup(func() { parseHook = nil })
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				e.stream("GET", "/gmail/v1/users/me/messages/"+id+"?format=full", "", nil)
			} else {
				e.stream("POST", "/upload/gmail/v1/users/me/messages?uploadType=media", "message/rfc822", strings.NewReader(testMail))
			}
		}()
	}
	wg.Wait()
	if m := most.Load(); m > 2 || m < 1 {
		t.Fatalf("%d parses at once, want at most 2", m)
	}
}
