//go:build linux

package main

// What NetworkManager tells Carrier (issue 33): the network back after an
// offline spell, and a Wi-Fi switch (its PrimaryConnection changes, and
// the old path silently drops). The carrier binary runs as a person runs
// it (`carrier upload`, its own defaults), pointed at a private D-Bus bus
// (DBUS_SYSTEM_BUS_ADDRESS) on which python-dbusmock's NetworkManager
// template stands in for the system's, and uploads to the sandbox (its
// rate fault the link's speed) in a private network namespace:
//
//   - Offline spell: once the upload is under way, the loopback goes down
//     (every packet silently dropped, as blackhole.go) and NetworkManager
//     says so (StateChanged 20); after the spell the loopback comes up and
//     NetworkManager says online (StateChanged 70). Measured: that word to
//     the sandbox's next media byte.
//   - Wi-Fi switch: once the upload is under way, every connection Carrier
//     holds goes silently dead (policy routing: `ip rule` blackholes their
//     ports, in both directions; new connections pass) and
//     NetworkManager's PrimaryConnection changes. Measured: that change to
//     media bytes on a new connection (16 KiB read from it).

import (
	"bytes"
	"carrier/bench/internal/mdsection"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"

	"carrier/internal/app"
	"carrier/internal/nettest"
	"carrier/sandbox"
)

const (
	nmName = "org.freedesktop.NetworkManager"
	nmPath = "/org/freedesktop/NetworkManager"
	nmIf   = "org.freedesktop.NetworkManager"
	mockIf = "org.freedesktop.DBus.Mock"

	// HeldOfflineWords is what Carrier prints while NetworkManager says
	// offline (app.HeldOffline).
	HeldOfflineWords = app.HeldOffline

	underWay = 2 << 20 // bytes the sandbox read before the network changes
	newFlow  = 16 << 10
)

type nmRound struct {
	took    time.Duration // the upload, start to end
	flowing time.Duration // NetworkManager's word to the next media bytes
	retries []string      // what Carrier said of each retry and hold
}

// runNM measures the offline spell (spell > 0) or the Wi-Fi switch. Out
// of the namespace it builds the carrier binary (unless given) and runs
// itself again in one.
func runNM(c config, bin string, spell time.Duration, wifi bool) error {
	if !nettest.InPrivateNetwork() {
		if bin == "" {
			dir, err := os.MkdirTemp("", "carrier-netbench-bin-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			bin = filepath.Join(dir, "carrier")
			fmt.Fprintln(os.Stderr, "netbench: building carrier")
			gotool := os.Getenv("GO")
			if gotool == "" {
				gotool = "go"
			}
			build := exec.Command(gotool, "build", "-o", bin, ".")
			build.Stdout, build.Stderr = os.Stderr, os.Stderr
			if err := build.Run(); err != nil {
				return fmt.Errorf("building carrier: %w", err)
			}
		}
		return nettest.RunInPrivateNetwork(append(os.Args[1:], "-carrier", bin)...)
	}
	if err := nettest.SetLoopback(true); err != nil {
		return err
	}
	if wifi {
		// The local table after the rules that cut a connection, so they
		// apply to loopback traffic.
		if err := ipRun("rule", "add", "pref", "1000", "lookup", "local"); err != nil {
			return err
		}
		if err := ipRun("rule", "del", "pref", "0"); err != nil {
			return err
		}
	}
	work, file, cleanup, err := scratch(c.size)
	if err != nil {
		return err
	}
	defer cleanup()
	bus, stop, err := startNM(work)
	if err != nil {
		return err
	}
	defer stop()
	var rounds, deaf []nmRound
	for i := range c.rounds {
		what := fmt.Sprintf("an offline spell of %s", spell)
		if wifi {
			what = "a Wi-Fi switch"
		}
		fmt.Fprintf(os.Stderr, "netbench: round %d, %s\n", i+1, what)
		r, err := nmUpload(c, bin, bus, work, file, i, spell, wifi, true)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "netbench: round %d, %s, not heard (no system bus)\n", i+1, what)
		d, err := nmUpload(c, bin, bus, work, file, i, spell, wifi, false)
		if err != nil {
			return err
		}
		rounds, deaf = append(rounds, r), append(deaf, d)
	}
	md := nmMarkdown(c, rounds, deaf, spell, wifi)
	fmt.Print(md)
	if c.out == "" {
		return nil
	}
	if wifi {
		switchBegin, switchEnd := marks(c, "netbench-wifi-switch", "-wifi-switch")
		return mdsection.Write(c.out, md, switchBegin, switchEnd)
	}
	onlineBegin, onlineEnd := marks(c, "netbench-nm-online", "-nm-online 20s")
	return mdsection.Write(c.out, md, onlineBegin, onlineEnd)
}

func ipRun(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// nmBus is the private bus with NetworkManager's stand-in on it.
type nmBus struct {
	addr string
	conn *dbus.Conn
}

func (b *nmBus) call(method string, args ...any) error {
	return b.conn.Object(nmName, nmPath).Call(mockIf+"."+method, 0, args...).Err
}

// state says NetworkManager's global state (StateChanged).
func (b *nmBus) state(s uint32) error { return b.call("SetGlobalConnectionState", s) }

// primary changes NetworkManager's PrimaryConnection (PropertiesChanged).
func (b *nmBus) primary(n int) error {
	p := dbus.ObjectPath(fmt.Sprintf("%s/ActiveConnection/%d", nmPath, n))
	return b.call("SetProperty", dbus.ObjectPath(nmPath), nmIf, "PrimaryConnection", dbus.MakeVariant(p))
}

// startNM starts a D-Bus daemon of its own and python-dbusmock's
// NetworkManager template on it, online on ActiveConnection/1.
func startNM(work string) (*nmBus, func(), error) {
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		return nil, nil, errors.New("dbus-daemon is not installed (make deps-test installs it)")
	}
	if exec.Command("/usr/bin/python3", "-c", "import dbusmock").Run() != nil {
		return nil, nil, errors.New("python3-dbusmock is not installed (make deps-test installs it)")
	}
	var procs []*exec.Cmd
	stop := func() {
		for _, p := range slices.Backward(procs) {
			p.Process.Kill()
			p.Wait()
		}
	}
	daemon := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address")
	daemon.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := daemon.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := daemon.Start(); err != nil {
		return nil, nil, err
	}
	procs = append(procs, daemon)
	line := make(chan string, 1)
	go func() {
		var b [512]byte
		n, _ := out.Read(b[:])
		line <- strings.TrimSpace(string(b[:n]))
	}()
	var addr string
	select {
	case addr = <-line:
	case <-time.After(30 * time.Second):
	}
	if addr == "" {
		stop()
		return nil, nil, errors.New("dbus-daemon printed no address")
	}
	mock := exec.Command("/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "networkmanager")
	mock.Env = append(os.Environ(), "DBUS_SYSTEM_BUS_ADDRESS="+addr)
	mock.Stdout, mock.Stderr = nil, os.Stderr
	mock.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := mock.Start(); err != nil {
		stop()
		return nil, nil, err
	}
	procs = append(procs, mock)
	conn, err := dbus.Connect(addr)
	if err != nil {
		stop()
		return nil, nil, err
	}
	b := &nmBus{addr: addr, conn: conn}
	for deadline := time.Now().Add(30 * time.Second); ; {
		var has bool
		if conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, nmName).Store(&has) == nil && has {
			break
		}
		if time.Now().After(deadline) {
			conn.Close()
			stop()
			return nil, nil, errors.New("dbusmock's NetworkManager never took its name")
		}
		time.Sleep(50 * time.Millisecond) // another process's start: nothing to wait on but the bus
	}
	if err := b.call("AddProperty", nmIf, "PrimaryConnection", dbus.MakeVariant(dbus.ObjectPath(nmPath+"/ActiveConnection/1"))); err != nil {
		conn.Close()
		stop()
		return nil, nil, err
	}
	return b, func() { conn.Close(); stop() }, nil
}

// nmUpload runs `carrier upload` once through a fresh sandbox, changing
// the network under it once the upload is under way.
func nmUpload(c config, bin string, bus *nmBus, work, file string, round int, spell time.Duration, wifi, hear bool) (nmRound, error) {
	var r nmRound
	dir := filepath.Join(work, fmt.Sprintf("round%d-%t", round, hear))
	srv, err := nettest.StartSandbox(sandbox.Options{Dir: filepath.Join(dir, "sandbox"), Token: token, NoSync: true, Faults: fmt.Sprintf("rate=%dKB", c.rateKBs), SerializeSessions: c.serialize})
	if err != nil {
		return r, err
	}
	defer srv.Close()
	tokFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokFile, []byte(token), 0o600); err != nil {
		return r, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	target := srv.URL + "/upload/storage/v1/b/netbench/o?name=" + url.QueryEscape(fmt.Sprintf("nm%d", round))
	cmd := exec.CommandContext(ctx, bin, "upload", "--url", target, "--file", file, "--content-type", "application/octet-stream",
		"--state-dir", filepath.Join(dir, "state"), "--token-file", tokFile)
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DBUS_") && !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "CARRIER_") {
			env = append(env, kv)
		}
	}
	// Its own home: nothing of the person's Carrier is read or written.
	cmd.Env = append(env, "DBUS_SESSION_BUS_ADDRESS="+bus.addr, "HOME="+filepath.Join(dir, "home"))
	if hear {
		cmd.Env = append(cmd.Env, "DBUS_SYSTEM_BUS_ADDRESS="+bus.addr)
	} else {
		// The control: no system bus, so Carrier hears nothing of the
		// change and finds it by itself.
		cmd.Env = append(cmd.Env, "DBUS_SYSTEM_BUS_ADDRESS=unix:path="+filepath.Join(dir, "no-bus"))
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return r, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fail := func(err error) (nmRound, error) {
		cancel()
		<-exited
		return r, fmt.Errorf("round %d: %w: %s", round+1, err, tailLines(stderr.String(), 5))
	}
	select {
	case <-srv.Reached(underWay):
	case err := <-exited:
		return r, fmt.Errorf("round %d: carrier ended before the upload was under way: %v: %s", round+1, err, tailLines(stderr.String(), 5))
	}
	var (
		t0      time.Time
		flowing func() bool
		undo    []string // ip rule preferences to delete
	)
	if !wifi {
		if err := nettest.SetLoopback(false); err != nil {
			return fail(err)
		}
		if err := bus.state(20); err != nil { // NM_STATE_DISCONNECTED
			return fail(err)
		}
		for end := time.Now().Add(spell); time.Now().Before(end); {
			time.Sleep(min(time.Second, time.Until(end)))
			if os.Getenv("NETBENCH_DUMP") != "" {
				fmt.Fprintf(os.Stderr, "%6.2f offline: the sandbox holds %d, wire %d\n", time.Since(start).Seconds(), srv.SB.Stats().BytesReceived, srv.WireBytes())
			}
		}
		if err := nettest.SetLoopback(true); err != nil {
			return fail(err)
		}
		before := srv.SB.Stats().BytesReceived
		if os.Getenv("NETBENCH_DUMP") != "" {
			fmt.Fprintf(os.Stderr, "online: %v\n", srv.Conns())
		}
		t0 = time.Now()
		if err := bus.state(70); err != nil { // NM_STATE_CONNECTED_GLOBAL
			return fail(err)
		}
		flowing = func() bool { return srv.SB.Stats().BytesReceived > before }
	} else {
		old := map[string]bool{}
		for i, conn := range srv.Conns() {
			old[conn.Remote] = true
			_, port, err := net.SplitHostPort(conn.Remote)
			if err != nil {
				return fail(err)
			}
			for j, dir := range []string{"sport", "dport"} {
				pref := strconv.Itoa(10 + 2*i + j)
				if err := ipRun("rule", "add", "pref", pref, "ipproto", "tcp", dir, port, "blackhole"); err != nil {
					return fail(err)
				}
				undo = append(undo, pref)
			}
		}
		t0 = time.Now()
		if err := bus.primary(round + 2); err != nil {
			return fail(err)
		}
		flowing = func() bool {
			for _, conn := range srv.Conns() {
				if !old[conn.Remote] && conn.Read >= newFlow {
					return true
				}
			}
			return false
		}
	}
	for !flowing() {
		select {
		case err := <-exited:
			return r, fmt.Errorf("round %d: carrier ended before bytes flowed again: %v: %s", round+1, err, tailLines(stderr.String(), 5))
		case <-time.After(5 * time.Millisecond):
		}
	}
	r.flowing = time.Since(t0)
	if os.Getenv("NETBENCH_DUMP") != "" {
		fmt.Fprintf(os.Stderr, "%6.2f flowing after %s: the sandbox holds %d, its connections %v\n", time.Since(start).Seconds(), r.flowing, srv.SB.Stats().BytesReceived, srv.Conns())
	}
	err = <-exited
	r.took = time.Since(start)
	for _, pref := range undo {
		if e := ipRun("rule", "del", "pref", pref); e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		return r, fmt.Errorf("round %d: carrier: %v: %s", round+1, err, tailLines(stderr.String(), 5))
	}
	if st := srv.SB.Stats(); st.Completions != 1 {
		return r, fmt.Errorf("round %d: the sandbox made %d objects for one upload", round+1, st.Completions)
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if _, why, ok := strings.Cut(l, ": retrying in "); ok {
			_, why, _ = strings.Cut(why, "): ")
			why, _, _ = strings.Cut(digits.ReplaceAllString(why, "N"), ", so the request")
			r.retries = append(r.retries, "retry: "+why)
		} else if strings.Contains(l, HeldOfflineWords) {
			r.retries = append(r.retries, "held: "+HeldOfflineWords)
		}
	}
	if !wifi {
		if err := bus.state(70); err != nil {
			return r, err
		}
	}
	return r, nil
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func nmMarkdown(c config, rounds, deaf []nmRound, spell time.Duration, wifi bool) string {
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	var flows, deafFlows []time.Duration
	for i, r := range rounds {
		flows, deafFlows = append(flows, r.flowing), append(deafFlows, deaf[i].flowing)
	}
	m, md := medianDur(flows), medianDur(deafFlows)
	control := "Each round runs again with Carrier given no system bus (it hears nothing; the control): " +
		"the engine alone finds the change, from its connections' TCP acknowledgements and its retries.\n\n"
	if wifi {
		switchBegin, switchEnd := marks(c, "netbench-wifi-switch", "-wifi-switch")
		w("%s\n\n## %s\n\n", switchBegin, titled(c, "A Wi-Fi switch: NetworkManager's PrimaryConnection changes"))
		w("Measured %s on %s, load average %s. `go run ./bench/netbench -wifi-switch%s -size %dMiB -rate %d -rounds %d`%s. "+
			"The carrier binary (`carrier upload`, its own defaults) uploads to the sandbox (its rate fault: it reads bodies "+
			"at %d KB/s) in a private network namespace, on a private D-Bus bus where python-dbusmock's NetworkManager "+
			"template stands in for the system's. Once %d MiB reached the sandbox, every connection Carrier holds goes "+
			"silently dead (`ip rule` blackholes their ports both ways; a new connection passes: the new network) and "+
			"NetworkManager's PrimaryConnection changes. Measured: from that change to the body's bytes flowing on a new "+
			"connection (%d KiB read from it). Before the engine heard NetworkManager it was about 119 s (the issue's figure).%s %s",
			time.Now().UTC().Format("2006-01-02 15:04 UTC"), platform(), loadAvg(), serialFlag(c), c.size>>20, c.rateKBs, c.rounds, label(c), c.rateKBs, underWay>>20, newFlow>>10, serialNote(c), control)
		w("| round | bytes flow on the new connection after | the upload took | Carrier said | not heard: bytes flow after | not heard: Carrier said |\n|---|---|---|---|---|---|\n")
		for i, r := range rounds {
			w("| %d | %.2f s | %.1f s | %s | %.2f s | %s |\n", i+1, r.flowing.Seconds(), r.took.Seconds(), strings.Join(r.retries, "; "), deaf[i].flowing.Seconds(), strings.Join(deaf[i].retries, "; "))
		}
		w("\n| figure | measured | goal | |\n|---|---|---|---|\n")
		w("| bytes flow on the new connection after the switch, median | %.2f s | %s |\n", m.Seconds(), goal(c, "at most 2 s", m <= 2*time.Second))
		w("| the same, NetworkManager not heard (the control), median | %.2f s | | |\n%s\n", md.Seconds(), switchEnd)
		return b.String()
	}
	onlineBegin, onlineEnd := marks(c, "netbench-nm-online", "-nm-online 20s")
	w("%s\n\n## %s\n\n", onlineBegin, titled(c, "Online again after an offline spell: NetworkManager says so"))
	w("Measured %s on %s, load average %s. `go run ./bench/netbench -nm-online %s%s -size %dMiB -rate %d -rounds %d`%s. "+
		"The carrier binary (`carrier upload`, its own defaults) uploads to the sandbox (its rate fault: it reads bodies "+
		"at %d KB/s) in a private network namespace, on a private D-Bus bus where python-dbusmock's NetworkManager "+
		"template stands in for the system's. Once %d MiB reached the sandbox, every packet is silently dropped (the "+
		"loopback down) and NetworkManager says offline (StateChanged 20); %s later the loopback is up and NetworkManager "+
		"says online (StateChanged 70). Measured: from that word to the sandbox's next media byte. Before the engine heard "+
		"NetworkManager it was 24.9 s (the issue's figure).%s %s",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), platform(), loadAvg(), spell, serialFlag(c), c.size>>20, c.rateKBs, c.rounds, label(c), c.rateKBs, underWay>>20, spell, serialNote(c), control)
	w("| round | first bytes flow after NetworkManager says online | the upload took | Carrier said | not heard: bytes flow after | not heard: Carrier said |\n|---|---|---|---|---|---|\n")
	for i, r := range rounds {
		w("| %d | %.2f s | %.1f s | %s | %.2f s | %s |\n", i+1, r.flowing.Seconds(), r.took.Seconds(), strings.Join(r.retries, "; "), deaf[i].flowing.Seconds(), strings.Join(deaf[i].retries, "; "))
	}
	w("\n| figure | measured | goal | |\n|---|---|---|---|\n")
	w("| first bytes flow after NetworkManager says online, median | %.2f s | %s |\n", m.Seconds(), goal(c, "at most 1.5 s", m <= 1500*time.Millisecond))
	w("| the same, NetworkManager not heard (the control), median | %.2f s | | |\n%s\n", md.Seconds(), onlineEnd)
	return b.String()
}
