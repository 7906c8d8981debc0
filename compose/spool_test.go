package compose

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// countWrites counts the writes that reach the spool file.
type countWrites struct {
	w io.Writer
	n *int
}

func (c countWrites) Write(p []byte) (int, error) { *c.n++; return c.w.Write(p) }

func bigAttachment(tb testing.TB, size int) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "big.bin")
	if err := os.WriteFile(p, randBytes(5, size), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// The spool is written in large blocks: a 25 MiB attachment (34 MB of
// base64 in 76-byte lines) reaches the file in a few hundred writes, not
// two per line.
func TestSpoolWrittenInLargeBlocks(t *testing.T) {
	att := bigAttachment(t, 25<<20)
	writes := 0
	old := spoolSink
	spoolSink = func(f *os.File) io.Writer { return countWrites{f, &writes} }
	t.Cleanup(func() { spoolSink = old })
	sp, err := Build(context.Background(), &Message{To: []string{"a@b.example"}, Attachments: []string{att}}, Send, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if writes >= 1000 {
		t.Fatalf("%d writes to the spool file for %d bytes; want under 1000", writes, sp.Size)
	}
	t.Logf("%d writes for %d bytes", writes, sp.Size)
}

// BenchmarkComposeAttachment25MiB builds a message with a 25 MiB
// attachment into the spool (fsync included). The goal is under 0.3 s of
// CPU per message: see cpu-s/op.
func BenchmarkComposeAttachment25MiB(b *testing.B) {
	att := bigAttachment(b, 25<<20)
	m := &Message{To: []string{"a@b.example"}, Subject: "bench", Text: "see attached", Attachments: []string{att}}
	dir := b.TempDir()
	b.SetBytes(25 << 20)
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		sp, err := Build(context.Background(), m, Send, dir)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.Remove(sp.Path)
		b.StartTimer()
	}
	b.StopTimer()
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric((cpu / time.Duration(b.N)).Seconds(), "cpu-s/op")
	}
}
