//go:build !linux

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "scale: the scale measurement runs on Linux, whose kernel gives its figures (wait4's peak RSS, a file's blocks)")
	os.Exit(2)
}
