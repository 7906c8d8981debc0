package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"carrier/transfer"
)

// runKills: `carrier upload` (the real binary) is killed with SIGKILL once
// its journal shows a confirmed offset, at a different point each round,
// then `carrier resume` must finish the same session with the same bytes,
// re-sending at most one chunk.
func runKills(ctx context.Context, c *config, dir string, rep *report) error {
	if c.kills <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	bin, err := carrierBinary(c)
	if err != nil {
		return err
	}
	rateSpec := fmt.Sprintf("seed=%d,rate=%s", c.seed, c.killRate)
	sb, err := openInproc(filepath.Join(dir, "sandbox"), rateSpec)
	if err != nil {
		return err
	}
	defer sb.close()
	res := &killResult{Rounds: c.kills, ChunkSize: quantum, KillAtMin: -1, Rate: c.killRate}
	rep.mu.Lock()
	rep.Kills = res
	rep.mu.Unlock()
	r := rand.New(rand.NewPCG(c.seed, 0x4b1))
	// The child processes get a home of their own: nothing of the person's
	// (journal, sandbox, keychain) is touched.
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o700)
	env := append(os.Environ(), "CARRIER_TOKEN="+token, "HOME="+home,
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	var problems []string
	for round := range c.kills {
		if ctx.Err() != nil {
			problems = append(problems, fmt.Sprintf("stopped after %d rounds: out of time", round))
			break
		}
		if err := sb.sb.SetFaults(rateSpec); err != nil {
			return err
		}
		size := c.killSize + int64(r.IntN(quantum)) // an odd last chunk
		res.Size = c.killSize
		// Kill anywhere from the first chunk to most of the file, and at a
		// random moment within the next chunk.
		killAt := quantum * (1 + r.Int64N(max(1, size*3/4/quantum)))
		extra := time.Duration(r.IntN(80)) * time.Millisecond
		why, err := killRound(ctx, bin, env, sb, dir, round, size, killAt, extra, res)
		if err != nil {
			problems = append(problems, fmt.Sprintf("round %d: %v", round, err))
			logf("kill round %d: %v", round, err)
			continue
		}
		debugf("kill round %d: %s", round, why)
	}
	logf("kill: %+v", *res)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

func killRound(ctx context.Context, bin string, env []string, sb *inproc, dir string, round int, size, killAt int64, extra time.Duration, res *killResult) (string, error) {
	rdir := filepath.Join(dir, fmt.Sprintf("round%02d", round))
	state := filepath.Join(rdir, "state")
	if err := os.MkdirAll(rdir, 0o700); err != nil {
		return "", err
	}
	data := randomBytes(uint64(round)+0x6b111, uint64(size))
	path, err := writeFileData(rdir, "f.bin", data)
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("killed/%02d", round)
	before := sb.sb.Stats()
	cmd := exec.Command(bin, "upload", "--url", storageURL(sb.base, name), "--file", path,
		"--content-type", "application/octet-stream", "--chunk-size", fmt.Sprint(quantum), "--state-dir", state,
		"--retry-base", "50ms", "--stall-timeout", "5s")
	cmd.Env = env
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	killNow := func() { cmd.Process.Signal(syscall.SIGKILL); <-exited }
	// Wait for the journal to show the chosen confirmed offset. Polling
	// another process's files: there is no event to wait on.
	j, err := transfer.OpenJournal(state)
	if err != nil {
		killNow()
		return "", err
	}
	deadline := time.Now().Add(60 * time.Second)
	var confirmed int64
	for {
		recs, _ := j.List()
		if len(recs) == 1 && recs[0].Confirmed >= killAt {
			confirmed = recs[0].Confirmed
			break
		}
		select {
		case <-exited:
			return "", fmt.Errorf("`carrier upload` ended before the kill (confirmed %d of %d, wanted %d); stderr: %s", confirmed, size, killAt, lastLines(stderr.String(), 3))
		case <-ctx.Done():
			killNow()
			return "", ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			killNow()
			return "", fmt.Errorf("no confirmed offset %d within 60 s; stderr: %s", killAt, lastLines(stderr.String(), 3))
		}
	}
	select {
	case <-time.After(extra):
	case <-exited:
	}
	select {
	case <-exited:
		return "", fmt.Errorf("`carrier upload` finished before the kill (at %d of %d): the bandwidth cap is too loose for this size", confirmed, size)
	default:
	}
	killNow()
	recs, _ := j.List()
	if len(recs) != 1 || recs[0].State != transfer.StateRunning || recs[0].Session == "" {
		return "", fmt.Errorf("journal after the kill is not one job left running (its process died) with a session: %d records", len(recs))
	}
	rec := recs[0]
	if res.KillAtMin < 0 || rec.Confirmed < res.KillAtMin {
		res.KillAtMin = rec.Confirmed
	}
	res.KillAtMax = max(res.KillAtMax, rec.Confirmed)
	afterKill := sb.sb.Stats()
	// The resume runs without the cap: only where it starts matters.
	if err := sb.sb.SetFaults(""); err != nil {
		return "", err
	}
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	resume := exec.CommandContext(rctx, bin, "resume", "--endpoint", sb.base, "--state-dir", state, "--retry-base", "50ms", "--stall-timeout", "5s")
	resume.Env = env
	var out, rerr bytes.Buffer
	resume.Stdout, resume.Stderr = &out, &rerr
	if err := resume.Run(); err != nil {
		return "", fmt.Errorf("`carrier resume`: %v; stderr: %s", err, lastLines(rerr.String(), 3))
	}
	res.Resumed++
	after := sb.sb.Stats()
	var problems []string
	if err := checkObject(sb.base, name, data, bytes.TrimSpace(out.Bytes())); err != nil {
		problems = append(problems, err.Error())
	} else {
		res.Identical++
	}
	final, err := j.Load(rec.ID)
	switch {
	case err != nil:
		problems = append(problems, err.Error())
	case after.SessionsCreated != afterKill.SessionsCreated || afterKill.SessionsCreated != before.SessionsCreated+1 || final.Session != rec.Session || final.State != transfer.StateDone:
		problems = append(problems, fmt.Sprintf("sessions created %d -> %d (kill) -> %d (resume); journal %s, same session %v",
			before.SessionsCreated, afterKill.SessionsCreated, after.SessionsCreated, final.State, final.Session == rec.Session))
	default:
		res.SameSession++
	}
	if n := after.Completions - before.Completions; n != 1 {
		res.Duplicates += int(max(0, n-1))
		problems = append(problems, fmt.Sprintf("%d completions for one upload", n))
	}
	resent := after.BytesReceived - before.BytesReceived - size
	res.ResentTotal += resent
	res.ResentMax = max(res.ResentMax, resent)
	if resent > quantum {
		res.ResentOverChunk++
		problems = append(problems, fmt.Sprintf("re-sent %d bytes, more than one chunk (%d)", resent, quantum))
	}
	why := fmt.Sprintf("killed at %d confirmed (journal) of %d; sandbox had %d bytes; resume sent %d; re-sent %d",
		rec.Confirmed, size, afterKill.BytesReceived-before.BytesReceived, after.BytesReceived-afterKill.BytesReceived, resent)
	if len(problems) > 0 {
		return why, errors.New(why + ": " + strings.Join(problems, "; "))
	}
	return why, nil
}
