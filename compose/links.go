package compose

import (
	"fmt"
	"html"
	"os"
	"sort"
	"strings"
)

// Files too large for a message go to the sender's Google Drive and the
// message carries a link to each, the way Gmail's own client does it: in
// the plain text part, and as a block in an HTML part that mail readers
// show as a card.

// Link is a file the message links to instead of attaching it.
type Link struct {
	Name string // the file's name, as people see it
	Size int64  // bytes
	URL  string // where the recipients open it
}

// LinkPolicy says which attachments may go as links.
type LinkPolicy int

const (
	LinksAuto   LinkPolicy = iota // files over the threshold, and as many as it takes to fit the limit
	LinksAlways                   // every attachment goes as a link
	LinksNever                    // none: a message over the limit is refused
)

// ParseLinkPolicy reads --links.
func ParseLinkPolicy(s string) (LinkPolicy, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return LinksAuto, nil
	case "always":
		return LinksAlways, nil
	case "never":
		return LinksNever, nil
	}
	return 0, fmt.Errorf("--links is auto, always or never, not %q", s)
}

// DefaultLinkThreshold is Gmail's: a file over 25 MB goes as a Drive link.
const DefaultLinkThreshold = 25_000_000

// PlanLinks splits m's attachments into those that stay attached and
// those that go as links, for method (see PlanFiles), from the files'
// sizes on disk and the person's choices (path: true for a link; nil for
// none). A file it cannot stat counts as empty (Check names the problem).
func PlanLinks(m *Message, method Method, policy LinkPolicy, threshold int64, choose map[string]bool) (attach, link []string) {
	files := make([]File, len(m.Attachments))
	for i, p := range m.Attachments {
		files[i].Path = p
		if fi, err := os.Stat(p); err == nil {
			files[i].Size = fi.Size()
		}
		if c, ok := choose[p]; ok {
			files[i].Choice = &c
		}
	}
	ways, _ := PlanFiles(m.EstimateText(), files, method, policy, threshold)
	for i, p := range m.Attachments {
		if ways[i].Link {
			link = append(link, p)
		} else {
			attach = append(attach, p)
		}
	}
	return attach, link
}

// File is an attachment as PlanFiles weighs it: its size, and the
// person's choice if they made one (true: a link).
type File struct {
	Path   string
	Size   int64
	Choice *bool
}

// Way is how PlanFiles sends a file, and why.
type Way struct {
	Link bool
	Why  Why
}

// Why a file goes the way it does.
type Why int

const (
	WhyFits   Why = iota // attached: the message has room
	WhyChosen            // the person chose
	WhyOver              // a link: over the threshold (or --links always)
	WhyToFit             // a link: the message would not fit with it attached
	WhyNever             // attached: --links never
)

// PlanFiles decides, for a message whose text encodes to text bytes, how
// each file goes: the person's choice first; under LinksAuto every file
// over threshold as a link, then the largest of the rest until the message
// fits the method's limit. It returns the ways, in the files' order, and
// the message's encoded size going that way. It reads nothing from disk,
// so a window can call it as the person types.
func PlanFiles(text int64, files []File, method Method, policy LinkPolicy, threshold int64) ([]Way, int64) {
	if threshold <= 0 {
		threshold = DefaultLinkThreshold
	}
	ways := make([]Way, len(files))
	size := text
	var rest []int // files Carrier may still link, to fit
	for i, f := range files {
		switch {
		case f.Choice != nil:
			ways[i] = Way{*f.Choice, WhyChosen}
		case policy == LinksNever:
			ways[i] = Way{false, WhyNever}
		case policy == LinksAlways || f.Size > threshold:
			ways[i] = Way{true, WhyOver}
		default:
			ways[i] = Way{false, WhyFits}
			rest = append(rest, i)
		}
		if ways[i].Link {
			size += linksEstimate(1)
		} else {
			size += EstimateAttachment(f.Path, f.Size)
		}
	}
	sort.SliceStable(rest, func(a, b int) bool { return files[rest[a]].Size > files[rest[b]].Size })
	for _, i := range rest {
		if size <= method.Limit() {
			break
		}
		ways[i] = Way{true, WhyToFit}
		size += linksEstimate(1) - EstimateAttachment(files[i].Path, files[i].Size)
	}
	return ways, size
}

// linksEstimate is what n links add to a message, text and HTML, names
// and addresses included, with room to spare.
func linksEstimate(n int) int64 { return int64(n) * 1200 }

// bodies are the text and HTML the message carries: the person's, and the
// links after them. A message with links and no HTML of its own gets one,
// its text escaped, so that readers show the card.
func (m *Message) bodies() (text, htm string) {
	text, htm = m.Text, m.HTML
	if len(m.Links) == 0 {
		return text, htm
	}
	text = strings.TrimRight(text, "\r\n") + "\n\n" + linksText(m.Links)
	if htm == "" {
		htm = `<div dir="auto" style="white-space:pre-wrap">` + html.EscapeString(m.Text) + "</div>\n"
	}
	block := linksHTML(m.Links)
	if i := strings.LastIndex(strings.ToLower(htm), "</body>"); i >= 0 {
		htm = htm[:i] + block + htm[i:]
	} else {
		htm += block
	}
	return text, htm
}

// In the text each file takes three lines: its name, its size, its link.
// A line break ends a paragraph for the bidirectional algorithm, so a
// Persian, Hebrew or Arabic name cannot reorder the size or the link, and
// the text needs no invisible isolates (FSI ... PDI), which plain readers
// show as junk. In HTML the name is isolated by bdi.
func linksText(links []Link) string {
	var b strings.Builder
	if len(links) == 1 {
		b.WriteString("1 file is shared with you on Google Drive:\n")
	} else {
		fmt.Fprintf(&b, "%d files are shared with you on Google Drive:\n", len(links))
	}
	for _, l := range links {
		fmt.Fprintf(&b, "\n%s\n%s\n%s\n", plainName(l.Name), HumanSize(l.Size), l.URL)
	}
	return b.String()
}

func linksHTML(links []Link) string {
	var b strings.Builder
	b.WriteString(`<div class="carrier-drive-links" style="margin-top:16px;border:1px solid #dadce0;border-radius:8px;padding:8px 12px;max-width:480px">` + "\n")
	for _, l := range links {
		fmt.Fprintf(&b, `<div style="padding:6px 0"><a href="%s" style="font-weight:bold"><bdi>%s</bdi></a> <span style="color:#5f6368">(%s, Google Drive)</span></div>`+"\n",
			html.EscapeString(l.URL), html.EscapeString(plainName(l.Name)), HumanSize(l.Size))
	}
	b.WriteString("</div>\n")
	return b.String()
}

// plainName is a name without control characters, line breaks or
// direction marks (its own line, or bdi, does the bidi work).
func plainName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return '_'
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f:
			return '_'
		}
		return r
	}, s)
}
