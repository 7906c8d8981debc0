package ui

import (
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

var updateEnglish = flag.Bool("update-en", false, "rewrite translations/en.json from the English in the code")

// pluralForms are CLDR's plural categories for each language, as go-i18n
// chooses among them.
var pluralForms = map[string][]string{
	"en": {"one", "other"},
	"fa": {"one", "other"},
	"he": {"one", "two", "other"},
	"ar": {"zero", "one", "two", "few", "many", "other"},
}

type usedKey struct {
	english string
	plural  bool
	where   string
}

// keysInCode reads every lang.X and lang.XN call in the package's
// sources: the key and its English must be literal strings, so that this
// test can see them.
func keysInCode(t *testing.T) map[string]usedKey {
	t.Helper()
	keys := map[string]usedKey{}
	eachCall(t, func(fset *token.FileSet, call *ast.CallExpr) {
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || pkg.Name != "lang" {
			return
		}
		where := fset.Position(call.Pos()).String()
		switch sel.Sel.Name {
		case "X", "XN":
		case "L", "N", "Localize", "LocalizePlural", "LocalizeKey", "LocalizePluralKey":
			t.Errorf("%s: lang.%s: Carrier's strings need an explicit key and literal English (lang.X or lang.XN)", where, sel.Sel.Name)
			return
		default:
			return
		}
		if len(call.Args) < 2 {
			t.Errorf("%s: lang.%s without key and English", where, sel.Sel.Name)
			return
		}
		key, err1 := literal(call.Args[0])
		english, err2 := literal(call.Args[1])
		if err1 != nil || err2 != nil {
			t.Errorf("%s: the key and the English of lang.%s must be literal strings", where, sel.Sel.Name)
			return
		}
		u := usedKey{english: english, plural: sel.Sel.Name == "XN", where: where}
		if prev, ok := keys[key]; ok && (prev.english != u.english || prev.plural != u.plural) {
			t.Errorf("%s: key %q used at %s with other English", where, key, prev.where)
		}
		keys[key] = u
	})
	return keys
}

// eachCall gives visit every call in the package's sources (tests aside).
func eachCall(t *testing.T, visit func(fset *token.FileSet, call *ast.CallExpr)) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				visit(fset, call)
			}
			return true
		})
	}
}

func literal(e ast.Expr) (string, error) {
	if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.ADD {
		l, err := literal(b.X)
		if err != nil {
			return "", err
		}
		r, err := literal(b.Y)
		return l + r, err
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", strconv.ErrSyntax
	}
	return strconv.Unquote(lit.Value)
}

func readCatalogue(t *testing.T, code string) map[string]any {
	t.Helper()
	data, err := translations.ReadFile("translations/" + code + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("%s.json: %v", code, err)
	}
	return c
}

var templateField = regexp.MustCompile(`\{\{\s*\.(\w+)\s*\}\}`)

func fields(s string) string {
	var f []string
	for _, m := range templateField.FindAllStringSubmatch(s, -1) {
		f = append(f, m[1])
	}
	sort.Strings(f)
	return strings.Join(dedupe(f), ",")
}

func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// TestEveryKeyInEveryLanguage: every string the code looks up has its
// English (the same as in the code), Persian, Hebrew and Arabic; plurals
// have every form their language needs; the templates' fields are the
// same in every language; and no catalogue holds a key the code does not
// use.
func TestEveryKeyInEveryLanguage(t *testing.T) {
	keys := keysInCode(t)
	if len(keys) == 0 {
		t.Fatal("no lang.X in the code")
	}
	// Fyne's own words (its dialogs' buttons, its menus) are looked up
	// in the same bundle, under Fyne's keys, whose English is the key.
	for k, english := range fyneKeys {
		keys[k] = usedKey{english: english, where: "fyneKeys (words.go)"}
	}
	if *updateEnglish {
		writeEnglish(t, keys)
	}
	for _, code := range []string{"en", "fa", "he", "ar"} {
		c := readCatalogue(t, code)
		for key, u := range keys {
			v, ok := c[key]
			if !ok {
				t.Errorf("%s.json lacks %q (%q, %s)", code, key, u.english, u.where)
				continue
			}
			want := fields(u.english)
			if !u.plural {
				s, ok := v.(string)
				if !ok {
					t.Errorf("%s.json: %q is not a plain string", code, key)
					continue
				}
				if code == "en" && s != u.english {
					t.Errorf("en.json: %q is %q, the code says %q", key, s, u.english)
				}
				if fields(s) != want {
					t.Errorf("%s.json: %q uses fields {%s}, the code gives {%s}", code, key, fields(s), want)
				}
				continue
			}
			forms, ok := v.(map[string]any)
			if !ok {
				t.Errorf("%s.json: %q is a plural without forms", code, key)
				continue
			}
			for _, form := range pluralForms[code] {
				s, ok := forms[form].(string)
				if !ok || s == "" {
					t.Errorf("%s.json: %q lacks the plural form %q", code, key, form)
					continue
				}
				// A form may leave the count out ("one attachment"), never
				// add a field the code does not give.
				for _, f := range strings.Split(fields(s), ",") {
					if f != "" && !strings.Contains(","+want+",", ","+f+",") {
						t.Errorf("%s.json: %q form %q uses {%s}, the code gives {%s}", code, key, form, f, want)
					}
				}
			}
			if code == "en" && forms["other"] != u.english {
				t.Errorf("en.json: %q other is %q, the code says %q", key, forms["other"], u.english)
			}
		}
		for key := range c {
			if _, ok := keys[key]; !ok {
				t.Errorf("%s.json holds %q, which the code does not use", code, key)
			}
		}
	}
}

// writeEnglish keeps en.json's singular forms ("one") where they exist
// and takes everything else from the code.
func writeEnglish(t *testing.T, keys map[string]usedKey) {
	old := readCatalogue(t, "en")
	out := map[string]any{}
	for key, u := range keys {
		if !u.plural {
			out[key] = u.english
			continue
		}
		one := u.english
		if m, ok := old[key].(map[string]any); ok {
			if s, ok := m["one"].(string); ok {
				one = s
			}
		}
		out[key] = map[string]string{"one": one, "other": u.english}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("translations/en.json", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestScreensInPersian builds the window as Carrier starts with
// LANGUAGE=fa: its words are Persian, in display order, and the labels
// whose paragraphs read right to left are aligned to the right.
func TestScreensInPersian(t *testing.T) {
	t.Cleanup(func() {
		useLanguage("")
		if err := LoadTranslations(); err != nil {
			t.Error(err)
		}
	})
	// Chosen, not from the environment: Windows and macOS read the
	// person's UI languages from the system, not LANGUAGE.
	useLanguage("fa")
	if err := LoadTranslations(); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	fa := readCatalogue(t, "fa")
	shown := func(key string) string {
		v, _ := visualText(fa[key].(string))
		return v
	}
	for _, c := range []struct {
		tab *tab
		key string
	}{{h.u.composeTab, "tab.compose"}, {h.u.transfersTab, "tab.transfers"}, {h.u.mailboxTab, "tab.mailbox"}, {h.u.accountTab, "tab.account"}} {
		if got, want := c.tab.button.Text, shown(c.key); got != want {
			t.Errorf("tab %s reads %q, want %q", c.key, got, want)
		}
	}
	for _, c := range []struct {
		name  string
		label *widget.Label
		key   string
	}{
		{"Transfers' empty list", h.u.transfers.empty, "transfers.empty"},
		{"Compose's attachments heading", h.u.compose.attHeading, "compose.attachments"},
	} {
		if c.key != "" && c.label.Text != shown(c.key) {
			t.Errorf("%s reads %q, want %q", c.name, c.label.Text, shown(c.key))
		}
		if c.label.Alignment != fyne.TextAlignTrailing {
			t.Errorf("%s (%q) is aligned %v, want right (trailing)", c.name, c.label.Text, c.label.Alignment)
		}
	}
	// A wrapping label, broken into lines for its width: in reading order.
	if who := h.u.account.who; who.AccessibilityLabel() != fa["account.sandbox"].(string) || who.Alignment != fyne.TextAlignTrailing {
		t.Errorf("Account's sender reads %q, aligned %v", who.AccessibilityLabel(), who.Alignment)
	}
	if got := TrayStatus(nil); got != fa["tray.none"] {
		t.Errorf("the tray says %q, want %q", got, fa["tray.none"])
	}
}

// TestLanguageSettingAppliesAtNextStart: the Language setting keeps its
// choice in the preferences and says it waits for the next start; at that
// start (UseLanguagePreference, then LoadTranslations, as main does) the
// window speaks the chosen language whatever the system says.
func TestLanguageSettingAppliesAtNextStart(t *testing.T) {
	t.Cleanup(func() {
		useLanguage("")
		if err := LoadTranslations(); err != nil {
			t.Error(err)
		}
	})
	t.Setenv("LC_ALL", "C") // LANGUAGE alone would be ignored under C
	t.Setenv("LANGUAGE", "")
	h := newHarness(t)
	s := h.u.account.settings
	test.Tap(choiceNamed(s.lang, display("עברית")))
	if got := h.u.app.Preferences().String(prefLanguage); got != "he" {
		t.Fatalf("the preference holds %q, want he", got)
	}
	if !s.status.Visible() || !strings.Contains(s.status.logical, "again") || !strings.Contains(s.status.logical, "עברית") {
		t.Errorf("the setting says %q", s.status.Text)
	}
	if got := lang.X("tab.account", "Account"); got != "Account" {
		t.Errorf("the language changed before the next start: %q", got)
	}
	UseLanguagePreference(h.u.app)
	if err := LoadTranslations(); err != nil {
		t.Fatal(err)
	}
	if got, want := lang.X("tab.account", "Account"), readCatalogue(t, "he")["tab.account"]; got != want {
		t.Errorf("after the next start the Account tab is %q, want %q", got, want)
	}
}

// TestFyneDialogWordsInEveryLanguage: Fyne v2.8.1 has no Persian, Hebrew
// or Arabic words for its own dialogs; Carrier's catalogues give them
// under Fyne's keys, so a confirmation's Yes and No, and an information
// dialog's OK, speak the window's language.
func TestFyneDialogWordsInEveryLanguage(t *testing.T) {
	t.Cleanup(func() {
		useLanguage("")
		if err := LoadTranslations(); err != nil {
			t.Error(err)
		}
	})
	test.NewTempApp(t)
	for _, code := range []string{"en", "fa", "he", "ar"} {
		useLanguage(code)
		if err := LoadTranslations(); err != nil {
			t.Fatal(err)
		}
		c := readCatalogue(t, code)
		for k := range fyneKeys {
			if got := lang.L(k); got != c[k] {
				t.Errorf("%s: Fyne's %q reads %q, want %q", code, k, got, c[k])
			}
		}
		win := test.NewTempWindow(t, nil)
		win.Resize(fyne.NewSize(600, 400))
		dialog.NewConfirm("?", "?", func(bool) {}, win).Show()
		var buttons []string
		for _, o := range test.LaidOutObjects(win.Canvas().Overlays().Top()) {
			if b, ok := o.(*widget.Button); ok {
				buttons = append(buttons, b.Text)
			}
		}
		sort.Strings(buttons)
		want := []string{c["No"].(string), c["Yes"].(string)}
		sort.Strings(want)
		if strings.Join(buttons, "|") != strings.Join(want, "|") {
			t.Errorf("%s: a confirmation's buttons read %q, want %q", code, buttons, want)
		}
		if code != "en" && c["Cancel"] == "Cancel" {
			t.Errorf("%s: Cancel is not translated", code)
		}
	}
}

// Words a person reads go through the catalogues: no screen's line, label
// or status is given English as a bare string (Media once said "Reading
// Carrier's albums in Google Photos…" in English in a Persian window).
func TestNoBareWordsOnScreen(t *testing.T) {
	shown := map[string]bool{"say": true, "newLabel": true, "setLabel": true, "boldLabel": true, "italic": true,
		"wrapped": true, "newWrapLabel": true, "showError": true, "showInformation": true, "setBatchState": true}
	words := regexp.MustCompile(`[A-Za-z]{2,} [A-Za-z]{2,}`)
	eachCall(t, func(fset *token.FileSet, call *ast.CallExpr) {
		var fn string
		switch e := call.Fun.(type) {
		case *ast.Ident:
			fn = e.Name
		case *ast.SelectorExpr:
			fn = e.Sel.Name
		}
		if !shown[fn] {
			return
		}
		for _, a := range call.Args {
			ast.Inspect(a, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
						if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "lang" {
							return false // looked up
						}
					}
				}
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && words.MatchString(lit.Value) {
					t.Errorf("%s: %s shows bare English %s", fset.Position(lit.Pos()), fn, lit.Value)
				}
				return true
			})
		}
	})
}
