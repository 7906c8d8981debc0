// Package syncio has writers that several goroutines may write to at once:
// a command's own words and its progress printer on one terminal, a child
// process's output read while it runs.
package syncio

import (
	"bytes"
	"io"
	"sync"
)

// Writer passes each Write whole to W, one at a time.
type Writer struct {
	mu sync.Mutex
	W  io.Writer
}

func (l *Writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(p)
}

// Buffer is a bytes.Buffer that may be written and read at once.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
