package main

import (
	"bufio"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// testFile is a file to upload with what the sandbox must report for it.
type testFile struct {
	path string
	size int64
	md5  string // base64, as in the Object resource's md5Hash
}

// prepareFile makes (or finds from an earlier run) size bytes of
// pseudo-random data: incompressible, so nothing on the way can shrink
// it, and the same bytes every time, so runs compare. Its md5 is kept next
// to it, because hashing a gibibyte again on every run costs seconds.
func prepareFile(dir string, size int64) (*testFile, error) {
	path := filepath.Join(dir, fmt.Sprintf("data-%d.bin", size))
	tf := &testFile{path: path, size: size}
	if fi, err := os.Stat(path); err == nil && fi.Size() == size {
		if sum, err := os.ReadFile(path + ".md5"); err == nil && len(strings.TrimSpace(string(sum))) > 0 {
			tf.md5 = strings.TrimSpace(string(sum))
			return tf, warm(path)
		}
	}
	logf("writing a %s test file at %s", human(size), path)
	f, err := os.OpenFile(path+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	rng := rand.NewChaCha8([32]byte{'c', 'a', 'r', 'r', 'i', 'e', 'r'})
	h := md5.New()
	w := bufio.NewWriterSize(io.MultiWriter(f, h), 4<<20)
	if _, err := io.CopyN(w, rng, size); err != nil {
		f.Close()
		return nil, err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return nil, err
	}
	tf.md5 = base64.StdEncoding.EncodeToString(h.Sum(nil))
	return tf, os.WriteFile(path+".md5", []byte(tf.md5+"\n"), 0o600)
}

// prepareSlice writes the first n bytes of tf to a file of its own: the
// small upload of the fixed-cost probe, and the parts of the concurrency
// test.
func prepareSlice(tf *testFile, dir, name string, n int64) (*testFile, error) {
	path := filepath.Join(dir, fmt.Sprintf("%s-%d-of-%d.bin", name, n, tf.size))
	in, err := os.Open(tf.path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	h := md5.New()
	if _, err := io.CopyN(io.MultiWriter(out, h), in, n); err != nil {
		out.Close()
		return nil, err
	}
	if err := out.Close(); err != nil {
		return nil, err
	}
	return &testFile{path: path, size: n, md5: base64.StdEncoding.EncodeToString(h.Sum(nil))}, nil
}

// warm reads a file once so that every contender finds it in the page
// cache: the first one measured must not pay for the disk alone.
func warm(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

// human writes a byte count in binary units.
func human(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// sizeFlag writes a byte count as -size takes it.
func sizeFlag(n int64) string {
	switch {
	case n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprint(n)
}
