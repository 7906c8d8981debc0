package nettest

import (
	"errors"
	"os"
)

// A silent blackhole the engine's TCP can see. Toxiproxy ends each TCP
// connection in its own process: its kernel acknowledges every byte
// Carrier sends, and its blackhole (the timeout toxic) swallows them
// after that, so a dead path is never seen in the acknowledgements there.
// A path that drops the packets themselves is made by taking the loopback
// interface down in a private network namespace: the kernel then has no
// route for them, sends nothing and tells nobody (no reset, no error to
// the sender), retransmitting on its doubling timer until the interface
// is up again. The namespace is a user namespace's too, so no privilege
// is needed where the system allows them; everything in it (toxiproxy,
// the sandbox, the engine) is one process, re-run in it.

// netnsEnv marks the process re-run inside the private network.
const netnsEnv = "CARRIER_NETTEST_NETNS"

// InPrivateNetwork reports whether this process is the one re-run in a
// private network namespace (RunInPrivateNetwork).
func InPrivateNetwork() bool { return os.Getenv(netnsEnv) == "1" }

// ErrNoNamespaces: the system refuses a user and network namespace.
var ErrNoNamespaces = errors.New("nettest: this system gives no private network namespace (user namespaces refused)")
