package ui

import (
	"fyne.io/fyne/v2/lang"
	netmail "net/mail"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"

	"carrier/internal/app"
)

// The reading pane shows a message as mail readers do: From, To, Cc
// (and Bcc, which only the sender's copy has), Date, Subject, in that
// order; people by their names, with their addresses on a smaller line
// beneath; the date in this computer's time zone.

// The reading pane writes a date with the weekday and month in words
// (longDate, in the window's language), so that no one wonders whether
// 03/04 is March or April.

type headerField struct{ Name, Value string }

// readingHeaders makes the header rows of a message. me is the mailbox's
// own address, shown as the sender of a message that names none (Gmail
// sends such a message from the account); received is the server's
// date for the message, used when it has no Date header.
func readingHeaders(hs []headerField, me string, received time.Time, loc *time.Location) []fyne.CanvasObject {
	get := func(name string) (string, bool) {
		for _, h := range hs {
			if strings.EqualFold(h.Name, name) {
				return h.Value, true
			}
		}
		return "", false
	}
	var rows []fyne.CanvasObject
	from, ok := get("From")
	if !ok || strings.TrimSpace(from) == "" {
		from = me
	}
	rows = append(rows, addressRow(lang.X("read.from", "From"), from))
	for _, name := range []string{"To", "Cc", "Bcc"} {
		if v, ok := get(name); ok && strings.TrimSpace(v) != "" {
			rows = append(rows, addressRow(headerName(name), v))
		}
	}
	date, _ := get("Date")
	rows = append(rows, wrapped(lang.X("read.date", "Date: {{.Date}}", w{"Date": readableDate(date, received, loc)})))
	subject, _ := get("Subject")
	rows = append(rows, wrapped(lang.X("read.subject", "Subject: {{.Subject}}", w{"Subject": app.Readable(orNone(subject))})))
	return rows
}

// addressRow is one address header: the people's names, and under them
// in a caption the addresses, which the names alone would hide. A list
// that does not parse is shown as it is.
func addressRow(name, value string) fyne.CanvasObject {
	names, addresses := displayNames(value)
	main := wrapped(lang.X("read.header", "{{.Name}}: {{.Value}}", w{"Name": name, "Value": app.Readable(names)}))
	if addresses == "" {
		return main
	}
	sub := wrapped(app.Readable(addresses))
	sub.SizeName = theme.SizeNameCaptionText
	// The addresses belong to the names above them: drawn close under them
	// (a label's own padding apart), not a row's gap away.
	return container.New(layout.NewCustomPaddedVBoxLayout(-2*theme.InnerPadding()+theme.Padding()), main, sub)
}

// displayNames says who an address list names: "Zoë Adams, bob@example.com",
// and their addresses ("zoe@example.com, bob@example.com") when at least
// one has a name; otherwise the addresses are the names and the second
// string is empty.
func displayNames(value string) (names, addresses string) {
	list, err := netmail.ParseAddressList(value)
	if err != nil || len(list) == 0 {
		return orNone(value), ""
	}
	var ns, as []string
	named := false
	for _, a := range list {
		as = append(as, a.Address)
		if a.Name != "" {
			ns, named = append(ns, a.Name), true
		} else {
			ns = append(ns, a.Address)
		}
	}
	if !named {
		return strings.Join(ns, ", "), ""
	}
	return strings.Join(ns, ", "), strings.Join(as, ", ")
}

// readableDate is a Date header in this computer's time zone; a header
// that does not parse is shown as written, and a missing one gives way to
// the date the server received the message.
func readableDate(header string, received time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.Local
	}
	if strings.TrimSpace(header) == "" {
		if received.IsZero() || received.UnixMilli() == 0 {
			return "(none)"
		}
		return longDate(received.In(loc))
	}
	t, err := netmail.ParseDate(header)
	if err != nil {
		return app.Readable(header)
	}
	return longDate(t.In(loc))
}

// headerName is an address header's name in the window's language.
func headerName(name string) string {
	switch name {
	case "To":
		return lang.X("read.to", "To")
	case "Cc":
		return lang.X("read.cc", "Cc")
	case "Bcc":
		return lang.X("read.bcc", "Bcc")
	}
	return name
}
