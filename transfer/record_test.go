package transfer

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func goodRecord() *Record {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	return &Record{
		Version: recordVersion, ID: "20300102T030405-abcdef01", Created: t0,
		URL: "https://h/upload/x?name=a", Method: "POST", Type: Resumable, ContentType: "message/rfc822",
		Metadata: json.RawMessage(`{"a":1}`), Path: "/tmp/f", Size: 10, ModTime: t0,
		SHA256: strings.Repeat("ab", 32), ChunkSize: ChunkQuantum, State: StateQueued,
		Session: "https://h/upload/x?upload_id=1", SessionStarted: t0, Confirmed: 5, Updated: t0,
	}
}

func TestRecordRoundTrip(t *testing.T) {
	r := goodRecord()
	data, err := EncodeRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := EncodeRecord(back)
	if string(again) != string(data) {
		t.Errorf("round trip changed the record:\n%s\n%s", data, again)
	}
}

func TestDecodeRecordRefuses(t *testing.T) {
	cases := map[string]func(r *Record){
		"version":           func(r *Record) { r.Version = 2 },
		"id with slash":     func(r *Record) { r.ID = "../x" },
		"method":            func(r *Record) { r.Method = "GET" },
		"type":              func(r *Record) { r.Type = "simple" },
		"content type CRLF": func(r *Record) { r.ContentType = "a\r\nX-Evil: 1" },
		"size":              func(r *Record) { r.Size = -1 },
		"confirmed > size":  func(r *Record) { r.Confirmed = 11 },
		"chunk":             func(r *Record) { r.ChunkSize = 1000 },
		"state":             func(r *Record) { r.State = "lost" },
		"hash":              func(r *Record) { r.SHA256 = "xyz" },
		"url":               func(r *Record) { r.URL = "file:///etc/passwd" },
		"session":           func(r *Record) { r.Session = "/relative" },
		"done w/o response": func(r *Record) { r.State = StateDone },
		"response status":   func(r *Record) { r.Response = &Response{Status: 1000} },
	}
	for name, mutate := range cases {
		r := goodRecord()
		mutate(r)
		data, _ := json.Marshal(r)
		if _, err := DecodeRecord(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, raw := range []string{``, `{`, `[]`, `{"version":1,"bogus":2}`, `{"version":1}{}`} {
		if _, err := DecodeRecord([]byte(raw)); err == nil {
			t.Errorf("%q: accepted", raw)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	data, _ := EncodeRecord(goodRecord())
	f.Add(data)
	f.Add([]byte(`{"version":1,"id":"a"}`))
	f.Add([]byte(`{"version":1,"id":"a","confirmed":-1,"size":1e30}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeRecord(data)
		if err != nil {
			return
		}
		// Whatever it accepts must be a record it would write itself.
		out, err := EncodeRecord(r)
		if err != nil {
			t.Fatalf("accepted a record it cannot encode: %v", err)
		}
		if _, err := DecodeRecord(out); err != nil {
			t.Fatalf("cannot read its own output: %v", err)
		}
	})
}
