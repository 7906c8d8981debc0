package ui

import (
	"errors"
	"fyne.io/fyne/v2/lang"
	netmail "net/mail"
	"strings"
	"unicode/utf8"

	"carrier/internal/app"
)

// addressProblem checks a field of comma-separated addresses as the
// message's own check will (compose.ParseAddresses), and says what is wrong
// with the first bad address, naming that address only: a person who typed
// forty addresses must not search one line of all of them for the typo, and
// Go's parser's words ("mail: missing '@' or angle-addr") are not theirs.
func addressProblem(list string) error {
	if strings.ContainsAny(list, "\r\n") {
		return errors.New(lang.X("addr.oneline", "the addresses must be on one line"))
	}
	whole, err := netmail.ParseAddressList(list)
	if err == nil || strings.TrimSpace(list) == "" {
		for _, a := range whole {
			if !isASCIIText(a.Address) {
				return errors.New(lang.X("addr.nonascii", "{{.Address}} has letters email cannot carry in an address: write its domain in its xn-- form", w{"Address": quoteAddress(a.Address)}))
			}
			if _, domain, _ := strings.Cut(a.Address, "@"); !strings.Contains(strings.Trim(domain, "."), ".") {
				return errors.New(lang.X("addr.nodot", "{{.Address}} lacks the end of its domain, such as .com", w{"Address": quoteAddress(a.Address)}))
			}
		}
		return nil
	}
	for _, a := range splitAddresses(list) {
		if strings.TrimSpace(a) == "" {
			continue
		}
		if _, err := netmail.ParseAddress(a); err != nil {
			return errors.New(lang.X("addr.bad", "{{.Address}} is not an address: {{.Why}}", w{"Address": quoteAddress(a), "Why": whyNotAddress(a)}))
		}
	}
	// Each part reads alone but the list does not: a quote that never
	// closes swallows the commas after it.
	return errors.New(lang.X("addr.list", "these addresses cannot be read: check the quotes (\") and angle brackets (< >), and put a comma between addresses"))
}

// splitAddresses cuts a list at the commas that separate addresses: not
// those inside a quoted name ("Doe, Jane" <jane@example.com>), angle
// brackets or a comment.
func splitAddresses(list string) []string {
	var out []string
	quoted, escaped := false, false
	angle, comment, start := 0, 0, 0
	for i, r := range list {
		switch {
		case escaped:
			escaped = false
		case r == '\\':
			escaped = true
		case r == '"':
			quoted = !quoted
		case quoted:
		case r == '<':
			angle++
		case r == '>' && angle > 0:
			angle--
		case r == '(':
			comment++
		case r == ')' && comment > 0:
			comment--
		case r == ',' && angle == 0 && comment == 0:
			out = append(out, list[start:i])
			start = i + 1
		}
	}
	return append(out, list[start:])
}

// whyNotAddress says, in a person's words, what keeps a from being an
// address.
func whyNotAddress(a string) string {
	a = strings.TrimSpace(a)
	addr := a
	if i := strings.LastIndexByte(a, '<'); i >= 0 {
		j := strings.IndexByte(a[i:], '>')
		if j < 0 {
			return lang.X("addr.why.noclose", "its < has no closing >")
		}
		addr = strings.TrimSpace(a[i+1 : i+j])
		if rest := strings.TrimSpace(a[i+j+1:]); rest != "" {
			return lang.X("addr.why.after", "there is text after its >")
		}
	} else if strings.Contains(a, ">") {
		return lang.X("addr.why.noopen", "its > has no opening <")
	}
	local, domain, found := strings.Cut(addr, "@")
	switch {
	case addr == "":
		return lang.X("addr.why.empty", "there is no address between < and >")
	case !found:
		if strings.ContainsAny(addr, " \t") {
			return lang.X("addr.why.noat.name", "it has no @ (write a name as Name <name@example.com>)")
		}
		return lang.X("addr.why.noat", "it has no @")
	case strings.Contains(domain, "@"):
		return lang.X("addr.why.twoat", "it has more than one @")
	case local == "":
		return lang.X("addr.why.nolocal", "it has nothing before @")
	case domain == "":
		return lang.X("addr.why.nodomain", "it has nothing after @")
	case strings.ContainsAny(addr, " \t"):
		return lang.X("addr.why.space", "it has a space in it (write a name as Name <name@example.com>)")
	case strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") || strings.Contains(domain, ".."):
		return lang.X("addr.why.domaindot", "its part after @ has a dot in the wrong place")
	case strings.HasPrefix(local, ".") || strings.HasSuffix(local, ".") || strings.Contains(local, ".."):
		return lang.X("addr.why.localdot", "its part before @ has a dot in the wrong place")
	case strings.ContainsAny(addr, `()<>[]:;,\"`):
		return lang.X("addr.why.char", "it has a character addresses cannot have (one of ( ) < > [ ] : ; , \\ \")")
	}
	return lang.X("addr.why.form", "write it as name@example.com or Name <name@example.com>")
}

// quoteAddress is a in quotes, cut short when long, so that the line that
// names it stays short.
func quoteAddress(a string) string {
	a = strings.TrimSpace(a)
	const most = 48
	if utf8.RuneCountInString(a) > most {
		r := []rune(a)
		a = string(r[:most-1]) + "…"
	}
	return "'" + app.Printable(a) + "'"
}

func isASCIIText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
