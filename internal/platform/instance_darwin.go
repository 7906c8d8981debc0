package platform

// ClaimInstance makes the window's socket in the data folder
// (instance_sock.go). ErrRunning when another Carrier of this person
// holds it; any other error means no hand-over: open the window alone.
// appID is not needed: the folder is the window's name.
func ClaimInstance(appID, dataDir string) (*Instance, error) { return claimSocket(dataDir) }

// HandOver gives items to the window holding the data folder's socket
// and returns once it has taken them; an error means no window took
// them: open one.
func HandOver(appID, dataDir string, items []string) error { return handOverSocket(dataDir, items) }
