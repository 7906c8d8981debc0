package main

import (
	"carrier/transfer"

	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// defaultChunk is `carrier upload`'s chunk size when none is given
// (transfer.DefaultChunkSize); the harness names it to label the default
// contender, and checks it against the chunk list.
const defaultChunk = transfer.DefaultChunkSize

// officialChunk is the official client's default chunk size
// (googleapi.DefaultUploadChunkSize).
const officialChunk = 16 << 20

const bucket = "bench"

type kind int

const (
	kindCurl kind = iota
	kindCarrier
	kindOfficial
)

// contender is one way of uploading the file.
type contender struct {
	id    string // short key, also in object names
	label string // for the report
	kind  kind
	chunk int64  // bytes per request; 0: the whole file in one request
	flag  bool   // carrier: pass --chunk-size (false: its default)
	bin   string // carrier: a candidate build to run instead of -carrier (-variant)
}

// measured reports whether c is the code under test at some chunk size
// (not a candidate build): the goals and the chart are about these.
func (c contender) measured() bool { return c.kind == kindCarrier && c.bin == "" }

func contenders(cfg *config) []contender {
	cs := []contender{
		{id: "curl", label: "curl -T (one PUT)", kind: kindCurl},
		{id: "carrier", label: "carrier upload (default, " + human(defaultChunk) + ")", kind: kindCarrier, chunk: defaultChunk},
	}
	for _, c := range cfg.chunks {
		cs = append(cs, contender{id: fmt.Sprintf("carrier-%dMiB", c>>20), label: fmt.Sprintf("carrier upload --chunk-size %s", human(c)), kind: kindCarrier, chunk: c, flag: true})
	}
	for _, v := range cfg.variants {
		cs = append(cs, contender{id: "variant-" + v.name, label: "carrier upload, candidate build " + v.name, kind: kindCarrier, chunk: defaultChunk, bin: v.path})
	}
	return append(cs, contender{id: "official", label: "official Go client (16 MiB)", kind: kindOfficial, chunk: officialChunk})
}

// sample is one upload's cost.
type sample struct {
	usage                    // the client's process; wall includes the session start for curl
	sandboxCPU time.Duration // what serving the upload cost the sandbox
}

// client talks to the sandbox for what is not measured: starting curl's
// sessions, checking objects.
var client = &http.Client{Timeout: 2 * time.Minute}

// upload sends tf as object name with contender c, checks the object, and
// removes its bytes from the sandbox (outside the measured time).
func upload(ctx context.Context, cfg *config, sb *sandboxProc, c contender, tf *testFile, name string) (sample, error) {
	cpu0 := sb.cpu()
	var (
		res procResult
		err error
	)
	switch c.kind {
	case kindCurl:
		res, err = curlUpload(ctx, cfg, sb, tf, name, true)
	case kindCarrier:
		res, err = carrierUpload(ctx, cfg, sb, c, tf, name)
	case kindOfficial:
		res, err = runProc(ctx, cfg.procLimit, []string{"BENCH_TOKEN=" + sb.token}, cfg.gclientBin,
			"-endpoint", sb.base, "-bucket", bucket, "-name", name, "-file", tf.path, "-timeout", cfg.procLimit.String())
	}
	s := sample{usage: res.usage, sandboxCPU: sb.cpu() - cpu0}
	if err != nil {
		return s, fmt.Errorf("%s: %w", c.id, err)
	}
	if err := verify(ctx, sb, name, tf); err != nil {
		return s, fmt.Errorf("%s: %w", c.id, err)
	}
	return s, dropBlobs(sb)
}

// curlUpload is the wire's limit: a session started by the harness (timed
// with the upload, as every other contender starts its own), then the whole
// file in one PUT by curl, which reads it and writes the socket and nothing
// else.
func curlUpload(ctx context.Context, cfg *config, sb *sandboxProc, tf *testFile, name string, viaLauncher bool) (procResult, error) {
	start := time.Now()
	session, err := initiate(ctx, sb, name, tf.size)
	if err != nil {
		return procResult{}, err
	}
	init := time.Since(start)
	res, err := runProcHow(ctx, cfg.procLimit, viaLauncher, nil, "curl", "-sS", "-T", tf.path, "-X", "PUT", session)
	res.wall += init
	if err == nil && !json.Valid(res.stdout) {
		err = fmt.Errorf("curl: the sandbox's answer is not the object: %.200s", res.stdout)
	}
	return res, err
}

func carrierUpload(ctx context.Context, cfg *config, sb *sandboxProc, c contender, tf *testFile, name string) (procResult, error) {
	// A journal of its own for every upload, as on a fresh machine; on the
	// same disk as the data, as in a person's home folder.
	state, err := os.MkdirTemp(cfg.work, "state-")
	if err != nil {
		return procResult{}, err
	}
	defer os.RemoveAll(state)
	args := []string{"upload", "--url", objectURL(sb, name), "--file", tf.path,
		"--content-type", "application/octet-stream", "--state-dir", state}
	if c.flag {
		args = append(args, "--chunk-size", strconv.FormatInt(c.chunk, 10))
	}
	bin := cfg.carrierBin
	if c.bin != "" {
		bin = c.bin
	}
	return runProc(ctx, cfg.procLimit, []string{"CARRIER_TOKEN=" + sb.token}, bin, args...)
}

func objectURL(sb *sandboxProc, name string) string {
	return sb.base + "/upload/storage/v1/b/" + bucket + "/o?name=" + url.QueryEscape(name)
}

// initiate starts a resumable session and returns its URI (PROTOCOL.md 4.1).
func initiate(ctx context.Context, sb *sandboxProc, name string, size int64) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, objectURL(sb, name)+"&uploadType=resumable", http.NoBody)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+sb.token)
	req.Header.Set("X-Upload-Content-Type", "application/octet-stream")
	req.Header.Set("X-Upload-Content-Length", strconv.FormatInt(size, 10))
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("starting a session: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusOK || loc == "" {
		return "", fmt.Errorf("starting a session: %s %.200s", resp.Status, body)
	}
	return loc, nil
}

// verify checks that the object exists with the file's size and md5: an
// upload that did not complete must not count as fast.
func verify(ctx context.Context, sb *sandboxProc, name string, tf *testFile) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, sb.base+"/storage/v1/b/"+bucket+"/o/"+url.PathEscape(name), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+sb.token)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("checking the object: %w", err)
	}
	defer resp.Body.Close()
	var obj struct {
		Size    string `json:"size"`
		MD5Hash string `json:"md5Hash"`
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("object %s: %s %.200s", name, resp.Status, body)
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		return fmt.Errorf("object %s: %w", name, err)
	}
	if obj.Size != strconv.FormatInt(tf.size, 10) || obj.MD5Hash != tf.md5 {
		return fmt.Errorf("object %s has size %s md5 %s; the file has %d bytes, md5 %s", name, obj.Size, obj.MD5Hash, tf.size, tf.md5)
	}
	return nil
}

// dropBlobs deletes the stored objects' bytes from the sandbox's folder
// once they were checked. The sandbox has no delete method; without this a
// run would keep tens of GiB, and with --fsync=false gigabytes of dirty
// pages would pile up until the kernel's writeback throttled the uploads
// that follow, measuring the disk after all. Deleting a file drops its
// dirty pages unwritten.
func dropBlobs(sb *sandboxProc) error {
	dir := filepath.Join(sb.dir, "blobs")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("the sandbox's blobs folder: %w (has its layout changed?)", err)
	}
	for _, e := range ents {
		if e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
