package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	tokenFile  string
	// tokenFor is the server a static token was given for (upload's --url,
	// resume's --endpoint): only requests to its origin carry the token.
	tokenFor string
	// serving is the embedded sandbox this command serves, if any.
	serving *app.Embedded
	// refuse are origins nothing may go to: where the embedded sandbox
	// was, now held by another program.
	refuse     []string
	retryBase  time.Duration
	maxRetries int
	stall      time.Duration
	bwlimit    string
	minSpeed   string
	onMetered  string
	// schedule is --bwlimit read, for a timetable the queue follows.
	schedule transfer.Timetable
}

func (f *transferFlags) add(fs interface {
	StringVar(*string, string, string, string)
	DurationVar(*time.Duration, string, time.Duration, string)
	IntVar(*int, string, int, string)
}, dirs app.Dirs) {
	f.sandboxDir = dirs.Sandbox()
	fs.StringVar(&f.stateDir, "state-dir", dirs.State, "folder of the upload journal (shared with the desktop app)")
	fs.StringVar(&f.token, "token", "", "bearer token for the server; prefer --token-file or the CARRIER_TOKEN environment variable, since command-line arguments are visible to other users of this computer")
	fs.StringVar(&f.tokenFile, "token-file", "", "read the bearer token for the server from this file")
	fs.DurationVar(&f.retryBase, "retry-base", transfer.DefaultRetryBase, "base of the backoff: waits are base*2^n plus up to base at random")
	fs.IntVar(&f.maxRetries, "max-retries", transfer.DefaultMaxRetries, "tries in a row without progress before giving up (n = 0..N)")
	fs.DurationVar(&f.stall, "stall-timeout", transfer.DefaultStallTimeout, "abandon a request that makes no progress for this long, then resume")
	fs.StringVar(&f.bwlimit, "bwlimit", "off", "limit all uploads together, in rclone's syntax: 2M (MiB/s; 2MB and 2MiB say the same), 512k, a bare number in KiB/s, off, or a timetable such as \"08:00,1M 19:00,off\" or \"Mon-08:00,512k Sat-00:00,off\"")
	fs.StringVar(&f.minSpeed, "min-speed", "1k/60s", "abandon a request slower than RATE over WINDOW (RATE/WINDOW, e.g. 10k/60s), then ask the server where the upload stands; off to never")
	fs.StringVar(&f.onMetered, "on-metered", "pause", fmt.Sprintf("pause or continue: on a metered connection, uploads over %d MiB wait until it is not metered", transfer.DefaultMeteredOver>>20))
}

// givenToken is the static token the person gave, if any: --token-file,
// --token (with a warning: other users see it in the process list), or
// CARRIER_TOKEN.
func (f *transferFlags) givenToken(env *Env) (string, error) {
	switch {
	case f.tokenFile != "" && f.token != "":
		return "", usagef("give --token-file or --token, not both")
	case f.tokenFile != "":
		b, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return "", fmt.Errorf("cannot read --token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" || strings.ContainsAny(tok, "\r\n") {
			return "", usagef("--token-file %s should hold one token on one line", f.tokenFile)
		}
		return tok, nil
	case f.token != "":
		fmt.Fprintln(env.Stderr, "carrier: warning: --token is visible to every user of this computer in the process list; use --token-file FILE or CARRIER_TOKEN instead")
		return f.token, nil
	}
	return os.Getenv("CARRIER_TOKEN"), nil
}

// config is the engine's setup. A static token goes only to the server it
// was given for (tokenFor); every other request carries the credential
// Carrier holds for its server (a sign-in, or the embedded sandbox's token
// once the sandbox proves itself), or none. auth, when not nil, is used
// instead.
func (f *transferFlags) config(ctx context.Context, env *Env, events chan<- transfer.Event, auth transfer.Authorizer) (transfer.Config, error) {
	if f.retryBase < 0 || f.stall < 0 || f.maxRetries < 0 {
		return transfer.Config{}, usagef("--retry-base, --stall-timeout and --max-retries cannot be negative")
	}
	tt, err := transfer.ParseBandwidth(f.bwlimit)
	if err != nil {
		return transfer.Config{}, usagef("--bwlimit: %v", err)
	}
	f.schedule = tt
	minSpeed, err := transfer.ParseMinSpeed(f.minSpeed)
	if err != nil {
		return transfer.Config{}, usagef("--min-speed: %v", err)
	}
	if f.onMetered != "pause" && f.onMetered != "continue" {
		return transfer.Config{}, usagef("--on-metered must be pause or continue, not %q", f.onMetered)
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
		Auth:         auth,
		MinSpeed:     minSpeed,
		Metered:      transfer.MeteredPolicy{Pause: f.onMetered == "pause"},
	}
	if d := clockShift.Load(); d != 0 {
		cfg.Clock = shiftedClock{transfer.SystemClock(), time.Duration(d)}
	}
	if auth != nil {
		return cfg, nil
	}
	tok, err := f.givenToken(env)
	if err != nil {
		return transfer.Config{}, err
	}
	creds := app.NewCredentials(ctx, f.sandboxDir)
	if f.serving != nil {
		creds.Serving(f.serving)
	}
	for _, o := range f.refuse {
		creds.Refuse(o, fmt.Errorf("%w: %s, where the embedded sandbox was, is held by another program, so the sandbox now serves at %s; nothing of this job is sent there. Upload it again", app.ErrNotTheSandbox, o, f.serving.URL))
	}
	switch {
	case tok != "" && f.tokenFor != "":
		if _, err := creds.Static(f.tokenFor, tok); err != nil {
			return transfer.Config{}, usagef("%v", err)
		}
	case tok != "" && f.token != "" || tok != "" && f.tokenFile != "":
		return transfer.Config{}, usagef("a token is for one server: say which with --endpoint URL (jobs on other servers use their own sign-ins)")
	case tok != "":
		fmt.Fprintln(env.Stderr, "carrier: CARRIER_TOKEN is not used: give --endpoint URL to say which server it is for (each job uses its own server's sign-in)")
	}
	cfg.Auth = creds
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
		chunk    = fs.Int64("chunk-size", 0, "the largest request, a multiple of 262144 (default 64 MiB); requests are sized for a server confirmation every few seconds up to it")
		md5      = fs.Bool("md5", false, "to Cloud Storage, send and check the MD5 as well as the CRC32C")
	)
	tf.add(fs, env.dirs())
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tf.tokenFor = *target
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
	id, err := q.Add(transfer.Spec{URL: *target, Method: m, Type: typ, ContentType: *ctype, Metadata: meta, Path: *file, ChunkSize: *chunk,
		Checksums: app.Checksums(*target, *md5)})
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
		writeBody(env.Stdout, rec.Response.Body)
		return nil
	case transfer.StateSignIn:
		var sn signInNeeded
		sn.add(rec)
		return &sn
	case transfer.StateWaiting:
		// Wait returns a waiting job only when what it needs waits for
		// a sign-in (a message whose Drive upload parked).
		var sn signInNeeded
		for _, p := range q.Parked() {
			sn.add(p)
		}
		if sn.accounts != nil {
			return &sn
		}
		if rec.Blocked != "" {
			// It needs a job that failed for good: the journal keeps it
			// waiting for a retry of that one.
			return fmt.Errorf("job %s waits: %s", id, app.Printable(rec.Blocked))
		}
	case transfer.StateMissing:
		return fmt.Errorf("job %s waits: %s", id, ghostWords(id, rec.Path))
	case transfer.StateFailed:
		if rec.Retryable && resumeHint {
			return fmt.Errorf("job %s: %s%s", id, rec.Error, adviceFor(rec.Failure))
		}
		return fmt.Errorf("job %s failed: %s%s", id, rec.Error, adviceFor(rec.Failure))
	}
	return fmt.Errorf("job %s ended %s", id, rec.State)
}

// writeBody prints a server's answer. Valid JSON holds no control
// character but whitespace, so it goes out byte for byte; anything else a
// server sends loses its controls on the way to the terminal.
func writeBody(w io.Writer, body []byte) {
	if s := string(body); app.PrintableLines(s) != s {
		body = []byte(app.PrintableLines(s))
	}
	w.Write(body)
	if len(body) > 0 && body[len(body)-1] != '\n' {
		fmt.Fprintln(w)
	}
}

// advice says what a person at a terminal can do about a failed job, by
// its failure's code.
var advice = map[transfer.FailureCode]string{
	transfer.FailGaveUp:        ". The session is kept: run `carrier resume` later to go on where it stopped",
	transfer.FailSourceChanged: ". If the file still holds the bytes already sent (saved again unchanged, or put back), `carrier resume --locate ID PATH` sends it on from where it stopped; if its new content is what you want, upload it again as a new job",
	transfer.FailMaybeSent:     ". Check the destination; if it is not there, upload the file again",
	transfer.FailSignIn:        ". Sign in again (`carrier login`), then run `carrier resume`",
	transfer.FailNotVerified:   ". The copy on the server is not the file: remove it there if it is kept, and upload the file again as a new job",
	transfer.FailDailyQuota:    ". Google's quota for the day resets at midnight, Pacific time: run `carrier resume` after that",
}

// adviceFor is the advice for a failure, "" for none or one without advice.
func adviceFor(f *transfer.Failure) string {
	if f == nil {
		return ""
	}
	return advice[f.Code]
}

// serveEmbedded starts the embedded sandbox when jobs name it (origins,
// read from the journal before it starts, since starting may move it),
// and refuses every origin it no longer serves: another program holds
// that address, and nothing of the jobs', a session URI least of all, may
// go there. what begins the error ("jobs wait for"). stop closes it.
func (tf *transferFlags) serveEmbedded(ctx context.Context, origins []string, what string) (stop func(), err error) {
	if len(origins) == 0 {
		return func() {}, nil
	}
	e, err := app.StartEmbedded(ctx, tf.sandboxDir, nil)
	if err != nil {
		return nil, fmt.Errorf("%s the embedded sandbox, which cannot start: %w", what, err)
	}
	tf.serving = e
	for _, o := range origins {
		if o != app.Origin(e.URL) {
			tf.refuse = append(tf.refuse, o)
		}
	}
	return func() { e.Close() }, nil
}
