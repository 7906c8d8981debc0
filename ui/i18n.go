package ui

import (
	"embed"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/lang"
	"github.com/jeandeaual/go-locale"
	"golang.org/x/text/language"
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
// Fyne picks its localizer from the system's locales once the catalogues
// are added, so the choice applies at the next start: main calls
// UseLanguagePreference before LoadTranslations.
const prefLanguage = "language"

// languageCodes and languageNames are the Language setting's choices;
// each language is named in itself.
var (
	languageCodes = []string{"", "en", "fa", "he", "ar"}
	languageNames = []string{"", "English", "فارسی", "עברית", "العربية"}
)

// chosen is the language the person chose ("": the system's).
var (
	chosenMu sync.Mutex
	chosen   string
)

// The catalogues are there from the start, whoever uses the package
// first; main loads them again once the person's choice is known.
func init() {
	if err := LoadTranslations(); err != nil {
		fyne.LogError("Carrier's translations could not be read", err)
	}
}

// LoadTranslations adds Carrier's catalogues to Fyne's. Fyne matches the
// system's locales (LANGUAGE, LC_ALL, LC_MESSAGES, LANG on Linux; the
// user's UI languages on Windows and macOS) against the catalogues it
// has; so under each of the system's locales Carrier files the catalogue
// it should speak there: the chosen language's, or the one of that
// locale's language (English where Carrier has none). A choice thus wins
// on every system, not only where an environment variable is read, and
// loading again after the choice is cleared undoes it. Called again after
// the environment changes, it picks again.
func LoadTranslations() error {
	err := lang.AddTranslationsFS(translations, "translations")
	chosenMu.Lock()
	code := chosen
	chosenMu.Unlock()
	locales, lerr := locale.GetLocales()
	if lerr != nil {
		locales = nil
	}
	for _, l := range append(locales, "en") {
		tag, perr := language.Parse(strings.ReplaceAll(l, "_", "-"))
		if perr != nil {
			continue // "C", "POSIX": no language
		}
		want := code
		if want == "" {
			base, _ := tag.Base()
			want = "en"
			for _, c := range languageCodes[1:] {
				if c == base.String() {
					want = c
				}
			}
		}
		data, rerr := translations.ReadFile("translations/" + want + ".json")
		if rerr != nil {
			continue
		}
		if aerr := lang.AddTranslationsForLocale(data, fyne.Locale(tag.String())); aerr != nil && err == nil {
			err = aerr
		}
	}
	// Each catalogue says which way its language reads: "rtl" in Persian,
	// Hebrew and Arabic. It is not words to translate but the direction
	// that goes with them.
	windowRTL.Store(lang.X("meta.direction", "ltr") == "rtl")
	return err
}

// UseLanguagePreference makes the language chosen in Settings, if any,
// the one LoadTranslations picks.
func UseLanguagePreference(a fyne.App) {
	useLanguage(a.Preferences().String(prefLanguage))
}

// useLanguage makes code the language LoadTranslations picks; "" or an
// unknown code, the system's.
func useLanguage(code string) {
	chosenMu.Lock()
	defer chosenMu.Unlock()
	chosen = ""
	for _, c := range languageCodes[1:] {
		if c == code {
			chosen = code
		}
	}
}
