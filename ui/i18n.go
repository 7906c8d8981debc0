package ui

import (
	"embed"
	"os"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/lang"
)

// Carrier's own words in English, Persian, Hebrew and Arabic, as go-i18n
// catalogues. Every string the window shows is looked up by an explicit
// key (lang.X, lang.XN) so that rewording the English keeps the
// translations attached; TestEveryKeyInEveryLanguage holds the code and
// the four files to the same keys.
//
//go:embed translations/*.json
var translations embed.FS

// prefLanguage is the person's language, by code ("" for the system's).
// Fyne picks its localizer from the environment once the catalogues are
// added, so the choice applies at the next start: main sets LANGUAGE
// from it before LoadTranslations.
const prefLanguage = "language"

// languageCodes and languageNames are the Language setting's choices;
// each language is named in itself.
var (
	languageCodes = []string{"", "en", "fa", "he", "ar"}
	languageNames = []string{"", "English", "فارسی", "עברית", "العربية"}
)

// The catalogues are there from the start, whoever uses the package
// first; main loads them again once LANGUAGE says the chosen language.
func init() {
	if err := LoadTranslations(); err != nil {
		fyne.LogError("Carrier's translations could not be read", err)
	}
}

// LoadTranslations adds Carrier's catalogues to Fyne's and picks the
// language from the system's locale (LANGUAGE, LC_ALL, LC_MESSAGES,
// LANG). Called again after the environment changes, it picks again.
func LoadTranslations() error {
	err := lang.AddTranslationsFS(translations, "translations")
	// Each catalogue says which way its language reads: "rtl" in Persian,
	// Hebrew and Arabic. It is not words to translate but the direction
	// that goes with them.
	windowRTL.Store(lang.X("meta.direction", "ltr") == "rtl")
	return err
}

// UseLanguagePreference makes the language chosen in Settings, if any,
// the one LoadTranslations picks.
func UseLanguagePreference(a fyne.App) {
	code := a.Preferences().String(prefLanguage)
	for _, c := range languageCodes[1:] {
		if c == code {
			// LANGUAGE is ignored under LC_ALL=C (gettext's rule, which
			// Fyne's locale reader follows); the person's explicit choice
			// should not be.
			if v := os.Getenv("LC_ALL"); v == "C" || v == "POSIX" {
				os.Unsetenv("LC_ALL")
			}
			os.Setenv("LANGUAGE", code)
			return
		}
	}
}
