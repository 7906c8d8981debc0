package sandbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/http"
	"strconv"
)

// ProofPath answers a client that must know it talks to the sandbox of a
// data folder before it sends that folder's token: it sends a fresh nonce,
// and the sandbox answers an HMAC of it keyed with the token, bound to the
// port the request reached (so that a program on another port cannot
// relay the question). It needs no credential and gives none away.
const ProofPath = "/sandbox/v1/proof"

const proofLabel = "carrier-sandbox-proof/v1"

// ProofMAC is HMAC-SHA256 keyed with the token over
// "carrier-sandbox-proof/v1" LF nonce LF port: what the sandbox answers,
// and what a client that holds the token checks.
func ProofMAC(token string, nonce []byte, port string) []byte {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(proofLabel + "\n"))
	m.Write(nonce)
	m.Write([]byte("\n" + port))
	return m.Sum(nil)
}

func (s *Sandbox) serveProof(w http.ResponseWriter, r *http.Request) {
	nonce, err := base64.RawURLEncoding.DecodeString(r.URL.Query().Get("nonce"))
	if err != nil || len(nonce) != 32 {
		writeError(w, errorf(http.StatusBadRequest, "invalid", "nonce must be 32 bytes in base64url without padding"))
		return
	}
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		writeError(w, errorf(http.StatusInternalServerError, "backendError", "the connection has no local address"))
		return
	}
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		writeError(w, errorf(http.StatusInternalServerError, "backendError", "the connection's local address has no port"))
		return
	}
	if _, err := strconv.Atoi(port); err != nil {
		writeError(w, errorf(http.StatusInternalServerError, "backendError", "the connection's local port is not a number"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"mac": base64.RawURLEncoding.EncodeToString(ProofMAC(s.opts.Token, nonce, port))})
}
