package app

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"net/http"
	"testing"

	"carrier/sandbox"
)

// The embedded sandbox answers the client's proof itself: the token goes
// to it on the strength of the MAC, not of the fallback checks.
func TestTheSandboxProvesItServesItsFolder(t *testing.T) {
	dir := t.TempDir()
	e, err := StartEmbedded(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	nonce := make([]byte, 32)
	rand.Read(nonce)
	mac, err := HTTPProver{}.Prove(context.Background(), e.URL, nonce)
	if err != nil {
		t.Fatalf("the sandbox gives no proof: %v", err)
	}
	if !hmac.Equal(mac, sandbox.ProofMAC(e.Token, nonce, mustPort(e.URL))) {
		t.Fatal("the sandbox's proof does not check out")
	}
	if tok, err := VerifiedToken(context.Background(), dir, e.URL, nil); err != nil || tok != e.Token {
		t.Fatalf("verified token: %q %v", tok, err)
	}
	// A bad nonce is refused, and the proof needs no credential.
	r, err := http.Get(e.URL + "/sandbox/v1/proof?nonce=short")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusBadRequest {
		t.Errorf("a short nonce: %d", r.StatusCode)
	}
}
