package sandbox

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// Buckets of the store. Bytes never go into bbolt: partial uploads live in
// uploads/, finished media in blobs/, so the database stays small and a
// 150 MiB message is written once, streamed.
var (
	bSessions    = []byte("sessions")
	bMessages    = []byte("messages")
	bThreads     = []byte("threads")
	bDrafts      = []byte("drafts")
	bTimeline    = []byte("timeline")
	bAttachments = []byte("attachments")
	bObjects     = []byte("objects")
	bMeta        = []byte("meta")
	allBuckets   = [][]byte{bSessions, bMessages, bThreads, bDrafts, bTimeline, bAttachments, bObjects, bMeta, bOAuth}
)

var errNoRecord = errors.New("no such record")

func getJSON(tx *bolt.Tx, bucket []byte, key string, v any) error {
	data := tx.Bucket(bucket).Get([]byte(key))
	if data == nil {
		return errNoRecord
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("store: %s/%s is damaged: %w", bucket, key, err)
	}
	return nil
}

func putJSON(tx *bolt.Tx, bucket []byte, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Bucket(bucket).Put([]byte(key), data)
}

// forEach decodes every record of a bucket into a fresh T.
func forEach[T any](tx *bolt.Tx, bucket []byte, fn func(key string, v *T) error) error {
	return tx.Bucket(bucket).ForEach(func(k, data []byte) error {
		v := new(T)
		if err := json.Unmarshal(data, v); err != nil {
			return fmt.Errorf("store: %s/%s is damaged: %w", bucket, k, err)
		}
		return fn(string(k), v)
	})
}

// nextSeq returns a store-wide increasing counter; it orders records
// (newest first) and serves as Gmail's historyId.
func nextSeq(tx *bolt.Tx) uint64 {
	m := tx.Bucket(bMeta)
	var n uint64
	if v := m.Get([]byte("seq")); len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	n++
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], n)
	m.Put([]byte("seq"), buf[:])
	return n
}

func currentSeq(tx *bolt.Tx) uint64 {
	if v := tx.Bucket(bMeta).Get([]byte("seq")); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand panics on its own if the OS cannot give randomness)
	return b
}

// newUploadID is 128 bits of randomness: a session URI is a bearer
// capability, so it must not be guessable.
func newUploadID() string { return base64.RawURLEncoding.EncodeToString(randomBytes(16)) }

// newHexID is a Gmail-style id: 16 hex digits.
func newHexID() string { return hex.EncodeToString(randomBytes(8)) }

// writeFileSync replaces nothing: it is for new private files only.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

func (s *Sandbox) uploadPath(id string) string { return filepath.Join(s.dir, "uploads", id+".part") }
func (s *Sandbox) blobPath(name string) string { return filepath.Join(s.dir, "blobs", name) }
