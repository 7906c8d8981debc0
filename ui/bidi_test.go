package ui

import "testing"

// Each row is a string as stored (logical order) and as it must be drawn
// by a renderer that lays out left to right (visual order).
func TestBidiVisualOrder(t *testing.T) {
	for _, c := range []struct {
		in, want string
		rtl      bool
	}{
		{"Carrier (293.0 KiB)", "Carrier (293.0 KiB)", false},
		{"دوست <friend@example.ir>", "<friend@example.ir> تسود", true},
		// A number and a Latin unit in a right-to-left line are two runs: the
		// number counts as right-to-left for the space between (rule N1).
		{"پیوست (293.0 KiB)", "(KiB 293.0) تسویپ", true},
		{"سلام.", ".مالس", true},
		{"שלום עולם", "םלוע םולש", true},
		{"Hi سلام 123 ok", "Hi 123 مالس ok", false},
		{"From: علی <ali@example.ir>", "From: یلع <ali@example.ir>", false},
		{"۳ پیوست", "تسویپ ۳", true},
		{"مرحبا (عالم)", "(ملاع) ابحرم", true},
		{"one\nدو", "one\nود", false},
	} {
		got, rtl := visualText(c.in)
		if got != c.want || rtl != c.rtl {
			t.Errorf("visualText(%q) = %q, rtl %v; want %q, rtl %v", c.in, got, rtl, c.want, c.rtl)
		}
	}
}
