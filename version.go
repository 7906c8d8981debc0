package main

import (
	_ "embed"
	"regexp"

	"carrier/internal/app"
)

// FyneApp.toml is where Carrier's version is written, once: the fyne tool
// stamps it into the Windows exe, the packaging scripts read it
// (scripts/release/version.sh), and the binary embeds the file so that
// `carrier --version` of every artifact says the same.
//
//go:embed FyneApp.toml
var fyneApp []byte

var versionLine = regexp.MustCompile(`(?m)^Version *= *"([^"]+)"`)

// versionOf reads the Version of FyneApp.toml's [Details]; "" if it has none.
func versionOf(toml []byte) string {
	m := versionLine.FindSubmatch(toml)
	if m == nil {
		return ""
	}
	return string(m[1])
}

func init() {
	if v := versionOf(fyneApp); v != "" {
		app.Version = v
	}
}
