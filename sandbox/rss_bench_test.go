package sandbox

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkPeakRSS runs the sandbox in a process of its own (this test
// binary, as TestRSSChild) and sends it, one at a time, the requests of
// issue 11 that cost memory, reading the child's peak resident set
// (VmHWM, reset before each request through /proc/PID/clear_refs). It
// reports the highest as peak-RSS-MiB; the goal is under 256.
//
//	go test -run '^$' -bench PeakRSS -benchtime 1x ./sandbox/
//
// Linux only. Writes about 1 GiB to a temporary folder.
func BenchmarkPeakRSS(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	for range b.N {
		peak, per := measureRSS(b)
		for _, m := range per {
			b.Logf("%-40s peak RSS %6.1f MiB", m.name, m.mib)
		}
		b.ReportMetric(peak, "peak-RSS-MiB")
	}
}

// TestRSSChild is the sandbox process of BenchmarkPeakRSS; it does
// nothing unless started by it.
func TestRSSChild(t *testing.T) {
	dir := os.Getenv("CARRIER_RSS_CHILD")
	if dir == "" {
		t.Skip("the sandbox process of BenchmarkPeakRSS")
	}
	sb, err := Open(Options{Dir: dir, Token: testToken, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }() // the parent closes stdin to stop it
	fmt.Println(URL(ln))
	sb.Serve(ctx, ln)
	sb.Close()
}

func readHWM(pid int) float64 {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// genReader yields n bytes of a repeating line without holding them.
type genReader struct {
	n    int64
	line string
	off  int
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.n <= 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && int64(k) < g.n {
		c := copy(p[k:min(len(p), k+int(g.n)-k)], g.line[g.off:])
		g.off = (g.off + c) % len(g.line)
		k += c
	}
	g.n -= int64(k)
	return k, nil
}

// base64Of streams the base64url encoding of r.
func base64Of(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		enc := base64.NewEncoder(base64.URLEncoding, pw)
		_, err := io.Copy(enc, r)
		enc.Close()
		pw.CloseWithError(err)
	}()
	return pr
}

type rssReading struct {
	name string
	mib  float64
}

func measureRSS(b *testing.B) (float64, []rssReading) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestRSSChild$", "-test.v=false")
	cmd.Env = append(os.Environ(), "CARRIER_RSS_CHILD="+b.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	base, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	base = strings.TrimSpace(base)
	pid := cmd.Process.Pid
	client := &http.Client{Timeout: 10 * time.Minute}
	do := func(method, path, ctype string, body io.Reader) (int, string) {
		req, _ := http.NewRequest(method, base+path, body)
		req.Header.Set("Authorization", "Bearer "+testToken)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		r, err := client.Do(req)
		if err != nil {
			b.Fatalf("%s %s: %v", method, path, err)
		}
		defer r.Body.Close()
		head := make([]byte, 300)
		n, _ := io.ReadFull(r.Body, head)
		io.Copy(io.Discard, r.Body)
		return r.StatusCode, string(head[:n])
	}
	const mib = 1 << 20
	text := "The quick brown fox jumps over the lazy dog, again and again and again.\r\n"
	var bigID, partsID, attID string
	idOf := func(s string) string {
		_, after, _ := strings.Cut(s, `"id": "`)
		id, _, _ := strings.Cut(after, `"`)
		return id
	}
	attacks := []struct {
		name string
		run  func()
	}{
		{"160 MiB JSON to messages.insert", func() {
			msg := io.MultiReader(strings.NewReader("Subject: big\r\nContent-Type: text/plain\r\n\r\n"), &genReader{n: 119 * mib, line: text})
			body := io.MultiReader(strings.NewReader(`{"labelIds":["INBOX"],"raw":"`), base64Of(msg), strings.NewReader(`"}`))
			code, out := do("POST", "/gmail/v1/users/me/messages", "application/json", body)
			if code != 200 {
				b.Fatalf("insert: %d %s", code, out)
			}
			bigID = idOf(out)
		}},
		{"160 MiB JSON of metadata", func() {
			body := io.MultiReader(strings.NewReader(`{"labelIds":["`), &genReader{n: 160 * mib, line: "x"}, strings.NewReader(`"]}`))
			if code, out := do("POST", "/gmail/v1/users/me/messages", "application/json", body); code != 400 {
				b.Fatalf("junk metadata: %d %s", code, out)
			}
		}},
		{"400,000 empty MIME parts", func() {
			body := io.MultiReader(strings.NewReader("Subject: parts\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"),
				&genReader{n: 400000 * 7, line: "--b\r\n\r\n"}, strings.NewReader("--b--\r\n"))
			code, out := do("POST", "/upload/gmail/v1/users/me/messages?uploadType=media", "message/rfc822", body)
			if code != 200 {
				b.Fatalf("parts: %d %s", code, out)
			}
			partsID = idOf(out)
		}},
		{"1 MiB of header lines", func() {
			body := io.MultiReader(&genReader{n: mib - 4, line: "a:\n"}, strings.NewReader("\r\n\r\nx"))
			if code, out := do("POST", "/upload/gmail/v1/users/me/messages?uploadType=media", "message/rfc822", body); code != 200 {
				b.Fatalf("headers: %d %s", code, out)
			}
		}},
		{"150 MiB attachment, multipart upload", func() {
			msg := io.MultiReader(strings.NewReader("Subject: att\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\nContent-Type: text/plain\r\n\r\nhi\r\n--x\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=a.bin\r\nContent-Transfer-Encoding: base64\r\n\r\n"),
				base64Of(&genReader{n: 100 * mib, line: text}), strings.NewReader("\r\n--x--\r\n"))
			body := io.MultiReader(strings.NewReader("--B\r\nContent-Type: application/json\r\n\r\n{}\r\n--B\r\nContent-Type: message/rfc822\r\n\r\n"), msg, strings.NewReader("\r\n--B--\r\n"))
			code, out := do("POST", "/upload/gmail/v1/users/me/messages?uploadType=multipart", "multipart/related; boundary=B", body)
			if code != 200 {
				b.Fatalf("attachment: %d %s", code, out)
			}
			attID = idOf(out)
		}},
		{"format=raw of 120 MiB", func() {
			if code, out := do("GET", "/gmail/v1/users/me/messages/"+bigID+"?format=raw", "", nil); code != 200 {
				b.Fatalf("raw: %d %s", code, out)
			}
		}},
		{"format=full of 120 MiB text", func() {
			if code, out := do("GET", "/gmail/v1/users/me/messages/"+bigID+"?format=full", "", nil); code != 200 {
				b.Fatalf("full: %d %s", code, out)
			}
		}},
		{"format=full of 400,000 parts", func() {
			if code, out := do("GET", "/gmail/v1/users/me/messages/"+partsID+"?format=full", "", nil); code != 200 {
				b.Fatalf("full: %d %s", code, out)
			}
		}},
		{"attachments.get of 133 MiB", func() {
			if code, out := do("GET", "/gmail/v1/users/me/messages/"+attID+"/attachments/att1", "", nil); code != 200 {
				b.Fatalf("attachment: %d %s", code, out)
			}
		}},
		{"format=raw of the attachment message", func() {
			if code, out := do("GET", "/gmail/v1/users/me/messages/"+attID+"?format=raw", "", nil); code != 200 {
				b.Fatalf("raw: %d %s", code, out)
			}
		}},
		{"messages.list", func() {
			if code, out := do("GET", "/gmail/v1/users/me/messages", "", nil); code != 200 {
				b.Fatalf("list: %d %s", code, out)
			}
		}},
	}
	var per []rssReading
	peak := 0.0
	for _, a := range attacks {
		os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
		a.run()
		v := readHWM(pid)
		per = append(per, rssReading{a.name, v})
		peak = max(peak, v)
	}
	return peak, per
}
