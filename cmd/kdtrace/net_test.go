package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/kdtrace/kdtrace/internal/dtracetest"
)

// The ports of the network workload (netWorkload). It runs in a network
// namespace of its own, on that namespace's loopback interface; the
// ports are unusual, so that the probes, which see every namespace's
// packets, can be told the workload's packets by them.
const (
	portServer  = 47707 // the TCP server
	portClient  = 47708 // its client
	portServer6 = 47717 // the TCP server on ::1
	portClient6 = 47718 // its client
	portClosed  = 47709 // a TCP port nobody listens on
	portRefused = 47712 // the client that connects to it
	portUDPRecv = 47710 // a UDP receiver, on 127.0.0.1 and ::1
	portUDPSend = 47711 // its sender
)

// The workload's exchange: over IPv4, then IPv6, the client sends each
// of tcpSizes, and the server answers each with twice as many bytes; the UDP sender sends
// each of udpSizes to 127.0.0.1, and udp6Size to ::1. The loopback
// interface's MTU is loMTU: the last of udpSizes goes in three
// fragments, at offsets 0, 1480 and 2960.
var (
	tcpSizes = []int{10, 20, 30}
	udpSizes = []int{5, 6, 3000}
)

const loMTU = 1500

const udp6Size = 7

// TestNetWorkload is the workload of the network provider tests, not a
// test: they run this test binary for it under unshare -n, in a network
// namespace of its own, with KDTRACE_NET_WORKLOAD set.
func TestNetWorkload(t *testing.T) {
	if os.Getenv("KDTRACE_NET_WORKLOAD") == "" {
		t.Skip("the network provider tests run it in a network namespace")
	}
	if err := netWorkload(); err != nil {
		t.Fatal(err)
	}
}

// netWorkload brings the namespace's loopback interface up, waits for a
// line on its standard input (the tracing is active), and makes the
// known exchange: one TCP connection, its requests and answers and
// close; a connection refused; UDP datagrams over IPv4 and IPv6.
func netWorkload() error {
	if err := loopbackUp(); err != nil {
		return err
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	if err := tcpExchange("tcp4", "127.0.0.1", portServer, portClient); err != nil {
		return fmt.Errorf("tcp: %w", err)
	}
	if err := tcpExchange("tcp6", "::1", portServer6, portClient6); err != nil {
		return fmt.Errorf("tcp6: %w", err)
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: portRefused}}
	if c, err := d.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", portClosed)); err == nil {
		c.Close()
		return errors.New("a connection to a closed port was accepted")
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		return err
	}
	if err := udpExchange("udp4", "127.0.0.1", udpSizes); err != nil {
		return err
	}
	if err := udpExchange("udp6", "::1", []int{udp6Size}); err != nil {
		return err
	}
	// An echo request each way, of as many bytes as FreeBSD's ping
	// and ping6 send by default.
	if err := ping("ip4:icmp", "127.0.0.1", 8, 0, 56); err != nil {
		return err
	}
	if err := ping("ip6:ipv6-icmp", "::1", 128, 129, 8); err != nil {
		return err
	}
	// The connection's last segments are handled as they are sent, on
	// loopback; wait until the kernel has them all the same.
	return waitTCPDone()
}

// loopbackUp sets the lo interface up, its MTU loMTU.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint32(loMTU)
	return unix.IoctlIfreq(fd, unix.SIOCSIFMTU, ifr)
}

// mayFragment clears the DF bit of the IPv4 packets c sends, so that
// the kernel fragments those over the MTU.
func mayFragment(c syscall.Conn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DONT)
	}); err != nil {
		return err
	}
	return serr
}

// tcpExchange makes a connection between ports server and client of
// address addr.
func tcpExchange(network, addr string, server, client int) error {
	l, err := net.Listen(network, net.JoinHostPort(addr, strconv.Itoa(server)))
	if err != nil {
		return err
	}
	defer l.Close()
	served := make(chan error, 1)
	go func() {
		served <- serve(l)
	}()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr), Port: client}}
	c, err := d.Dial(network, l.Addr().String())
	if err != nil {
		return err
	}
	for _, n := range tcpSizes {
		if _, err := c.Write(make([]byte, n)); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, make([]byte, 2*n)); err != nil {
			return err
		}
	}
	if err := c.Close(); err != nil {
		return err
	}
	return <-served
}

// serve accepts a connection on l and answers each request of the
// client's with twice its bytes, until the client closes.
func serve(l net.Listener) error {
	c, err := l.Accept()
	if err != nil {
		return err
	}
	defer c.Close()
	for _, n := range tcpSizes {
		if _, err := io.ReadFull(c, make([]byte, n)); err != nil {
			return err
		}
		if _, err := c.Write(make([]byte, 2*n)); err != nil {
			return err
		}
	}
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		return fmt.Errorf("read after the last request: %d bytes, %v; want EOF", n, err)
	}
	return nil
}

func udpExchange(network, addr string, sizes []int) error {
	r, err := net.ListenUDP(network, &net.UDPAddr{IP: net.ParseIP(addr), Port: portUDPRecv})
	if err != nil {
		return err
	}
	defer r.Close()
	s, err := net.DialUDP(network, &net.UDPAddr{IP: net.ParseIP(addr), Port: portUDPSend}, r.LocalAddr().(*net.UDPAddr))
	if err != nil {
		return err
	}
	defer s.Close()
	if network == "udp4" {
		if err := mayFragment(s); err != nil {
			return err
		}
	}
	buf := make([]byte, 4096)
	for _, n := range sizes {
		if _, err := s.Write(make([]byte, n)); err != nil {
			return err
		}
		if got, err := r.Read(buf); err != nil || got != n {
			return fmt.Errorf("received %d bytes, %v; want %d", got, err, n)
		}
	}
	return nil
}

// ping sends an ICMP echo request (type req) of size bytes of data to
// addr over a raw socket of network, and waits for the reply (type
// rep). The IPv4 request may be fragmented (DF clear), as FreeBSD's
// ping sends it; the kernel sums ICMPv6's checksum itself.
func ping(network, addr string, req, rep byte, size int) error {
	c, err := net.ListenPacket(network, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if req == 8 {
		if err := mayFragment(c.(*net.IPConn)); err != nil {
			return err
		}
	}
	msg := make([]byte, 8+size)
	msg[0] = req
	msg[5] = 1 // the identifier's low byte; sequence 0
	if req == 8 {
		sum := 0
		for i := 0; i < len(msg); i += 2 {
			sum += int(msg[i])<<8 | int(msg[i+1])
		}
		sum = sum>>16 + sum&0xffff
		sum = ^(sum + sum>>16) & 0xffff
		msg[2], msg[3] = byte(sum>>8), byte(sum)
	}
	if _, err := c.WriteTo(msg, &net.IPAddr{IP: net.ParseIP(addr)}); err != nil {
		return err
	}
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	buf := make([]byte, 1500)
	for {
		n, _, err := c.ReadFrom(buf)
		if err != nil {
			return fmt.Errorf("no echo reply from %s: %w", addr, err)
		}
		// An IPv4 raw socket reads the IP header too.
		if b := buf[:n]; req == 8 && len(b) > 20 && b[20] == rep || req != 8 && len(b) > 0 && b[0] == rep {
			return nil
		}
	}
}

// waitTCPDone waits until the namespace's only TCP sockets are in
// TIME_WAIT (state 06 in /proc/net/tcp and tcp6), for at most ten
// seconds.
func waitTCPDone() error {
	for range 1000 {
		done := true
		for _, file := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
			data, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			for _, line := range strings.Split(string(data), "\n")[1:] {
				if f := strings.Fields(line); len(f) > 3 && f[3] != "06" {
					done = false
				}
			}
		}
		if done {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errors.New("TCP sockets still open")
}

// runNetWorkload runs kdtrace with args, a program whose BEGIN prints
// "go", and the workload in a network namespace of its own once the
// tracing is active; it stops kdtrace once the workload is done, checks
// that kdtrace released its programs, and returns what kdtrace printed
// after "go", and the workload's PID.
func runNetWorkload(t *testing.T, args []string) (string, int) {
	t.Helper()
	needTracing(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skipf("no unshare(1) to make a network namespace: %v", err)
	}
	if _, err := os.Stat("/proc/sys/net/ipv6"); err != nil {
		t.Skipf("IPv6 is off: %v", err)
	}
	cmd := exec.Command("unshare", "-n", os.Args[0], "-test.run=^TestNetWorkload$")
	cmd.Env = append(os.Environ(), "KDTRACE_NET_WORKLOAD=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the workload in a network namespace of its own: %q, %v; %s", line, err, stderr.String())
	}
	var werr error
	before := loadedPrograms(t)
	got, errs, st := runActive(t, args, func() {
		io.WriteString(stdin, "go\n")
		rest, _ := io.ReadAll(out)
		if werr = cmd.Wait(); werr != nil {
			werr = fmt.Errorf("%v: %s%s", werr, rest, stderr.String())
		}
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	})
	if werr != nil {
		t.Fatalf("workload: %v", werr)
	}
	if st != 0 || !strings.HasPrefix(got, "go\n") {
		t.Fatalf("kdtrace: status %d, stdout %q, stderr %q", st, got, errs)
	}
	checkReleased(t, before)
	return strings.TrimPrefix(got, "go\n"), cmd.Process.Pid
}

// netProgs are the D programs of TestNetProviders: they count the
// probes of the workload's packets and connections, by their arguments
// as the translators give them, and print the counts as "key count"
// lines. Two programs, the tcp provider's and the others', each load
// in a fraction of the time one would: the probes at one tracepoint
// share a program, which the kernel's verifier checks whole.
var netProgs = []string{netTCPProg, netConnProg, netIPProg}

// netTCPProg counts the tcp provider's segments and changes of state.
const netTCPProg = `
BEGIN { printf("go\n"); }

inline int S = 47707;
inline int C = 47708;
inline int X = 47709;
inline int R = 47712;
inline int S6 = 47717;
inline int C6 = 47718;

/* A TCP segment's payload and the flags that make it count: SYN, FIN, RST. */
tcp:::send, tcp:::receive
/(args[4]->tcp_sport == S || args[4]->tcp_sport == C || args[4]->tcp_sport == X || args[4]->tcp_sport == R ||
  args[4]->tcp_sport == S6 || args[4]->tcp_sport == C6) &&
 (args[2]->ip_plength > args[4]->tcp_offset || (args[4]->tcp_flags & (TH_SYN | TH_FIN | TH_RST)) != 0)/
{
	@n[probename, args[2]->ip_saddr, args[2]->ip_daddr, args[4]->tcp_sport, args[4]->tcp_dport,
	    args[3]->tcps_lport, args[3]->tcps_rport, args[3]->tcps_laddr, args[3]->tcps_raddr,
	    args[4]->tcp_flags & (TH_SYN | TH_FIN | TH_RST), args[2]->ip_plength - args[4]->tcp_offset] = count();
}

tcp:::state-change
/args[3]->tcps_lport == S || args[3]->tcps_lport == C || args[3]->tcps_lport == R ||
 args[3]->tcps_lport == S6 || args[3]->tcps_lport == C6/
{
	@s[args[3]->tcps_lport, args[3]->tcps_rport, args[3]->tcps_laddr, args[3]->tcps_raddr, args[3]->tcps_local,
	    tcp_state_string[args[5]->tcps_state], tcp_state_string[args[3]->tcps_state]] = count();
}

END
{
	printa("tcp %s %s>%s %d>%d l=%d r=%d %s %s %x %d: %@d\n", @n);
	printa("state %d %d %s %s %d %s>%s: %@d\n", @s);
}
`

// netConnProg counts the tcp provider's connection events.
const netConnProg = `
BEGIN { printf("go\n"); }

inline int S = 47707;
inline int C = 47708;
inline int X = 47709;
inline int R = 47712;
inline int S6 = 47717;
inline int C6 = 47718;

tcp:::connect-request, tcp:::connect-established, tcp:::accept-established,
tcp:::connect-refused, tcp:::accept-refused
/args[4]->tcp_sport == S || args[4]->tcp_sport == C || args[4]->tcp_sport == X || args[4]->tcp_sport == R ||
 args[4]->tcp_sport == S6 || args[4]->tcp_sport == C6/
{
	@n[probename, args[2]->ip_saddr, args[2]->ip_daddr, args[4]->tcp_sport, args[4]->tcp_dport,
	    args[3]->tcps_lport, args[3]->tcps_rport, args[3]->tcps_laddr, args[3]->tcps_raddr,
	    args[3]->tcps_state, 0] = count();
}

END
{
	printa("tcp %s %s>%s %d>%d l=%d r=%d %s %s %x %d: %@d\n", @n);
}
`

// netIPProg counts the udp and ip providers' probes.
const netIPProg = `
BEGIN { printf("go\n"); }

inline int US = 47711;

udp:::send, udp:::receive
/args[4]->udp_sport == US/
{
	@u[probename, args[2]->ip_ver, args[2]->ip_saddr, args[2]->ip_daddr, args[3]->udps_lport, args[3]->udps_rport,
	    args[3]->udps_laddr, args[3]->udps_raddr, args[4]->udp_dport, args[4]->udp_length, args[1]->cs_addr != 0] = count();
}

/* IP packets of UDP: their ports follow the header. */
ip:::send, ip:::receive
/args[4]->ipv4_protocol == IPPROTO_UDP &&
 ntohs(*(uint16_t *)((uintptr_t)args[4]->ipv4_hdr + args[4]->ipv4_ihl)) == US/
{
	@i[probename, args[3]->if_name, args[3]->if_local, args[2]->ip_ver, args[2]->ip_saddr, args[2]->ip_daddr,
	    args[2]->ip_plength, args[4]->ipv4_saddr, args[4]->ipv4_protostr, args[5]->ipv6_saddr] = count();
}

ip:::send, ip:::receive
/args[5]->ipv6_nexthdr == IPPROTO_UDP && ntohs(*(uint16_t *)((uintptr_t)args[5]->ipv6_hdr + 40)) == US/
{
	@i[probename, args[3]->if_name, args[3]->if_local, args[2]->ip_ver, args[2]->ip_saddr, args[2]->ip_daddr,
	    args[2]->ip_plength, args[4]->ipv4_saddr, args[5]->ipv6_nextstr,
	    strjoin(args[5]->ipv6_saddr, xlate <ipinfo_t *> ((struct ipv6hdr *)arg5)->ip_daddr)] = count();
}

/* The fragments of the workload's large datagram, by their lengths. */
ip:::send, ip:::receive
/args[4]->ipv4_protocol == IPPROTO_UDP && (args[4]->ipv4_flags != 0 || args[4]->ipv4_offset != 0) &&
 (args[4]->ipv4_length == 1500 || args[4]->ipv4_length == 68)/
{
	@f[probename, args[4]->ipv4_offset, args[4]->ipv4_flags, args[4]->ipv4_length, args[4]->ipv4_ihl] = count();
}

END
{
	printa("udp %s v%d %s>%s l=%d r=%d %s %s %d %d %d: %@d\n", @u);
	printa("ip %s %s %d v%d %s>%s %d %s %s %s: %@d\n", @i);
	printa("fragment %s %d %d %d %d: %@d\n", @f);
}
`

// TestNetProviders traces a known exchange over the loopback interface
// of a network namespace of its own through the tcp, udp and ip
// providers, and checks the probes' counts and the arguments'
// translations.
func TestNetProviders(t *testing.T) {
	var out string
	for _, prog := range netProgs {
		o, _ := runNetWorkload(t, []string{"-q", "-n", prog})
		out += o
	}
	got := sortedLines(out)
	const lo, xx, rr = "127.0.0.1", "47709", "47712"
	var want []string
	// A segment sent from sport to dport of addr: tcp:::send at the
	// sender, tcp:::receive at the receiver, whose local port is dport.
	both := func(addr, sport, dport string, flags, size int) []string {
		seg := func(probe, lport, rport string) string {
			return fmt.Sprintf("tcp %s %s>%s %s>%s l=%s r=%s %s %s %x %d: 1", probe, addr, addr, sport, dport, lport, rport, addr, addr, flags, size)
		}
		return []string{seg("send", sport, dport), seg("receive", dport, sport)}
	}
	// A connection event, with the state after it.
	ev := func(probe, addr, sport, dport, lport, rport string, state int) string {
		return fmt.Sprintf("tcp %s %s>%s %s>%s l=%s r=%s %s %s %x 0: 1", probe, addr, addr, sport, dport, lport, rport, addr, addr, state)
	}
	// A change of state of the connection of ports lport and rport.
	sc := func(addr, lport, rport, raddr, from, to string) string {
		return fmt.Sprintf("state %s %s %s %s %d state-%s>state-%s: 1", lport, rport, addr, raddr, btoi(addr == raddr), from, to)
	}
	for _, c := range []struct{ addr, any, ss, cc string }{
		{lo, "0.0.0.0", strconv.Itoa(portServer), strconv.Itoa(portClient)},
		{"::1", "::", strconv.Itoa(portServer6), strconv.Itoa(portClient6)},
	} {
		a, ss, cc := c.addr, c.ss, c.cc
		want = append(want, both(a, cc, ss, 0x2, 0)...) // SYN
		want = append(want, both(a, ss, cc, 0x2, 0)...) // SYN-ACK
		for _, n := range tcpSizes {
			want = append(want, both(a, cc, ss, 0, n)...)
			want = append(want, both(a, ss, cc, 0, 2*n)...)
		}
		want = append(want, both(a, cc, ss, 0x1, 0)...) // FIN
		want = append(want, both(a, ss, cc, 0x1, 0)...) // FIN
		want = append(want,
			ev("connect-request", a, cc, ss, cc, ss, 2),
			ev("connect-established", a, ss, cc, cc, ss, 1), // the SYN-ACK received
			ev("accept-established", a, cc, ss, ss, cc, 1),  // the ACK received
			sc(a, ss, "0", c.any, "closed", "listen"),
			sc(a, ss, "0", c.any, "listen", "closed"),
			sc(a, cc, ss, a, "closed", "syn-sent"),
			sc(a, cc, ss, a, "syn-sent", "established"),
			sc(a, ss, cc, a, "listen", "syn-received"),
			sc(a, ss, cc, a, "syn-received", "established"),
			sc(a, cc, ss, a, "established", "fin-wait-1"),
			sc(a, ss, cc, a, "established", "close-wait"),
			sc(a, ss, cc, a, "close-wait", "last-ack"),
			sc(a, cc, ss, a, "fin-wait-1", "fin-wait-2"),
			sc(a, cc, ss, a, "fin-wait-2", "time-wait"),
			sc(a, ss, cc, a, "last-ack", "closed"))
	}
	want = append(want, both(lo, rr, xx, 0x2, 0)...) // refused SYN
	want = append(want, both(lo, xx, rr, 0x4, 0)...) // RST
	want = append(want,
		ev("connect-request", lo, rr, xx, rr, xx, 2),
		ev("accept-refused", lo, rr, xx, xx, rr, 7),  // the refused SYN
		ev("connect-refused", lo, xx, rr, rr, xx, 7), // the RST received
		sc(lo, rr, xx, lo, "closed", "syn-sent"),
		sc(lo, rr, xx, lo, "syn-sent", "closed"))
	// UDP: a sender's datagram has its socket, a received one none yet.
	for _, d := range []struct {
		ver  int
		addr string
		size int
	}{{4, lo, udpSizes[0]}, {4, lo, udpSizes[1]}, {4, lo, udpSizes[2]}, {6, "::1", udp6Size}} {
		// The UDP length; the IP payload's, the first fragment's.
		a, l, pl := d.addr, 8+d.size, min(8+d.size, loMTU-20)
		want = append(want,
			fmt.Sprintf("udp send v%d %s>%s l=47711 r=47710 %s %s 47710 %d 1: 1", d.ver, a, a, a, a, l),
			fmt.Sprintf("udp receive v%d %s>%s l=47710 r=47711 %s %s 47710 %d 0: 1", d.ver, a, a, a, a, l))
		// For IPv6, ipv6info_t's source address and ipinfo_t's
		// destination, translated from the IPv6 header.
		v4, next, v6 := a, "UDP", "<null>"
		if d.ver == 6 {
			v4, v6 = "<null>", a+a
		}
		for _, p := range []string{"send", "receive"} {
			want = append(want, fmt.Sprintf("ip %s lo 1 v%d %s>%s %d %s %s %s: 1", p, d.ver, a, a, pl, v4, next, v6))
		}
	}
	// The large datagram's fragments: offsets in bytes, flags 1 (more
	// fragments) but for the last; the UDP probes fire for the first.
	for _, p := range []string{"send", "receive"} {
		want = append(want, "fragment "+p+" 0 1 1500 20: 1", "fragment "+p+" 1480 1 1500 20: 1", "fragment "+p+" 2960 0 68 20: 1")
	}
	if diff := cmp.Diff(sortedLines(strings.Join(want, "\n")), got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sortedLines returns the lines of s that are not empty, sorted.
func sortedLines(s string) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
	}
	sort.Strings(lines)
	return lines
}

// tcpsnoop is a port of tcpsnoop's idea to the tcp provider: a line
// for each connection a process requests and for each TCP segment that
// carries data, with the process, the local and remote ends, the
// direction and the bytes. A segment received is handled where the
// interface hands it over, in no process of its own: its PID is "-".
// $1 and $2 are the ports of the connections to show.
const tcpsnoop = `
#pragma D option quiet
#pragma D option switchrate=100hz

inline int P1 = $1;
inline int P2 = $2;

dtrace:::BEGIN
{
	printf("go\n");
	printf("%6s %-15s %5s %2s %-15s %5s %5s\n", "PID", "LADDR", "LPORT", "DR", "RADDR", "RPORT", "SIZE");
}

tcp:::connect-request
/args[3]->tcps_lport == P1 || args[3]->tcps_lport == P2/
{
	printf("%6d %-15s %5d %2s %-15s %5d %5s\n", pid, args[3]->tcps_laddr, args[3]->tcps_lport, "->",
	    args[3]->tcps_raddr, args[3]->tcps_rport, "SYN");
}

tcp:::send
/(args[3]->tcps_lport == P1 || args[3]->tcps_lport == P2) && args[2]->ip_plength > args[4]->tcp_offset/
{
	printf("%6d %-15s %5d %2s %-15s %5d %5d\n", pid, args[3]->tcps_laddr, args[3]->tcps_lport, "->",
	    args[3]->tcps_raddr, args[3]->tcps_rport, args[2]->ip_plength - args[4]->tcp_offset);
}

tcp:::receive
/(args[3]->tcps_lport == P1 || args[3]->tcps_lport == P2) && args[2]->ip_plength > args[4]->tcp_offset/
{
	printf("%6s %-15s %5d %2s %-15s %5d %5d\n", "-", args[3]->tcps_laddr, args[3]->tcps_lport, "<-",
	    args[3]->tcps_raddr, args[3]->tcps_rport, args[2]->ip_plength - args[4]->tcp_offset);
}
`

// TestNetTcpsnoop runs tcpsnoop over the workload's connection. Its
// lines come from every CPU's buffer, in no order between them: the
// test compares the header, then the lines sorted.
func TestNetTcpsnoop(t *testing.T) {
	out, pid := runNetWorkload(t, []string{"-n", tcpsnoop, strconv.Itoa(portServer), strconv.Itoa(portClient)})
	header, body, _ := strings.Cut(out, "\n")
	if want := "   PID LADDR           LPORT DR RADDR           RPORT  SIZE"; header != want {
		t.Errorf("header %q, want %q", header, want)
	}
	line := func(pid, lport, dr, rport, size string) string {
		return fmt.Sprintf("%6s %-15s %5s %2s %-15s %5s %5s", pid, "127.0.0.1", lport, dr, "127.0.0.1", rport, size)
	}
	p, s, c := strconv.Itoa(pid), strconv.Itoa(portServer), strconv.Itoa(portClient)
	want := []string{line(p, c, "->", s, "SYN")}
	for _, n := range tcpSizes {
		req, ans := strconv.Itoa(n), strconv.Itoa(2*n)
		want = append(want, line(p, c, "->", s, req), line("-", s, "<-", c, req),
			line(p, s, "->", c, ans), line("-", c, "<-", s, ans))
	}
	var got []string
	for _, l := range strings.Split(body, "\n") {
		if l != "" {
			got = append(got, l)
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tcpsnoop's lines (-want +got):\n%s", diff)
	}
}

// TestNetCorpus runs the ip provider tests of DTrace's suite that use
// the loopback interface over the workload's exchange, as their
// scripts do dtrace -qs over one of their own, and compares the output
// with theirs. The scripts count events from and to 127.0.0.1 against
// a minimum: "$local" is 127.0.0.1, "$tcpport" the workload's server.
func TestNetCorpus(t *testing.T) {
	dir := filepath.Join(dtracetest.Dir(t), "ip")
	for _, name := range []string{"tst.ipv4localtcp.ksh", "tst.ipv4localudp.ksh", "tst.localtcpstate.ksh",
		"tst.ipv4localicmp.ksh", "tst.ipv6localicmp.ksh"} {
		t.Run(name, func(t *testing.T) {
			ksh, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(dir, name+".out"))
			if err != nil {
				t.Fatal(err)
			}
			prog, err := hereDoc(string(ksh), "-qs /dev/stdin <<")
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			local := "127.0.0.1"
			if strings.Contains(name, "ipv6") {
				local = "::1"
			}
			prog = strings.NewReplacer("$local", local, "$tcpport", strconv.Itoa(portServer)).Replace(prog)
			got, _ := runNetWorkload(t, []string{"-q", "-n", `BEGIN { printf("go\n"); }` + prog})
			if strings.Contains(name, "icmp") {
				// The script's output, sorted, is printed after
				// ping's, which the expected output has too.
				got = strings.Join(sortedLines(got), "\n")
				want = []byte(strings.Join(slices.DeleteFunc(sortedLines(string(want)), func(l string) bool {
					return !strings.Contains(l, " ip:::")
				}), "\n"))
			}
			if diff := cmp.Diff(strings.TrimSpace(string(want)), strings.TrimSpace(got)); diff != "" {
				t.Errorf("%s: output (-want +got):\n%s", name, diff)
			}
		})
	}
}

// hereDoc returns the here-document of the shell command in script
// that has cmd, its word following: the lines after the command's (a
// command continued with \ goes on), up to the line of the word.
func hereDoc(script, cmd string) (string, error) {
	_, rest, ok := strings.Cut(script, cmd)
	if !ok {
		return "", fmt.Errorf("no command %q", cmd)
	}
	word, rest, _ := strings.Cut(rest, "\n")
	word, cont, _ := strings.Cut(word, " ")
	for strings.HasSuffix(strings.TrimSpace(cont), "\\") {
		cont, rest, _ = strings.Cut(rest, "\n")
	}
	doc, _, ok := strings.Cut(rest, "\n"+word+"\n")
	if !ok {
		return "", fmt.Errorf("the here-document of %q does not end with %s", cmd, word)
	}
	return doc, nil
}
