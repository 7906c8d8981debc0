package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"carrier/internal/app"
	"carrier/transfer"
)

func init() {
	register(&Command{
		Name:    "upload",
		Summary: "upload a file to a Google-style upload URI (resumable, never twice)",
		Run:     runUpload,
	})
}

// transferFlags are the engine settings shared by upload and resume.
type transferFlags struct {
	sandboxDir string // the embedded sandbox's folder, whose token requests to it carry
	stateDir   string
	token      string
	retryBase  time.Duration
	maxRetries int
	stall      time.Duration
}

func (f *transferFlags) add(fs interface {
	StringVar(*string, string, string, string)
	DurationVar(*time.Duration, string, time.Duration, string)
	IntVar(*int, string, int, string)
}, dirs app.Dirs) {
	f.sandboxDir = dirs.Sandbox()
	fs.StringVar(&f.stateDir, "state-dir", dirs.State, "folder of the upload journal (shared with the desktop app)")
	fs.StringVar(&f.token, "token", "", "bearer token for the upload URI; prefer the CARRIER_TOKEN environment variable, since command-line arguments are visible to other users of this computer")
	fs.DurationVar(&f.retryBase, "retry-base", transfer.DefaultRetryBase, "base of the backoff: waits are base*2^n plus up to base at random")
	fs.IntVar(&f.maxRetries, "max-retries", transfer.DefaultMaxRetries, "tries in a row without progress before giving up (n = 0..N)")
	fs.DurationVar(&f.stall, "stall-timeout", transfer.DefaultStallTimeout, "abandon a request that makes no progress for this long, then resume")
}

// config is the engine's setup. Without a token, each request carries the
// credential Carrier holds for its server (a sign-in, or the embedded
// sandbox's token).
func (f *transferFlags) config(ctx context.Context, events chan<- transfer.Event) (transfer.Config, error) {
	if f.retryBase < 0 || f.stall < 0 || f.maxRetries < 0 {
		return transfer.Config{}, usagef("--retry-base, --stall-timeout and --max-retries cannot be negative")
	}
	tok := f.token
	if tok == "" {
		tok = os.Getenv("CARRIER_TOKEN")
	}
	maxRetries := f.maxRetries
	if maxRetries == 0 {
		maxRetries = -1 // the engine reads 0 as "default"
	}
	cfg := transfer.Config{
		StateDir:     f.stateDir,
		Workers:      1,
		RetryBase:    f.retryBase,
		MaxRetries:   maxRetries,
		StallTimeout: f.stall,
		Events:       events,
	}
	if tok != "" {
		cfg.Auth = transfer.StaticToken(tok)
	} else {
		cfg.Auth = app.NewCredentials(ctx, f.sandboxDir)
	}
	return cfg, nil
}

func runUpload(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "upload", "--url UPLOAD_URI --file F --content-type T [flags]")
	var (
		tf       transferFlags
		target   = fs.String("url", "", "the upload URI, e.g. http://127.0.0.1:8080/upload/storage/v1/b/BUCKET/o?name=NAME (uploadType is set from --upload-type)")
		file     = fs.String("file", "", "the file to upload; it must not change until the upload ends")
		ctype    = fs.String("content-type", "", "media type of the file, e.g. message/rfc822 or image/png")
		metadata = fs.String("metadata", "", "metadata JSON, or @FILE to read it from a file")
		utype    = fs.String("upload-type", "resumable", "resumable, multipart or media; only resumable can be resumed or checked for completion")
		method   = fs.String("method", "POST", "POST, or PUT to update an existing resource")
		chunk    = fs.Int64("chunk-size", 0, "bytes per request, a multiple of 262144 (default 16 MiB)")
	)
	tf.add(fs, env.dirs())
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *target == "":
		return usagef("--url is required")
	case *file == "":
		return usagef("--file is required")
	case *ctype == "":
		return usagef("--content-type is required (an explicit type avoids servers refusing a guessed one)")
	}
	typ := transfer.UploadType(*utype)
	if typ != transfer.Resumable && typ != transfer.Multipart && typ != transfer.Media {
		return usagef("--upload-type must be resumable, multipart or media, not %q", *utype)
	}
	m := strings.ToUpper(*method)
	if m != "POST" && m != "PUT" {
		return usagef("--method must be POST or PUT, not %q", *method)
	}
	if *chunk < 0 || *chunk%transfer.ChunkQuantum != 0 {
		return usagef("--chunk-size must be a multiple of 262144 (256 KiB), not %d", *chunk)
	}
	var meta []byte
	if *metadata != "" {
		meta = []byte(*metadata)
		if name, ok := strings.CutPrefix(*metadata, "@"); ok {
			b, err := os.ReadFile(name)
			if err != nil {
				return fmt.Errorf("cannot read the metadata file: %w", err)
			}
			meta = b
		}
		if !json.Valid(meta) {
			return usagef("--metadata is not valid JSON")
		}
		if typ == transfer.Media {
			return usagef("a media upload carries no metadata; use --upload-type multipart or resumable")
		}
	}
	q, done, err := runQueue(ctx, env, &tf, nil)
	if err != nil {
		return err
	}
	defer done()
	id, err := q.Add(transfer.Spec{URL: *target, Method: m, Type: typ, ContentType: *ctype, Metadata: meta, Path: *file, ChunkSize: *chunk})
	if err != nil {
		return err
	}
	return finishJob(ctx, env, q, id, true)
}

// finishJob waits for one job and reports it: the response body on stdout.
func finishJob(ctx context.Context, env *Env, q *app.Queue, id string, resumeHint bool) error {
	rec, err := q.Wait(ctx, id)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted; the upload is kept as job %s: run `carrier resume` to finish it", id)
		}
		return err
	}
	switch rec.State {
	case transfer.StateDone:
		body := rec.Response.Body
		env.Stdout.Write(body)
		if len(body) > 0 && body[len(body)-1] != '\n' {
			fmt.Fprintln(env.Stdout)
		}
		return nil
	case transfer.StateFailed:
		if rec.Retryable && resumeHint {
			return fmt.Errorf("job %s: %s%s", id, rec.Error, advice[rec.Cause])
		}
		return fmt.Errorf("job %s failed: %s%s", id, rec.Error, advice[rec.Cause])
	}
	return fmt.Errorf("job %s ended %s", id, rec.State)
}

// advice says what a person at a terminal can do about a failed job.
var advice = map[error]string{
	transfer.ErrGaveUp:        ". The session is kept: run `carrier resume` later to go on where it stopped",
	transfer.ErrSourceChanged: ". Upload the file again as a new job if its new content is what you want",
	transfer.ErrMaybeSent:     ". Check the destination; if it is not there, upload the file again",
	transfer.ErrSignIn:        ". Sign in again (`carrier login`), then run `carrier resume`",
}
