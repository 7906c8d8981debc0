package cli

import (
	"flag"
	"strconv"
	"strings"
	"time"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/app/message"
)

// linkFlags say how `carrier send` shares files too large for a message.
type linkFlags struct {
	links, share, expiry, over string
}

func (f *linkFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.links, "links", "auto", "files too large to attach go to Google Drive as links: auto (over --link-over, or when the message would not fit), always, or never (refuse a message over the limit)")
	fs.StringVar(&f.share, "share", "recipients", "who may open the linked files: recipients (each by address) or anyone (anyone with the link)")
	fs.StringVar(&f.expiry, "link-expiry", "", "recipients' access to the linked files ends after this long, e.g. 30d or 72h (at most 365d)")
	fs.StringVar(&f.over, "link-over", "25MB", "a file larger than this goes as a link (under --links auto), e.g. 25MB, 100MiB")
}

func (f *linkFlags) options() (app.LinkOptions, error) {
	var o app.LinkOptions
	var err error
	if o.Policy, err = compose.ParseLinkPolicy(f.links); err != nil {
		return o, usagef("%v", err)
	}
	if o.Share, err = message.ParseShare(f.share); err != nil {
		return o, usagef("%v", err)
	}
	if f.expiry != "" {
		if o.Expiry, err = parseDays(f.expiry); err != nil || o.Expiry <= 0 {
			return o, usagef("--link-expiry is a length of time such as 30d or 72h, not %q", f.expiry)
		}
		if o.Expiry > app.MaxLinkExpiry {
			return o, usagef("--link-expiry is at most 365d (Google Drive's limit), not %s", f.expiry)
		}
		if o.Share == message.ShareAnyone {
			return o, usagef("--link-expiry applies to --share recipients only: Google Drive does not let a link for anyone expire")
		}
	}
	if o.Threshold, err = parseSize(f.over); err != nil || o.Threshold <= 0 {
		return o, usagef("--link-over is a size such as 25MB or 100MiB, not %q", f.over)
	}
	return o, nil
}

// parseDays reads a Go duration, or a whole number of days ("30d").
func parseDays(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n > 100000 {
			return 0, strconv.ErrSyntax
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// parseSize reads bytes with an optional unit: B, KB, MB, GB (powers of
// 1000) or KiB, MiB, GiB (powers of 1024).
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n < 0 || n*float64(mult) > 1<<62 {
		return 0, strconv.ErrSyntax
	}
	return int64(n * float64(mult)), nil
}
