package main

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"carrier/transfer"
)

// probes are the costs that explain the uploads' times, each measured on
// its own in this process.
type probes struct {
	sha256                 time.Duration // the engine's SHA-256 pass over the test file
	md5crc                 time.Duration // the sandbox's md5 + crc32c over the test file
	journal                time.Duration // one transfer.Journal.Save (median)
	fsyncSmall, fsyncLarge time.Duration // write + fsync of a 1 MiB and an 8 MiB chunk (median)
}

func runProbes(ctx context.Context, cfg *config, tf *testFile) (probes, error) {
	var p probes
	var err error
	logf("probes: hashing, journal, disk")
	if p.sha256, err = medianOf(3, func() error { return hashPass(tf.path, 256<<10, sha256.New()) }); err != nil {
		return p, err
	}
	if p.md5crc, err = medianOf(3, func() error {
		return hashPass(tf.path, 64<<10, md5.New(), crc32.New(crc32.MakeTable(crc32.Castagnoli)))
	}); err != nil {
		return p, err
	}
	if p.journal, err = journalProbe(cfg.work); err != nil {
		return p, err
	}
	if p.fsyncSmall, err = fsyncProbe(cfg.work, 1<<20); err != nil {
		return p, err
	}
	if p.fsyncLarge, err = fsyncProbe(cfg.work, 8<<20); err != nil {
		return p, err
	}
	return p, ctx.Err()
}

// hashPass reads the file as the engine (a 256 KiB buffer) or the sandbox
// (64 KiB) does and feeds the hashes; the file is in the page cache, so
// this is their CPU cost alone.
func hashPass(path string, bufSize int, hs ...io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, bufSize)
	_, err = io.CopyBuffer(io.MultiWriter(hs...), struct{ io.Reader }{f}, buf)
	return err
}

// journalProbe times what Carrier does after every confirmed chunk: write
// the job's record durably (temporary file, fsync, rename, fsync of the
// folder), with the engine's own code.
func journalProbe(work string) (time.Duration, error) {
	dir, err := os.MkdirTemp(work, "journal-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	j, err := transfer.OpenJournal(dir)
	if err != nil {
		return 0, err
	}
	rec := &transfer.Record{
		Version: 1, ID: "probe", Created: time.Now(), URL: "http://127.0.0.1:1/upload/storage/v1/b/bench/o?name=probe",
		Method: "POST", Type: transfer.Resumable, ContentType: "application/octet-stream", Path: filepath.Join(dir, "file"),
		Size: 1 << 30, ChunkSize: defaultChunk, State: transfer.StateQueued,
		SHA256:  "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Session: "http://127.0.0.1:1/upload/storage/v1/b/bench/o?uploadType=resumable&upload_id=probe",
	}
	i := int64(0)
	return medianOf(40, func() error {
		i++
		rec.Confirmed = min(i*defaultChunk, rec.Size)
		rec.Updated = time.Now()
		return j.Save(rec)
	})
}

// fsyncProbe times writing n bytes to a new file and fsyncing it, as the
// durable sandbox does with every chunk.
func fsyncProbe(work string, n int) (time.Duration, error) {
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(i*7 + i>>9) // not zeros: no filesystem may skip them
	}
	dir, err := os.MkdirTemp(work, "fsync-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	k := 0
	return medianOf(16, func() error {
		k++
		f, err := os.Create(filepath.Join(dir, "chunk"+string(rune('a'+k%26))))
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.Write(buf); err != nil {
			return err
		}
		return f.Sync()
	})
}

func medianOf(n int, f func() error) (time.Duration, error) {
	ds := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(start))
	}
	return medianDur(ds), nil
}

func medianDur(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
