package main

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"carrier/internal/nettest"
	"carrier/sandbox"
)

// The reference client of the flaky-link comparison finishes an upload
// whose requests the server resets part-way, going on each time from
// where the server says (it keeps what arrived): the object is the file,
// byte for byte, made once, and no byte reached the server twice. The
// sandbox's faults are seeded, so the same requests fail on every
// machine, however loaded.
func TestReferenceClientGoesOnFromWhereTheServerSays(t *testing.T) {
	srv, err := nettest.StartSandbox(sandbox.Options{Dir: t.TempDir(), Token: token, NoSync: true, Faults: "seed=7,reset=0.7"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	data := make([]byte, 6<<20+12345)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rc := &refClient{hc: &http.Client{Timeout: time.Minute}, f: f, size: int64(len(data)), rtt: time.Hour}
	defer rc.hc.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := rc.start(ctx, srv.URL+"/upload/storage/v1/b/netbench/o?uploadType=resumable&name=ref"); err != nil {
		t.Fatal(err)
	}
	if err := rc.send(ctx); err != nil {
		t.Fatal(err)
	}
	st := srv.SB.Stats()
	if st.FaultsInjected == 0 || st.Completions != 1 {
		t.Fatalf("%d faults injected, %d objects made; want some faults and one object", st.FaultsInjected, st.Completions)
	}
	if st.BytesReceived != int64(len(data)) {
		t.Errorf("the server received %d media bytes for a file of %d: bytes it held were sent again", st.BytesReceived, len(data))
	}
	req, _ := http.NewRequest("GET", srv.URL+"/storage/v1/b/netbench/o/"+url.PathEscape("ref")+"?alt=media", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("reading the object back: %s, %v", resp.Status, err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("the object is %d bytes and not the file (%d bytes)", len(got), len(data))
	}
}
