package main

// The CPU part (issue 16): what each client's process spends per GiB
// uploaded, beside curl and the official Go client, on the same file and
// the same sandbox in one run, for a target whose uploads Carrier verifies
// by CRC32C (Cloud Storage) and one it verifies by SHA-256 (Drive); what
// composing a message with a large attachment costs; and the desktop app's
// CPU at rest against a bare Fyne window's (idle.go). CPU-seconds come from
// the kernel's accounting of each process, so another job on the machine
// barely moves them; wall-clock speed on a shared machine does move, and is
// reported only beside them.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuTarget is an upload method with the checksum Carrier verifies there
// and the goal for Carrier's CPU per GiB as a multiple of curl's.
type cpuTarget struct {
	id       string // in object names and the report
	label    string
	verifies string // the sum Carrier must report ("verified (NAME)")
	goal     float64
}

var cpuTargets = []cpuTarget{
	{id: "storage", label: "Cloud Storage, resumable", verifies: "crc32c", goal: 1.5},
	{id: "drive", label: "Drive, resumable", verifies: "sha256", goal: 2.5},
}

// cpuClients are the clients in the report's order (the rounds rotate
// it): candidate builds of carrier (-variant) come after carrier, so a
// proposed change is judged beside the code under test.
func cpuClients(cfg *config) []string {
	cs := []string{"curl", "carrier"}
	for _, v := range cfg.variants {
		cs = append(cs, "variant-"+v.name)
	}
	return append(cs, "official")
}

// cpuResult is the whole CPU part of one run.
type cpuResult struct {
	size       int64
	rounds     int
	clients    []string
	perGiB     map[string]map[string][]sample // target id → client id → rounds
	sha256     time.Duration                  // SHA-256 of the test file alone, in the harness
	crc32c     time.Duration                  // CRC32C of the test file alone
	compose    composeResult
	idle       idleResult
	loadBefore float64
	loadAfter  float64
	start, end time.Time
}

// runCPU measures the CPU part against one sandbox with --fsync=false:
// the clients' CPU does not depend on the server's disk, and a durable
// sandbox would only make the run longer.
func runCPU(ctx context.Context, cfg *config, tf *testFile) (*cpuResult, error) {
	if err := buildCPUBinaries(ctx, cfg); err != nil {
		return nil, err
	}
	res := &cpuResult{size: tf.size, rounds: cfg.cpuRounds, perGiB: map[string]map[string][]sample{}, clients: cpuClients(cfg),
		loadBefore: loadAvg(), start: time.Now()}
	var err error
	logf("CPU part: hashing probes")
	if res.sha256, err = cpuOf(func() error { return hashMem(tf.size, sha256.New()) }); err != nil {
		return nil, err
	}
	if res.crc32c, err = cpuOf(func() error { return hashMem(tf.size, crc32.New(crc32.MakeTable(crc32.Castagnoli))) }); err != nil {
		return nil, err
	}

	sb, remove, err := scratchSandbox(ctx, cfg, "sandbox-cpu-", false)
	if err != nil {
		return nil, err
	}
	defer remove()
	defer sb.close()
	logf("CPU part: sandbox --fsync=false at %s", sb.base)
	for r := range cfg.cpuRounds {
		for _, t := range cpuTargets {
			if res.perGiB[t.id] == nil {
				res.perGiB[t.id] = map[string][]sample{}
			}
			for i := range res.clients {
				c := res.clients[(i+r)%len(res.clients)]
				s, err := cpuUpload(ctx, cfg, sb, t, c, tf, fmt.Sprintf("cpu-%s-%s-%d", t.id, c, r))
				if err != nil {
					return nil, fmt.Errorf("%s, %s: %w", t.label, c, err)
				}
				res.perGiB[t.id][c] = append(res.perGiB[t.id][c], s)
				logf("CPU round %d/%d %-8s %-12s %6.2f CPU-s/GiB (user %.2f, sys %.2f)  %6.1f MB/s",
					r+1, cfg.cpuRounds, t.id, c, perGiB(s.cpu(), tf.size), s.user.Seconds(), s.sys.Seconds(), mbps(tf.size, s.wall))
			}
		}
	}
	if res.compose, err = runCompose(ctx, cfg); err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	if cfg.idleFor > 0 {
		if res.idle, err = runIdle(ctx, cfg); err != nil {
			return nil, fmt.Errorf("idle: %w", err)
		}
	}
	res.loadAfter, res.end = loadAvg(), time.Now()
	return res, nil
}

// hashMem feeds n bytes to h from a buffer in memory: the sum's own cost,
// without reading a file, which every client pays alike.
func hashMem(n int64, h io.Writer) error {
	buf := make([]byte, 4<<20)
	rand.Read(buf)
	for ; n > 0; n -= int64(len(buf)) {
		h.Write(buf[:min(n, int64(len(buf)))])
	}
	return nil
}

// cpuOf is the CPU time this process spends in f (the median of three
// runs; the harness does nothing else meanwhile), or its wall time where
// the system does not say (procCPU is Linux's): wall time on a loaded
// machine would count other jobs' turns as ours.
func cpuOf(f func() error) (time.Duration, error) {
	var ds []time.Duration
	for range 3 {
		c0, t0 := procCPU(os.Getpid()), time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		d := procCPU(os.Getpid()) - c0
		if c0 == 0 {
			d = time.Since(t0)
		}
		ds = append(ds, d)
	}
	return medianDur(ds), nil
}

// perGiB is CPU time per GiB of a file of size bytes, in seconds.
func perGiB(d time.Duration, size int64) float64 {
	return d.Seconds() * float64(1<<30) / float64(size)
}

// buildCPUBinaries builds the Drive uploader of the official client and
// the bare Fyne window, unless given.
func buildCPUBinaries(ctx context.Context, cfg *config) error {
	if cfg.gdriveBin != "" && (cfg.bareBin != "" || cfg.idleFor == 0) {
		return nil
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	if cfg.gdriveBin == "" {
		logf("building bench/gdrive")
		cfg.gdriveBin = filepath.Join(cfg.work, "gdrive")
		if err := goBuild(ctx, root, cfg.gdriveBin, "./bench/gdrive"); err != nil {
			return err
		}
	}
	if cfg.bareBin == "" && cfg.idleFor > 0 {
		logf("building bench/barefyne (cgo, as the desktop app)")
		cfg.bareBin = filepath.Join(cfg.work, "barefyne")
		if err := goBuild(ctx, root, cfg.bareBin, "./bench/barefyne", "-tags=barefyne"); err != nil {
			return err
		}
	}
	return nil
}

// cpuUpload sends tf to target t with client c, checks what arrived, and
// removes it from the sandbox (outside the measured process).
func cpuUpload(ctx context.Context, cfg *config, sb *sandboxProc, t cpuTarget, c string, tf *testFile, name string) (sample, error) {
	var (
		res procResult
		err error
	)
	switch {
	case c == "curl" && t.id == "storage":
		res, err = curlUpload(ctx, cfg, sb, tf, name, true)
	case c == "curl":
		res, err = curlDrive(ctx, cfg, sb, tf, name)
	case c == "carrier":
		res, err = carrierCPU(ctx, cfg, sb, t, tf, name, cfg.carrierBin)
	case strings.HasPrefix(c, "variant-"):
		res, err = carrierCPU(ctx, cfg, sb, t, tf, name, variantPath(cfg, strings.TrimPrefix(c, "variant-")))
	case t.id == "storage":
		res, err = runProc(ctx, cfg.procLimit, []string{"BENCH_TOKEN=" + sb.token}, cfg.gclientBin,
			"-endpoint", sb.base, "-bucket", bucket, "-name", name, "-file", tf.path, "-timeout", cfg.procLimit.String())
	default:
		res, err = runProc(ctx, cfg.procLimit, []string{"BENCH_TOKEN=" + sb.token}, cfg.gdriveBin,
			"-endpoint", sb.base, "-name", name, "-file", tf.path, "-timeout", cfg.procLimit.String())
	}
	s := sample{usage: res.usage}
	if err != nil {
		return s, err
	}
	if t.id == "storage" {
		if err := verify(ctx, sb, name, tf); err != nil {
			return s, err
		}
	} else if err := verifyDrive(ctx, sb, res.stdout, tf); err != nil {
		return s, err
	}
	return s, dropBlobs(sb)
}

// driveFields are what Carrier's upload and the official client ask Drive
// to answer with: the SHA-256 is what Carrier verifies there.
const driveFields = "id,size,sha256Checksum"

func driveUploadURL(sb *sandboxProc) string {
	return sb.base + "/upload/drive/v3/files?fields=" + url.QueryEscape(driveFields)
}

// carrierCPU runs `carrier upload` and makes sure it verified the upload
// with the target's sum: a figure for "CPU with SHA-256 verification" from
// an upload that verified nothing would be a false one.
func carrierCPU(ctx context.Context, cfg *config, sb *sandboxProc, t cpuTarget, tf *testFile, name, bin string) (procResult, error) {
	state, err := os.MkdirTemp(cfg.work, "state-")
	if err != nil {
		return procResult{}, err
	}
	defer os.RemoveAll(state)
	args := []string{"upload", "--file", tf.path, "--content-type", "application/octet-stream", "--state-dir", state}
	if t.id == "storage" {
		args = append(args, "--url", objectURL(sb, name))
	} else {
		meta, _ := json.Marshal(map[string]string{"name": name})
		args = append(args, "--url", driveUploadURL(sb), "--metadata", string(meta))
	}
	res, err := runProc(ctx, cfg.procLimit, []string{"CARRIER_TOKEN=" + sb.token}, bin, args...)
	if err == nil && !bytes.Contains(res.stderr, []byte("verified ("+t.verifies+")")) {
		err = fmt.Errorf("carrier upload did not say \"verified (%s)\": %s", t.verifies, firstLines(res.stderr, 5))
	}
	return res, err
}

func variantPath(cfg *config, name string) string {
	for _, v := range cfg.variants {
		if v.name == name {
			return v.path
		}
	}
	return ""
}

// curlDrive is curlUpload for Drive: a session the harness starts with
// the file's metadata, then the whole file in one PUT by curl.
func curlDrive(ctx context.Context, cfg *config, sb *sandboxProc, tf *testFile, name string) (procResult, error) {
	start := time.Now()
	meta, _ := json.Marshal(map[string]string{"name": name})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, driveUploadURL(sb)+"&uploadType=resumable", bytes.NewReader(meta))
	if err != nil {
		return procResult{}, err
	}
	req.Header.Set("Authorization", "Bearer "+sb.token)
	req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	req.Header.Set("X-Upload-Content-Type", "application/octet-stream")
	req.Header.Set("X-Upload-Content-Length", strconv.FormatInt(tf.size, 10))
	resp, err := client.Do(req)
	if err != nil {
		return procResult{}, fmt.Errorf("starting a Drive session: %w", err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	session := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusOK || session == "" {
		return procResult{}, fmt.Errorf("starting a Drive session: %s %.200s", resp.Status, body)
	}
	init := time.Since(start)
	res, err := runProc(ctx, cfg.procLimit, nil, "curl", "-sS", "-T", tf.path, "-X", "PUT", session)
	res.wall += init
	return res, err
}

// verifyDrive reads the file an upload answered with (its id from the
// client's output) and compares size and MD5 with the test file's, then
// deletes it: Drive's quota counts every file kept.
func verifyDrive(ctx context.Context, sb *sandboxProc, answer []byte, tf *testFile) error {
	var f struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(answer), &f); err != nil || f.ID == "" {
		return fmt.Errorf("the upload's answer is not a Drive file: %.200s", answer)
	}
	fileURL := sb.base + "/drive/v3/files/" + url.PathEscape(f.ID)
	var got struct {
		Size        string `json:"size"`
		Md5Checksum string `json:"md5Checksum"`
	}
	if err := sandboxJSON(ctx, sb, http.MethodGet, fileURL+"?fields=size,md5Checksum", &got); err != nil {
		return err
	}
	md5b, _ := base64.StdEncoding.DecodeString(tf.md5)
	if got.Size != strconv.FormatInt(tf.size, 10) || got.Md5Checksum != hex.EncodeToString(md5b) {
		return fmt.Errorf("Drive file %s has size %s md5 %s; the file has %d bytes, md5 %x", f.ID, got.Size, got.Md5Checksum, tf.size, md5b)
	}
	return sandboxJSON(ctx, sb, http.MethodDelete, fileURL, nil)
}

// sandboxJSON makes one request to the sandbox and decodes its answer into
// out (when not nil).
func sandboxJSON(ctx context.Context, sb *sandboxProc, method, u string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+sb.token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %.200s", method, strings.TrimPrefix(u, sb.base), resp.Status, body)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(body, out)
}
