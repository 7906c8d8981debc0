// Command gclient uploads one file with the official Go client for Cloud
// Storage (google.golang.org/api/storage/v1), exactly as an application
// would with the client's defaults: Objects.Insert(...).Media(f), which
// sends a file larger than googleapi.DefaultUploadChunkSize (16 MiB) as a
// resumable session in 16 MiB chunks. The benchmark harness (../) runs it
// as a process of its own so its time and peak RSS compare with curl's and
// Carrier's. The token comes from BENCH_TOKEN rather than a flag, so it does
// not show in the process list.
//
//	BENCH_TOKEN=T gclient -endpoint http://127.0.0.1:PORT -bucket B -name N -file F
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	storage "google.golang.org/api/storage/v1"
)

func main() {
	base := flag.String("endpoint", "", "the sandbox's base URL, e.g. http://127.0.0.1:8089")
	bucket := flag.String("bucket", "bench", "bucket to upload into")
	name := flag.String("name", "", "object name")
	file := flag.String("file", "", "file to upload")
	ctype := flag.String("content-type", "application/octet-stream", "media type of the file")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up after this long")
	flag.Parse()
	if *base == "" || *name == "" || *file == "" {
		fmt.Fprintln(os.Stderr, "gclient: -endpoint, -name and -file are required")
		os.Exit(2)
	}
	if err := upload(*base, *bucket, *name, *file, *ctype, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "gclient:", err)
		os.Exit(1)
	}
}

func upload(base, bucket, name, file, ctype string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// A static token on oauth2's transport over the default one is what
	// option.WithTokenSource amounts to for a plain bearer token, without
	// the auth library's credential discovery (which would look for Google
	// credentials on this machine).
	hc := &http.Client{Transport: &oauth2.Transport{
		Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: os.Getenv("BENCH_TOKEN"), TokenType: "Bearer"}),
		Base:   http.DefaultTransport,
	}}
	// storage/v1's BasePath carries its API path, so the endpoint must too;
	// the media URI (/upload/storage/v1/...) lands on the host root anyway.
	svc, err := storage.NewService(ctx, option.WithEndpoint(base+"/storage/v1/"), option.WithHTTPClient(hc))
	if err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	obj, err := svc.Objects.Insert(bucket, &storage.Object{Name: name}).
		Media(f, googleapi.ContentType(ctype)).Context(ctx).Do()
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(obj)
}
