package main

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// randomBytes is a deterministic stream, so a run with the same -seed
// uploads the same bytes.
func randomBytes(seed, n uint64) []byte {
	r := rand.New(rand.NewPCG(seed, n^0x5eed))
	b := make([]byte, n)
	for i := 0; i+8 <= len(b); i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := len(b) &^ 7; i < len(b); i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

const quantum = 256 << 10

// uploadSize picks the i-th size of phase 1: the edges that break
// chunking code (empty, one byte, exact multiples of 256 KiB, one past
// them) and otherwise spread up to max.
func uploadSize(r *rand.Rand, i int, max int64) int64 {
	switch i % 20 {
	case 0:
		return int64(i/20%3) * quantum // 0, 256 KiB, 512 KiB
	case 1:
		return 1
	case 2:
		return quantum*int64(1+r.IntN(8)) + 1
	case 3:
		return quantum * int64(1+r.IntN(int(max/quantum)))
	case 4:
		return max + int64(r.IntN(quantum)) // a little over the usual, several chunks at 256 KiB
	}
	return r.Int64N(max + 1)
}

// chunkFor picks a chunk size per upload: small ones make many requests
// (many chances for a fault, the most status queries), the default one
// sends most files whole.
func chunkFor(i int) int64 {
	return []int64{quantum, 2 * quantum, 4 * quantum, 0}[i%4]
}

// rfc822 builds a message of about size bytes: headers, a text part and a
// base64 attachment, CRLF line ends, as compose would write it.
func rfc822(seed uint64, tag string, size int64) []byte {
	boundary := fmt.Sprintf("soak-%x", seed)
	var b strings.Builder
	fmt.Fprintf(&b, "From: you@carrier.sandbox\r\nTo: zoe@example.com\r\nSubject: %s\r\n", tag)
	fmt.Fprintf(&b, "Date: %s\r\nMessage-ID: <%s@soak.carrier.sandbox>\r\nMIME-Version: 1.0\r\n", time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC1123Z), tag)
	fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=%q\r\n\r\n", boundary)
	fmt.Fprintf(&b, "--%s\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nSoak message %s.\r\n", boundary, tag)
	fmt.Fprintf(&b, "--%s\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\nContent-Disposition: attachment; filename=\"%s.bin\"\r\n\r\n", boundary, tag)
	raw := randomBytes(seed, uint64(max(0, size*3/4)))
	enc := base64.StdEncoding.EncodeToString(raw)
	for len(enc) > 76 {
		b.WriteString(enc[:76])
		b.WriteString("\r\n")
		enc = enc[76:]
	}
	b.WriteString(enc)
	fmt.Fprintf(&b, "\r\n--%s--\r\n", boundary)
	return []byte(b.String())
}
