package app

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"carrier/internal/app/message"
	"carrier/internal/apptest"
	"carrier/transfer"
)

func finished(t *testing.T, q *Queue, id string) transfer.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := q.Wait(ctx, id)
	if err != nil {
		t.Fatalf("job %s: %v", id, err)
	}
	if s.State != transfer.StateDone {
		t.Fatalf("job %s (%s) ended %s: %s", id, s.Label, s.State, s.Error)
	}
	return s
}

// A Drive upload names the SHA-256 Drive reports, so the hash computed as
// the bytes go out is both its source check and its verification: one
// pass over the file. Left unnamed, the engine keeps a CRC32C for the
// source check and reads the whole file once more at the end to compare
// Drive's SHA-256, and the upload still succeeds: only the record shows it.
func TestDriveUploadNamesSHA256(t *testing.T) {
	sb, state := testSandbox(t), t.TempDir()
	q := openTestQueue(t, state, sb.Token, nil)
	data := make([]byte, 600<<10)
	rand.Read(data)
	p := filepath.Join(t.TempDir(), "report.bin")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	d := Drive{Root: sb.URL, Auth: transfer.StaticToken(sb.Token)}
	jobs, err := q.DriveUpload(context.Background(), d, p, message.ShareAnyone, nil, 0, func(s *transfer.Spec) { s.ChunkSize = 256 << 10 })
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range jobs {
		finished(t, q, id)
	}
	r := apptest.StoredRecord(t, state, jobs[0])
	if !slices.Equal(r.Checksums, []string{transfer.SumSHA256}) || r.SourceSum != "" {
		t.Fatalf("the Drive job names sums %q and keeps source sum %q; want the SHA-256 named and kept as the source check", r.Checksums, r.SourceSum)
	}
	if r.Verified != transfer.SumSHA256 {
		t.Fatalf("the Drive job was verified by %q, want Drive's SHA-256", r.Verified)
	}
}

// A raw file to Gmail (as `carrier upload` queues it) names no sum, since
// Gmail reports none: its source check is a CRC32C, a fraction of the
// SHA-256's cost. (A Photos upload's: photos' TestPhotosUploadKeepsCRC32C.)
func TestRawGmailKeepsCRC32C(t *testing.T) {
	sb, state := testSandbox(t), t.TempDir()
	q := openTestQueue(t, state, sb.Token, nil)
	eml := filepath.Join(t.TempDir(), "note.eml")
	if err := os.WriteFile(eml, []byte("To: zoe@example.com\r\nSubject: Note\r\nContent-Type: text/plain\r\n\r\nHello\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := sb.URL + "/upload/gmail/v1/users/me/messages/send"
	id, err := q.Add(transfer.Spec{URL: target, Method: "POST", Type: transfer.Resumable, ContentType: "message/rfc822", Path: eml,
		Checksums: Checksums(target, false)})
	if err != nil {
		t.Fatal(err)
	}
	finished(t, q, id)
	if r := apptest.StoredRecord(t, state, id); r.SourceSum != transfer.SumCRC32C || len(r.Checksums) != 0 {
		t.Fatalf("the raw Gmail job keeps source sum %q and names %q; want a CRC32C and nothing named", r.SourceSum, r.Checksums)
	}
}
