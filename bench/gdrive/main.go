// Command gdrive uploads one file to Drive with the official Go client
// (google.golang.org/api/drive/v3) and its defaults: Files.Create(...).Media(f),
// resumable in 16 MiB chunks for a file over that size. It is gclient's
// counterpart for the target whose uploads Carrier verifies by SHA-256
// (Drive's sha256Checksum); the harness (../) runs it as a process of its
// own and reads its CPU time. The token comes from BENCH_TOKEN, not a
// flag, so it does not show in the process list.
//
//	BENCH_TOKEN=T gdrive -endpoint http://127.0.0.1:PORT -name N -file F
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
	drive "google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
)

func main() {
	base := flag.String("endpoint", "", "the sandbox's base URL, e.g. http://127.0.0.1:8089")
	name := flag.String("name", "", "the file's name on Drive")
	file := flag.String("file", "", "file to upload")
	ctype := flag.String("content-type", "application/octet-stream", "media type of the file")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up after this long")
	flag.Parse()
	if *base == "" || *name == "" || *file == "" {
		fmt.Fprintln(os.Stderr, "gdrive: -endpoint, -name and -file are required")
		os.Exit(2)
	}
	if err := upload(*base, *name, *file, *ctype, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "gdrive:", err)
		os.Exit(1)
	}
}

func upload(base, name, file, ctype string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// As in gclient: a static bearer token without the auth library's
	// credential discovery.
	hc := &http.Client{Transport: &oauth2.Transport{
		Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: os.Getenv("BENCH_TOKEN"), TokenType: "Bearer"}),
		Base:   http.DefaultTransport,
	}}
	svc, err := drive.NewService(ctx, option.WithEndpoint(base+"/drive/v3/"), option.WithHTTPClient(hc))
	if err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	// The same fields Carrier's upload asks for, so both get the same answer.
	got, err := svc.Files.Create(&drive.File{Name: name}).Media(f, googleapi.ContentType(ctype)).
		Fields("id,size,sha256Checksum").Context(ctx).Do()
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(got)
}
