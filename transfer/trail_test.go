package transfer

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// swallowingTransport stands for the kernel's buffers and a buffering
// proxy: it takes a chunk's whole body at once, then keeps the answer
// back, moving the injected clock, until the sink was told how far the
// bytes went (or it gives up, and the test fails).
type swallowingTransport struct {
	clock *FakeClock
	sink  *recSink
	size  int64
	told  int64 // what the sink knew when the answer went
}

func (s *swallowingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	answer := func(code int, h http.Header, body string) *http.Response {
		return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}
	}
	if r.URL.Query().Get("uploadType") == "resumable" {
		return answer(http.StatusOK, http.Header{"Location": {"http://upload.test/session/1"}}, ""), nil
	}
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		s.sink.mu.Lock()
		told := s.sink.maxSent
		s.sink.mu.Unlock()
		s.told = told
		if told == s.size {
			break
		}
		s.clock.Advance(50 * time.Millisecond)
		time.Sleep(time.Millisecond)
	}
	return answer(http.StatusOK, http.Header{"Content-Type": {"application/json"}}, `{"id":"x"}`), nil
}

// Issue 13: the bytes a buffer swallowed in one burst are shown as sent
// within the throttle's interval, not only when the answer comes.
func TestSwallowedBurstIsReportedBeforeTheAnswer(t *testing.T) {
	const size = 512 << 10
	clock := NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	sink := &recSink{}
	tr := &swallowingTransport{clock: clock, sink: sink, size: size}
	u := NewUploader(Uploader{Clock: clock, Client: &http.Client{Transport: tr}})
	path, _ := writeFile(t, size)
	rec := uploadRecord(t, "http://upload.test/upload/x", path, DefaultChunkSize)
	if _, err := u.Upload(ctxT(t), Work{Record: rec, Sink: sink}); err != nil {
		t.Fatal(err)
	}
	if tr.told != size {
		t.Fatalf("while the answer was kept back the sink was told %d bytes were sent, want all %d", tr.told, size)
	}
}
