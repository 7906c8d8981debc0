package ui

import (
	"strings"

	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/app/message"
)

// fileWay is how one file goes, and why when Carrier chose.
type fileWay struct {
	link   bool
	reason string // "over 23.8 MiB", "to fit Gmail's 35.0 MiB", "your choice"; "" for a file that fits
}

// plan is compose.PlanFiles's decision, from the sizes read when the
// files were attached (typing must not touch the disk), with the person's
// choices first. size is the message's encoded size as it would go
// (messageSize).
func (c *composeScreen) plan() (ways map[string]fileWay, size int64) {
	return c.planChoosing(c.choice)
}

// planChoosing is plan with choice in place of the person's choices.
func (c *composeScreen) planChoosing(choice map[string]bool) (ways map[string]fileWay, size int64) {
	msg := c.message()
	files := make([]compose.File, len(c.attachments))
	for i, p := range c.attachments {
		files[i] = compose.File{Path: p, Size: c.attFiles[p].Size}
		if link, chosen := choice[p]; chosen {
			files[i].Choice = &link
		}
	}
	planned, _ := compose.PlanFiles(msg.TextSize(), files, compose.Send, compose.LinksAuto, compose.DefaultLinkThreshold)
	ways = map[string]fileWay{}
	for i, p := range c.attachments {
		ways[p] = fileWay{planned[i].Link, whyText(planned[i].Why)}
	}
	return ways, c.messageSize(msg, ways)
}

// driveIDChars is the length of the ids Google Drive gives files to come
// (files.generateIds; the sandbox's are as long): a link's address names
// one, which the meter counts before Drive gave it.
const driveIDChars = 33

// messageSize is the length of msg as it goes with its files going ways:
// exact (compose.EncodedSize) from what was read when each file was
// attached, its type once read; a link counted with its address as it
// will read but for the id Drive has not given yet, of Drive's length.
func (c *composeScreen) messageSize(msg *compose.Message, ways map[string]fileWay) int64 {
	var atts []compose.Attachment
	var root string
	for _, p := range c.attachments {
		a := c.attFiles[p]
		if !ways[p].link {
			atts = append(atts, a)
			continue
		}
		if root == "" {
			root = c.u.deps.Target()
		}
		msg.Links = append(msg.Links, compose.Link{Name: compose.AttachmentName(p), Size: a.Size, URL: app.ViewLink(root, strings.Repeat("x", driveIDChars))})
	}
	return msg.EncodedSize(atts)
}

// linked are the files that go as Drive links, in the message's order.
func (c *composeScreen) linked() []string {
	ways, _ := c.plan()
	var out []string
	for _, p := range c.attachments {
		if ways[p].link {
			out = append(out, p)
		}
	}
	return out
}

// whyText says why a file goes the way it does; "" for a file that fits.
func whyText(why compose.Why) string {
	switch why {
	case compose.WhyChosen:
		return lang.X("compose.why.chosen", "your choice")
	// The limits in the unit every size of the window is in (binary:
	// "57.2 MiB · over 23.8 MiB", not "over 25 MB" beside it).
	case compose.WhyOver:
		return lang.X("compose.why.overlimit", "over {{.Limit}}", w{"Limit": humanSize(compose.DefaultLinkThreshold)})
	case compose.WhyToFit:
		return lang.X("compose.why.fitlimit", "to fit Gmail's {{.Limit}}", w{"Limit": humanSize(compose.LimitSend)})
	}
	return ""
}

// flip makes a file go the other way than it does now, by the person's
// choice.
func (c *composeScreen) flip(p string) {
	ways, _ := c.plan()
	c.choice[p] = !ways[p].link
	c.updateMeter()
}

// estimate is the message's encoded size as it would go, to the byte
// once the files' types are read.
func (c *composeScreen) estimate() int64 {
	_, size := c.plan()
	return size
}

// updateMeter shows how each file goes and the message's encoded size
// against the send limit: the files that go as links do not count.
func (c *composeScreen) updateMeter() {
	ways, est := c.plan()
	var links int
	var linked int64
	for _, p := range c.attachments {
		w, r := ways[p], c.attRows[p]
		if w.link {
			links++
			linked += c.attFiles[p].Size
		}
		if r == nil {
			continue
		}
		name := compose.AttachmentName(p)
		how, importance := lang.X("compose.how.attached", "Attached"), widget.MediumImportance
		r.toggle.Text, r.toggle.Icon, r.toggle.name = display(lang.X("compose.aslink", "Send as link")), theme.UploadIcon(), lang.X("compose.aslink.name", "Send {{.Name}} as a Google Drive link", map[string]any{"Name": name})
		if w.link {
			how, importance = lang.X("compose.how.link", "Drive link"), widget.HighImportance
			r.toggle.Text, r.toggle.Icon, r.toggle.name = display(lang.X("compose.attachinstead", "Attach instead")), theme.MailAttachmentIcon(), lang.X("compose.attachinstead.name", "Attach {{.Name}} to the message instead", map[string]any{"Name": name})
		}
		if w.reason != "" {
			how += " · " + w.reason
		}
		if v, _ := visualText(how); r.how.Text != v || r.how.Importance != importance {
			r.how.Importance = importance
			setLabel(r.how, how)
		}
		r.toggle.Refresh()
	}
	c.meter.SetValue(min(float64(est)/compose.LimitSend, 1))
	c.meterText = meterWords(est, compose.LimitSend)
	c.meter.setOver(est > compose.LimitSend)
	if links > 0 {
		c.meterText = lang.XN("compose.meter.links", "{{.Count}} files go as Drive links, {{.Linked}}; the message itself {{.Size}}", links, w{"Count": links, "Linked": humanSize(linked), "Size": c.meterText})
	}
	c.meter.Refresh()
	if links > 0 {
		c.linkOpts.Show()
	} else {
		c.linkOpts.Hide()
	}
	if c.share.chosen == 0 {
		c.expiry.Object.Show()
	} else {
		c.expiry.Object.Hide()
	}
	if est > compose.LimitSend {
		over := est - compose.LimitSend
		setLabel(c.meterNote, lang.X("compose.toolarge", "Too large to send: {{.Over}} over the 35 MiB limit once encoded. Remove about {{.Remove}} of attachments, or send some as Drive links.", w{"Over": humanSize(over), "Remove": humanSize(over * 3 / 4)}))
		c.meterNote.Importance = widget.DangerImportance
		c.meterNote.Show()
	} else {
		c.meterNote.SetText("")
		c.meterNote.Importance = widget.MediumImportance
		c.meterNote.Hide()
	}
	c.meterNote.Refresh()
	c.updateButtons()
	c.relayout()
	c.keepLocal()
}

// linkOptions are the message's link settings as chosen on the screen.
func (c *composeScreen) linkOptions() app.LinkOptions {
	ways, _ := c.plan()
	o := app.LinkOptions{Policy: compose.LinksAuto, Choose: map[string]bool{}}
	for p, w := range ways {
		o.Choose[p] = w.link
	}
	o.Replaces = c.reopened
	if c.share.chosen == 1 {
		o.Share = message.ShareAnyone
	} else {
		o.Expiry = expiryTimes[c.expiry.chosen]
	}
	return o
}

// meterWords says the message's size against its limit: "12.0 KiB of
// 35.0 MiB", or by how much it is over.
func meterWords(size, limit int64) string {
	if size > limit {
		return lang.X("compose.meter.over", "{{.Size}}, over the {{.Limit}} limit by {{.Over}}", w{"Size": humanSize(size), "Limit": humanSize(limit), "Over": humanSize(size - limit)})
	}
	return lang.X("row.amount", "{{.Done}} of {{.Size}}", w{"Done": humanSize(size), "Size": humanSize(limit)})
}
