package app

import (
	"strconv"
	"strings"

	"carrier/internal/text"
)

// WindowWords is an error's text as the window shows it: where the app's
// words tell a terminal's user which command to run (ErrNoCredentials',
// NotAllowedError's; the journal keeps the text a failure was recorded
// with), the window says what to do in the window. The CLI prints the
// text as it is. It rewrites only those two pieces of advice, which the
// app writes itself: what a failure was is read from its transfer.Failure,
// never from its text.
func WindowWords(s string) string {
	s = strings.ReplaceAll(s, noCredentialsAdvice, "sign in on the Account screen, then press Retry")
	for {
		i := strings.Index(s, loginAdvice)
		if i < 0 {
			return s
		}
		end := strings.IndexByte(s[i+len(loginAdvice):], '`')
		if end < 0 {
			return s
		}
		s = s[:i] + "sign in again on the Account screen (Send asks for Google Drive when a message needs it)" + s[i+len(loginAdvice)+end+1:]
	}
}

// loginAdvice opens NotAllowedError's advice to a terminal's user, a
// command in backquotes: "run `carrier login --endpoint URL --for KIND`".
const loginAdvice = "run `carrier login "

// Printable is text.Printable: text from elsewhere made safe for one line.
func Printable(s string) string { return text.Printable(s) }

// PrintableLines is text.PrintableLines: Printable for several lines.
func PrintableLines(s string) string { return text.PrintableLines(s) }

// Readable is text.Readable: Printable for what a person wrote and reads.
func Readable(s string) string { return text.Readable(s) }

// ReadableLines is text.ReadableLines: Readable for several lines.
func ReadableLines(s string) string { return text.ReadableLines(s) }

// Thousands writes n with its thousands grouped: 1,214.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
