package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// Carrier's theme is Fyne's default with the colours that fell short of
// WCAG AA replaced: text at 4.5:1 or more against what it is drawn on,
// the outlines of controls (check boxes, entries) at 3:1 or more. Fyne's
// light palette drew "Done" in green on white at 1.5:1, hints and
// placeholders in grey at 1.3:1 and 3.2:1, and check box outlines at
// 1.14:1; its dark one drew disabled text at 1.5:1 and the primary blue,
// as text, at 4.0:1. theme_test.go renders every screen in both variants
// and measures.
//
// Fyne's "disabled" colour is also the colour of a low-importance label
// (a field's hint), so it is made legible too: it is dimmer than the
// foreground, never faint.
//
// The primary colour is Carrier's own rather than the system's accent: the
// accent Fyne offers (yellow, grey, orange…) is drawn under white text on
// buttons in some variants, and no one accent is legible under both.
var palette = map[fyne.ThemeVariant]map[fyne.ThemeColorName]color.Color{
	theme.VariantLight: {
		theme.ColorNameForeground:          rgb(0x2b, 0x2b, 0x2b), // 14:1 on white (Fyne: 7.0:1, and the disabled grey too near it)
		theme.ColorNameDisabled:            rgb(0x6a, 0x6a, 0x6a), // 4.9:1 on an entry's grey
		theme.ColorNamePlaceHolder:         rgb(0x66, 0x66, 0x66),
		theme.ColorNameInputBorder:         rgb(0x7a, 0x7a, 0x7a), // 3.9:1 against an entry's fill
		theme.ColorNamePrimary:             rgb(0x1f, 0x5f, 0xd6),
		theme.ColorNameHyperlink:           rgb(0x1f, 0x5f, 0xd6),
		theme.ColorNameForegroundOnPrimary: rgb(0xff, 0xff, 0xff),
		theme.ColorNameSuccess:             rgb(0x1b, 0x7f, 0x2a),
		theme.ColorNameForegroundOnSuccess: rgb(0xff, 0xff, 0xff),
		theme.ColorNameError:               rgb(0xc6, 0x28, 0x28),
		theme.ColorNameForegroundOnError:   rgb(0xff, 0xff, 0xff),
		theme.ColorNameWarning:             rgb(0xa1, 0x5c, 0x00),
		theme.ColorNameForegroundOnWarning: rgb(0xff, 0xff, 0xff),
	},
	theme.VariantDark: {
		theme.ColorNameDisabled:            rgb(0x95, 0x95, 0x95), // 4.9:1 on a disabled button
		theme.ColorNameInputBorder:         rgb(0x76, 0x76, 0x76),
		theme.ColorNamePrimary:             rgb(0x7a, 0xa7, 0xff), // light enough to be read on the dark background
		theme.ColorNameHyperlink:           rgb(0x7a, 0xa7, 0xff),
		theme.ColorNameForegroundOnPrimary: rgb(0x17, 0x17, 0x18), // so text on it is dark
		theme.ColorNameError:               rgb(0xff, 0x6b, 0x60),
		theme.ColorNameForegroundOnError:   rgb(0x17, 0x17, 0x18),
	},
}

func rgb(r, g, b uint8) color.NRGBA { return color.NRGBA{R: r, G: g, B: b, A: 0xff} }

// carrierTheme wraps Fyne's default theme with the palette above.
type carrierTheme struct {
	fyne.Theme
	forced *fyne.ThemeVariant // light or dark whatever the system prefers; nil: as the system prefers
}

func newTheme() *carrierTheme { return &carrierTheme{Theme: theme.DefaultTheme()} }

// newThemeVariant is the theme in one variant, whatever the system says.
func newThemeVariant(v fyne.ThemeVariant) *carrierTheme {
	t := newTheme()
	t.forced = &v
	return t
}

func (t *carrierTheme) variant(v fyne.ThemeVariant) fyne.ThemeVariant {
	if t.forced != nil {
		return *t.forced
	}
	if v != theme.VariantLight {
		return theme.VariantDark // Fyne's own default for any other value
	}
	return v
}

func (t *carrierTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	v = t.variant(v)
	if c, ok := palette[v][n]; ok {
		return c
	}
	return t.Theme.Color(n, v)
}

// UseTheme makes Carrier's theme the app's, unless the app already has it
// (in a chosen variant). New calls it; main.go calls it first so that a
// window shown before the screens exist (an error at start) has it too.
func UseTheme(a fyne.App) {
	t := a.Settings().Theme()
	if v, ok := t.(variantTheme); ok {
		t = v.Theme // the person's light or dark choice over Carrier's theme
	}
	if _, ours := t.(*carrierTheme); !ours {
		a.Settings().SetTheme(newTheme())
	}
}

// A progress bar draws its text in one colour over both its filled part
// (the primary colour) and the rest (the primary at half strength over the
// background), and no one colour reads on both with the app's primary: on
// white, white text on the half-strength blue is 2.0:1. A bar with text
// therefore gets a primary of its own: pale with dark text in the light
// variant, deep with light text in the dark one.
var barPalette = map[fyne.ThemeVariant]map[fyne.ThemeColorName]color.Color{
	theme.VariantLight: {
		theme.ColorNamePrimary:             rgb(0x7a, 0xa7, 0xff),
		theme.ColorNameForegroundOnPrimary: rgb(0x17, 0x17, 0x18),
	},
	theme.VariantDark: {
		theme.ColorNamePrimary:             rgb(0x1f, 0x5f, 0xd6),
		theme.ColorNameForegroundOnPrimary: rgb(0xf3, 0xf3, 0xf3),
	},
}

type barTheme struct{}

func (barTheme) app() fyne.Theme { return fyne.CurrentApp().Settings().Theme() }

func (b barTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	app := b.app()
	if vt, ok := app.(variantTheme); ok {
		v = vt.variant // the person's light or dark choice
	} else if ct, ok := app.(*carrierTheme); ok {
		v = ct.variant(v)
	} else if v != theme.VariantLight {
		v = theme.VariantDark
	}
	if c, ok := barPalette[v][n]; ok {
		return c
	}
	return app.Color(n, v)
}

func (b barTheme) Font(s fyne.TextStyle) fyne.Resource     { return b.app().Font(s) }
func (b barTheme) Icon(n fyne.ThemeIconName) fyne.Resource { return b.app().Icon(n) }
func (b barTheme) Size(n fyne.ThemeSizeName) float32       { return b.app().Size(n) }
