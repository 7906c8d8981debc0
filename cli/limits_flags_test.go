package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"testing"
)

// Issue 13: --bwlimit reaches the queue the command runs, as a rate or a
// timetable.
func TestBwlimitReachesTheQueue(t *testing.T) {
	for _, c := range []struct {
		bwlimit string
		want    int64
	}{
		{"2M", 2 << 20},
		{"off", 0},
		{"00:00,512k", 512 << 10}, // a timetable of one entry: in force all day
	} {
		fs := flag.NewFlagSet("upload", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var tf transferFlags
		env := &Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
		tf.add(fs, env.dirs())
		if err := fs.Parse([]string{"--state-dir", t.TempDir(), "--bwlimit", c.bwlimit}); err != nil {
			t.Fatal(err)
		}
		q, stop, err := runQueue(context.Background(), env, &tf, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := q.Bandwidth()
		stop()
		if got != c.want {
			t.Errorf("--bwlimit %s: the queue limits to %d B/s, want %d", c.bwlimit, got, c.want)
		}
	}
}
