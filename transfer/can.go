package transfer

// Can reports whether the lifecycle table lets a job in state from make
// move m, for a front end (or the delivery package) deciding which of the
// person's commands to offer without copying the table.
func Can(m Move, from State) bool {
	for _, e := range lifecycle {
		if e.move == m && e.from == from {
			return true
		}
	}
	return false
}
