package transfer

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkBandwidthLimit uploads on loopback under a limit, by the real
// clock, and reports the rate achieved against it: "of-limit" is
// achieved/limit (1 is exact; above 1 means the limit leaked). Each upload
// is three seconds' worth at the limit, through two uploads at once.
//
//	go test -run XXX -bench BandwidthLimit -benchtime 1x ./transfer/
func BenchmarkBandwidthLimit(b *testing.B) {
	for _, mib := range []int64{1, 4, 16} {
		b.Run(fmt.Sprintf("limit=%dMiB/s", mib), func(b *testing.B) {
			rate := mib << 20
			size := rate * 3 / 2 // two uploads: three seconds in all
			srv, received := discardServer(b)
			path := sparseFile(b, size)
			q, err := New(Config{StateDir: b.TempDir(), Bandwidth: rate, Workers: 2})
			if err != nil {
				b.Fatal(err)
			}
			defer q.Close()
			var ratio float64
			for b.Loop() {
				before := received.Load()
				start := time.Now()
				var ids []string
				for range 2 {
					id, err := q.Add(Spec{URL: srv.URL + "/upload?name=x", ContentType: "application/octet-stream", Path: path})
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, id)
				}
				for _, id := range ids {
					if rec, err := q.Wait(b.Context(), id); err != nil || rec.State != StateDone {
						b.Fatalf("%s %v %s", rec.State, err, rec.Error)
					}
				}
				got := float64(received.Load()-before) / time.Since(start).Seconds()
				ratio = got / float64(rate)
				b.ReportMetric(got/(1<<20), "MiB/s")
			}
			b.ReportMetric(ratio, "of-limit")
		})
	}
}
