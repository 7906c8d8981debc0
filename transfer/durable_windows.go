package transfer

// readRefusalPasses: a reader that opens a journal file while another
// process moves a new version over it is refused for that instant (see
// sharingViolation), and tries again for a little while, as the writer
// does (platform.DurableRename).
func readRefusalPasses(err error) bool { return sharingViolation(err) }
