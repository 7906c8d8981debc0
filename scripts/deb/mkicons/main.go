// Command mkicons writes the hicolor icon theme's sizes of a square PNG,
// for the Debian package: DIR/SIZExSIZE/apps/NAME.png for each size.
// Desktops pick the size nearest to what they draw; without the small
// ones they scale the 512-pixel icon down themselves, blurred.
//
// Usage: go run ./scripts/deb/mkicons assets/icon.png DIR NAME
package main

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"

	"golang.org/x/image/draw"
)

// sizes are the hicolor sizes desktops look up for an application's
// icon (the freedesktop icon theme specification's usual set).
var sizes = []int{16, 24, 32, 48, 64, 128, 256, 512}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: mkicons IN.png DIR NAME")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "mkicons:", err)
		os.Exit(1)
	}
}

func run(in, dir, name string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	src, err := png.Decode(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	b := src.Bounds()
	if b.Dx() != b.Dy() {
		return fmt.Errorf("%s is %dx%d pixels; an icon must be square", in, b.Dx(), b.Dy())
	}
	for _, n := range sizes {
		if n > b.Dx() {
			continue // scaled up it would only be blurred
		}
		dst := image.NewNRGBA(image.Rect(0, 0, n, n))
		draw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
		out := filepath.Join(dir, fmt.Sprintf("%dx%d", n, n), "apps")
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		if err := writePNG(filepath.Join(out, name+".png"), dst); err != nil {
			return err
		}
	}
	return nil
}

func writePNG(path string, img image.Image) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
