package app

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is Carrier's version, as FyneApp.toml says it (a test keeps the
// two equal); a release build may set it with -ldflags "-X".
var Version = "0.1.0"

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
