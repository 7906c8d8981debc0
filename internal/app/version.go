package app

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is Carrier's version. FyneApp.toml is the one place it is
// written: the carrier binary (main.go's version.go) sets this from the
// copy of the file it embeds; "dev" is what packages built without it say.
var Version = "dev"

// VersionLine is what `carrier --version` prints: the version, the source
// revision when the build knows it, and the platform.
func VersionLine() string {
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " (" + s.Value[:12] + ")"
			}
		}
	}
	return fmt.Sprintf("carrier %s%s %s/%s %s", Version, rev, runtime.GOOS, runtime.GOARCH, runtime.Version())
}
