package app

import (
	"fmt"
	"net/http"
	"os"

	"carrier/internal/platform"
	"carrier/transfer"
)

// addCallData queues one API call whose body (data) is kept in the spool
// until the call is done; quote names the jobs whose results fill its
// template (transfer.Spec.Quote).
func (q *Queue) addCallData(url string, data []byte, label string, quote, needs []string) (string, error) {
	return q.addCallDataAs("", url, data, label, quote, needs)
}

// addCallDataAs is addCallData for a call that goes as account ("": as
// the jobs it needs, else the queue's).
func (q *Queue) addCallDataAs(account, url string, data []byte, label string, quote, needs []string) (string, error) {
	return q.AddCall(transfer.Spec{URL: url, Label: label, Quote: quote, Needs: needs, Account: account}, data)
}

// AddCall queues the call s (its URL, label, quotes, needs, account and
// what its record keeps) with data as its body, POSTed as JSON.
func (q *Queue) AddCall(s transfer.Spec, data []byte) (string, error) {
	if err := platform.MkdirAll(q.spool.Dir(), 0o700); err != nil {
		return "", fmt.Errorf("cannot write the spool: %w", err)
	}
	f, err := platform.CreateTemp(q.spool.Dir(), "call-*.json")
	if err != nil {
		return "", fmt.Errorf("cannot write the spool: %w", err)
	}
	path := f.Name()
	_, werr := f.Write(data)
	if werr == nil {
		werr = platform.SyncFile(f)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		// The record written next names the file: its name must be on
		// the disk first, or a power cut could keep a job without its
		// body.
		werr = platform.SyncDir(q.spool.Dir())
	}
	if werr != nil {
		os.Remove(path)
		return "", fmt.Errorf("cannot write the spool: %w", werr)
	}
	s.Method, s.Type, s.ContentType, s.Path = http.MethodPost, transfer.Call, "application/json", path
	id, err := q.Add(s)
	if err != nil {
		os.Remove(path)
		return "", err
	}
	return id, nil
}
