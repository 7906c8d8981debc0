package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"slices"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The chart is drawn by hand with the standard image packages and the
// 7x13 bitmap font, doubled: no plotting tool needs installing, and the
// PNG is the same wherever the harness runs.

const (
	chartW, chartH = 1500, 1060
	plotL, plotR   = 120, 1120 // plot area's x range
	legendX        = 1150
	textScale      = 2
)

var (
	colWhite   = color.RGBA{255, 255, 255, 255}
	colBlack   = color.RGBA{30, 30, 30, 255}
	colGrid    = color.RGBA{225, 225, 225, 255}
	colAxis    = color.RGBA{90, 90, 90, 255}
	colDurable = color.RGBA{31, 119, 180, 255}
	colNoSync  = color.RGBA{230, 120, 10, 255}
	colGoal    = color.RGBA{214, 39, 40, 255}
)

func modeColor(m mode) color.RGBA {
	if m.fsync {
		return colDurable
	}
	return colNoSync
}

type canvas struct{ img *image.RGBA }

// panel is one plot: a log2 chunk-size x axis and a linear y axis.
type panel struct {
	c          *canvas
	top, bot   int // plot area's y range
	xMin, xMax float64
	yMax       float64
}

func (p *panel) x(chunkMiB float64) int {
	f := (math.Log2(chunkMiB) - math.Log2(p.xMin)) / (math.Log2(p.xMax) - math.Log2(p.xMin))
	return plotL + int(f*float64(plotR-plotL))
}

func (p *panel) y(v float64) int {
	return p.bot - int(v/p.yMax*float64(p.bot-p.top))
}

func (r *report) chart() ([]byte, error) {
	c := &canvas{img: image.NewRGBA(image.Rect(0, 0, chartW, chartH))}
	draw.Draw(c.img, c.img.Bounds(), &image.Uniform{colWhite}, image.Point{}, draw.Src)
	size := r.file.size

	var chunks []float64
	maxRate, maxRSS := 0.0, float64(goalRSS>>20)
	for _, mr := range r.modes {
		for _, s := range mr.summaries(size) {
			if s.c.chunk > 0 {
				chunks = append(chunks, float64(s.c.chunk)/(1<<20))
			}
			maxRate = math.Max(maxRate, s.mbpsMax)
			maxRSS = math.Max(maxRSS, float64(s.peakRSS)/(1<<20))
		}
	}
	if len(chunks) == 0 {
		return nil, fmt.Errorf("no chunked contender was measured")
	}
	xMin, xMax := slices.Min(chunks)/1.6, slices.Max(chunks)*1.6

	c.text(plotL, 14, fmt.Sprintf("Uploading %s to the sandbox: throughput and memory against chunk size", human(size)), colBlack, textScale, false)
	c.text(plotL, 48, fmt.Sprintf("%s, %d CPUs, %s: medians of %d rounds", r.machine.cpuModel, r.machine.cpus, r.machine.date.Format("2006-01-02"), r.cfg.rounds), colAxis, textScale, false)

	top := &panel{c: c, top: 90, bot: 500, xMin: xMin, xMax: xMax, yMax: niceMax(maxRate)}
	top.frame("throughput (MB/s)", "")
	bot := &panel{c: c, top: 590, bot: 960, xMin: xMin, xMax: xMax, yMax: niceMax(maxRSS * 1.1)}
	bot.frame("peak RSS (MiB)", "chunk size (MiB, log scale)")

	// The goal goes under the data.
	c.dashed(plotL, bot.y(goalRSS>>20), plotR, bot.y(goalRSS>>20), colGoal, 2, 12, 8)
	c.text(plotL+8, bot.y(goalRSS>>20)-30, fmt.Sprintf("goal: %d MiB", goalRSS>>20), colGoal, textScale, false)

	for i, mr := range r.modes {
		col := modeColor(mr.mode)
		// The official client's squares of the two modes sit side by side,
		// not on top of each other.
		nudge := (2*i - (len(r.modes) - 1)) * 9
		var pts, rss [][2]int
		for _, s := range mr.summaries(size) {
			if s.n == 0 || s.c.bin != "" {
				continue
			}
			switch s.c.kind {
			case kindCurl:
				c.dashedFrom(plotL, top.y(s.mbps), plotR, top.y(s.mbps), col, 2, 12, 12, 12*i)
				c.dashedFrom(plotL, bot.y(float64(s.peakRSS)/(1<<20)), plotR, bot.y(float64(s.peakRSS)/(1<<20)), col, 2, 12, 12, 12*i)
			case kindCarrier:
				x := top.x(float64(s.c.chunk) / (1 << 20))
				c.line(x, top.y(s.mbpsMin), x, top.y(s.mbpsMax), col, 1)
				c.line(x-6, top.y(s.mbpsMin), x+6, top.y(s.mbpsMin), col, 1)
				c.line(x-6, top.y(s.mbpsMax), x+6, top.y(s.mbpsMax), col, 1)
				pts = append(pts, [2]int{x, top.y(s.mbps)})
				rss = append(rss, [2]int{x, bot.y(float64(s.peakRSS) / (1 << 20))})
			case kindOfficial:
				x := top.x(float64(s.c.chunk)/(1<<20)) + nudge
				c.line(x, top.y(s.mbpsMin), x, top.y(s.mbpsMax), col, 1)
				c.square(x, top.y(s.mbps), 8, col)
				c.square(x, bot.y(float64(s.peakRSS)/(1<<20)), 8, col)
			}
		}
		for _, series := range [][][2]int{pts, rss} {
			slices.SortFunc(series, func(a, b [2]int) int { return a[0] - b[0] })
			for i := 1; i < len(series); i++ {
				c.line(series[i-1][0], series[i-1][1], series[i][0], series[i][1], col, 3)
			}
			for _, p := range series {
				c.disc(p[0], p[1], 7, col)
				c.disc(p[0], p[1], 3, colWhite)
			}
		}
	}
	r.legend(c)

	var buf bytes.Buffer
	if err := png.Encode(&buf, c.img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (r *report) legend(c *canvas) {
	y := 100
	c.text(legendX, y, "legend", colBlack, textScale, false)
	y += 44
	for _, mr := range r.modes {
		col := modeColor(mr.mode)
		name := "durable sandbox"
		if !mr.mode.fsync {
			name = "--fsync=false"
		}
		c.text(legendX, y, name, col, textScale, false)
		y += 34
		c.line(legendX, y+12, legendX+40, y+12, col, 3)
		c.disc(legendX+20, y+12, 7, col)
		c.disc(legendX+20, y+12, 3, colWhite)
		c.text(legendX+52, y, "carrier upload", colBlack, textScale, false)
		y += 32
		c.dashed(legendX, y+12, legendX+40, y+12, col, 2, 10, 6)
		c.text(legendX+52, y, "curl, one PUT", colBlack, textScale, false)
		y += 32
		c.square(legendX+20, y+12, 8, col)
		c.text(legendX+52, y, "official client", colBlack, textScale, false)
		y += 50
	}
	c.dashed(legendX, y+12, legendX+40, y+12, colGoal, 2, 10, 6)
	c.text(legendX+52, y, "goal", colGoal, textScale, false)
	y += 50
	for _, line := range []string{"bars: range of", "the rounds", "", "carrier's default:", human(defaultChunk) + " chunks", "", "official client:", "16 MiB chunks"} {
		c.text(legendX, y, line, colAxis, textScale, false)
		y += 28
	}
}

// frame draws the axes, grid, ticks and labels of a panel.
func (p *panel) frame(ylabel, xlabel string) {
	c := p.c
	step := niceStep(p.yMax)
	for v := 0.0; v <= p.yMax+step/1000; v += step {
		y := p.y(v)
		c.line(plotL, y, plotR, y, colGrid, 1)
		label := fmt.Sprintf("%g", v)
		c.text(plotL-12-len(label)*7*textScale, y-13, label, colAxis, textScale, false)
	}
	for mib := 1.0; mib <= p.xMax; mib *= 2 {
		if mib < p.xMin {
			continue
		}
		x := p.x(mib)
		c.line(x, p.top, x, p.bot, colGrid, 1)
		c.line(x, p.bot, x, p.bot+8, colAxis, 1)
		label := fmt.Sprintf("%g", mib)
		c.text(x-len(label)*7*textScale/2, p.bot+12, label, colAxis, textScale, false)
	}
	c.line(plotL, p.top, plotL, p.bot, colAxis, 2)
	c.line(plotL, p.bot, plotR, p.bot, colAxis, 2)
	c.text(18, (p.top+p.bot)/2+len(ylabel)*7*textScale/2, ylabel, colBlack, textScale, true)
	if xlabel != "" {
		c.text((plotL+plotR)/2-len(xlabel)*7*textScale/2, p.bot+50, xlabel, colBlack, textScale, false)
	}
}

// niceMax rounds v up to a tick of niceStep, with some headroom.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	step := niceStep(v * 1.1)
	return math.Ceil(v*1.1/step) * step
}

// niceStep is 1, 2 or 5 times a power of ten, for about six ticks.
func niceStep(v float64) float64 {
	raw := v / 6
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func (c *canvas) set(x, y int, col color.RGBA) {
	if image.Pt(x, y).In(c.img.Rect) {
		c.img.SetRGBA(x, y, col)
	}
}

// dot is a filled square of side w centred on (x, y): the pen.
func (c *canvas) dot(x, y, w int, col color.RGBA) {
	for dy := -w / 2; dy < w-w/2; dy++ {
		for dx := -w / 2; dx < w-w/2; dx++ {
			c.set(x+dx, y+dy, col)
		}
	}
}

func (c *canvas) line(x0, y0, x1, y1 int, col color.RGBA, w int) {
	c.dashed(x0, y0, x1, y1, col, w, 1<<30, 0)
}

// dashed draws a line of width w, on for `on` pixels and off for `off`.
func (c *canvas) dashed(x0, y0, x1, y1 int, col color.RGBA, w, on, off int) {
	c.dashedFrom(x0, y0, x1, y1, col, w, on, off, 0)
}

// dashedFrom starts the dash pattern phase pixels in: two dashed lines at
// the same height, one with phase on, interleave instead of hiding each
// other.
func (c *canvas) dashedFrom(x0, y0, x1, y1 int, col color.RGBA, w, on, off, phase int) {
	dx, dy := x1-x0, y1-y0
	n := max(abs(dx), abs(dy))
	for i := 0; i <= n; i++ {
		if off > 0 && (i+phase)%(on+off) >= on {
			continue
		}
		x, y := x0, y0
		if n > 0 {
			x = x0 + int(math.Round(float64(dx*i)/float64(n)))
			y = y0 + int(math.Round(float64(dy*i)/float64(n)))
		}
		c.dot(x, y, w, col)
	}
}

func (c *canvas) disc(x, y, r int, col color.RGBA) {
	for dy := -r; dy <= r; dy++ {
		for dx := -r; dx <= r; dx++ {
			if dx*dx+dy*dy <= r*r {
				c.set(x+dx, y+dy, col)
			}
		}
	}
}

func (c *canvas) square(x, y, r int, col color.RGBA) {
	for dy := -r; dy <= r; dy++ {
		for dx := -r; dx <= r; dx++ {
			c.set(x+dx, y+dy, col)
		}
	}
}

// text draws s with its top-left corner at (x, y), each font pixel as a
// scale x scale block; vertical text reads bottom to top, starting at (x, y)
// as its bottom-left corner.
func (c *canvas) text(x, y int, s string, col color.RGBA, scale int, vertical bool) {
	face := basicfont.Face7x13
	w := font.MeasureString(face, s).Ceil()
	h := face.Height
	mask := image.NewAlpha(image.Rect(0, 0, w, h))
	d := &font.Drawer{Dst: mask, Src: image.Opaque, Face: face, Dot: fixed.P(0, face.Ascent)}
	d.DrawString(s)
	for my := 0; my < h; my++ {
		for mx := 0; mx < w; mx++ {
			if mask.AlphaAt(mx, my).A < 128 {
				continue
			}
			for sy := 0; sy < scale; sy++ {
				for sx := 0; sx < scale; sx++ {
					if vertical {
						c.set(x+my*scale+sy, y-mx*scale-sx, col)
					} else {
						c.set(x+mx*scale+sx, y+my*scale+sy, col)
					}
				}
			}
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
