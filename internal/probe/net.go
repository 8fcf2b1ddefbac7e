package probe

// The network providers, ip, tcp and udp, with the argument types of
// illumos's and Oracle's DTrace (pktinfo_t, csinfo_t, ipinfo_t, ifinfo_t,
// ipv4info_t, ipv6info_t, tcpsinfo_t, tcpinfo_t, tcplsinfo_t, udpsinfo_t,
// udpinfo_t), which the D library's ip.d, tcp.d and udp.d translate.
//
// They are made of three kinds of tracepoint:
//
//   - net:net_dev_queue, where a packet is queued to its interface, for
//     what is sent: the IP layer has set the packet's network header;
//   - net:netif_receive_skb, where an interface hands a packet to the
//     protocols, for what is received: the packet's data starts at its
//     IP header (the link header is pulled), and no socket is known
//     yet, so a receive probe's csinfo_t is NULL;
//   - sock:inet_sock_set_state, tcp:tcp_receive_reset and
//     tcp:tcp_send_reset, for TCP's connection events, which have the
//     socket but no packet: their ipinfo_t and tcpinfo_t come from the
//     socket, as the segment it received (the remote end is the source).
//
// A packet site finds the IP header (the site knows where it is) and
// passes it as args[2], a struct iphdr * for IPv6 too: ipinfo_t's
// translator tells the versions apart by the header's first four bits,
// as Oracle's void_ip_t does. The transport header, args[4], is found
// after an IPv4 header of any length or an IPv6 header without
// extension headers: IPv6 fragments and IPv4 fragments after the first
// are not seen by tcp and udp. tcp and udp's send probes fire for the
// packets this host sends, which have a socket, not those it forwards.
//
// The send probes fire in the thread that sends; the receive probes in
// the kernel's receive processing, whichever thread it interrupts.

// Kernel constants the net specs test (uapi/linux/if_ether.h, in.h,
// net/tcp_states.h): #defines and enumerators BTF does not carry into
// expressions.
const (
	ethPIP   = "0x0800" // ETH_P_IP
	ethPIPv6 = "0x86dd" // ETH_P_IPV6
	protoTCP = "6"      // IPPROTO_TCP
	protoUDP = "17"     // IPPROTO_UDP

	// TCP states: Linux numbers them as illumos's TCPS_* translate to
	// Oracle's TCP_STATE_* (tcp.d), 1 to 11, and adds
	// TCP_NEW_SYN_RECV, a request socket.
	tcpEstablished = "1"
	tcpSynSent     = "2"
	tcpSynRecv     = "3"
	tcpFinWait2    = "5"
	tcpTimeWait    = "6"
	tcpClose       = "7"
	tcpListen      = "10"
	tcpClosing     = "11"
	tcpNewSynRecv  = "12"

	// thSYN and thACK are the TCP header's flags (byte 13).
	thSYN = "0x02"
	thACK = "0x10"
)

// A netSite builds the D expressions of a packet site: its packet, where
// the packet's IP header is, and what follows from those.
type netSite struct {
	skb string // the packet, a struct sk_buff *
	nh  string // the address of its IP header, an integer
}

// sendSite is a packet at net_dev_queue, its network header set;
// recvSite one at netif_receive_skb, its data at the IP header;
// resetSite the segment tcp_send_reset answers, after IP's processing.
var (
	sendSite  = netSite{"((struct sk_buff *)arg0)", "((uintptr_t)((struct sk_buff *)arg0)->head + ((struct sk_buff *)arg0)->network_header)"}
	recvSite  = netSite{"((struct sk_buff *)arg0)", "((uintptr_t)((struct sk_buff *)arg0)->data)"}
	resetSite = netSite{"((struct sk_buff *)arg1)", "((uintptr_t)((struct sk_buff *)arg1)->head + ((struct sk_buff *)arg1)->network_header)"}
)

func (n netSite) v4() string { return "ntohs(" + n.skb + "->protocol) == " + ethPIP }
func (n netSite) v6() string { return "ntohs(" + n.skb + "->protocol) == " + ethPIPv6 }

// ip is true for an IPv4 or IPv6 packet.
func (n netSite) ip() string { return "(" + n.v4() + " || " + n.v6() + ")" }

// first is true unless the packet is an IPv4 fragment after the first.
func (n netSite) first() string {
	return "(!(" + n.v4() + ") || (ntohs(((struct iphdr *)" + n.nh + ")->frag_off) & 0x1fff) == 0)"
}

// proto is the packet's transport protocol.
func (n netSite) proto() string {
	return "(" + n.v4() + " ? ((struct iphdr *)" + n.nh + ")->protocol : ((struct ipv6hdr *)" + n.nh + ")->nexthdr)"
}

// carries is true for the first packet of a datagram of protocol p.
func (n netSite) carries(p string) string {
	return n.ip() + " && " + n.first() + " && " + n.proto() + " == " + p
}

// th is the address of the transport header: after the IPv4 header's
// IHL words, or the 40 bytes of an IPv6 header.
func (n netSite) th() string {
	return "(" + n.nh + " + (" + n.v4() + " ? (*(uint8_t *)" + n.nh + " & 0xf) << 2 : 40))"
}

// flags is the TCP header's flags byte.
func (n netSite) flags() string { return "*(uint8_t *)(" + n.th() + " + 13)" }

// hdr is the IP header as ipinfo_t takes it, a struct iphdr * of
// either version (the version is where both have it).
func (n netSite) hdr() string { return "(struct iphdr *)" + n.nh }

func (n netSite) iph() string {
	return "(" + n.v4() + " ? (struct iphdr *)" + n.nh + " : NULL)"
}

func (n netSite) ip6h() string {
	return "(" + n.v6() + " ? (struct ipv6hdr *)" + n.nh + " : NULL)"
}

// sk is the packet's socket: a connection's, a request socket (for a
// SYN-ACK), a time-wait socket, or the kernel's own that sends resets
// and time-wait ACKs.
func (n netSite) sk() string { return n.skb + "->sk" }

// state is the TCP state of the packet's socket: SYN_RECEIVED for a
// request socket.
func (n netSite) state() string {
	st := n.sk() + "->__sk_common.skc_state"
	return "(" + st + " == " + tcpNewSynRecv + " ? " + tcpSynRecv + " : (int)" + st + ")"
}

// The argument types of the probes.
var (
	argPkt   = sdtArg{"struct sk_buff *", "pktinfo_t *"}
	argCS    = sdtArg{"struct sock *", "csinfo_t *"}
	argIP    = sdtArg{"struct iphdr *", "ipinfo_t *"}
	argSockI = sdtArg{"struct sock *", "ipinfo_t *"}
	argIf    = sdtArg{"struct net_device *", "ifinfo_t *"}
	argIPv4  = sdtArg{"struct iphdr *", "ipv4info_t *"}
	argIPv6  = sdtArg{"struct ipv6hdr *", "ipv6info_t *"}
	argTCPS  = sdtArg{"struct sock *", "tcpsinfo_t *"}
	argTCP   = sdtArg{"struct tcphdr *", "tcpinfo_t *"}
	argSockT = sdtArg{"struct sock *", "tcpinfo_t *"}
	argTCPLS = sdtArg{"int", "tcplsinfo_t *"}
	argUDPS  = sdtArg{"struct sock *", "udpsinfo_t *"}
	argUDP   = sdtArg{"struct udphdr *", "udpinfo_t *"}
)

// ipSpecs are the ip provider's probes, illumos's send and receive, for
// IPv4 and IPv6 packets.
var ipSpecs = []sdtSpec{{
	name:  "send",
	args:  []sdtArg{argPkt, argCS, argIP, argIf, argIPv4, argIPv6},
	sites: []SDTSite{ipSite("net_dev_queue", sendSite)},
}, {
	name:  "receive",
	args:  []sdtArg{argPkt, argCS, argIP, argIf, argIPv4, argIPv6},
	sites: []SDTSite{ipSite("netif_receive_skb", recvSite)},
}}

func ipSite(event string, n netSite) SDTSite {
	return SDTSite{System: "net", Event: event, Cond: n.ip(),
		Args: []string{n.skb, n.sk(), n.hdr(), n.skb + "->dev", n.iph(), n.ip6h()}}
}

// tcpArgs are the tcp probes' arguments: illumos's five, args[5] the
// state before the event (tcplsinfo_t, which illumos gives state-change
// only), and args[6] the state after it, which tcpsinfo_t's tcps_state
// reads (at the socket's own events the kernel has not yet stored it).
var (
	tcpArgs     = []sdtArg{argPkt, argCS, argIP, argTCPS, argTCP, argTCPLS, argInt}
	tcpSockArgs = []sdtArg{argPkt, argCS, argSockI, argTCPS, argSockT, argTCPLS, argInt}
)

// tcpPacket is a tcp probe at a packet site, its socket sk, when true.
func tcpPacket(event string, n netSite, cond, sk, state string) SDTSite {
	c := n.carries(protoTCP)
	if cond != "" {
		c += " && " + cond
	}
	return SDTSite{System: "net", Event: event, Cond: c,
		Args: []string{n.skb, sk, n.hdr(), sk, "(struct tcphdr *)" + n.th(), state, state}}
}

// sent is true at net_dev_queue for a packet this host sends, which has
// a socket, not one it forwards; sentSYN for a SYN it sends.
var (
	sent    = sendSite.sk() + " != NULL"
	sentSYN = sent + " && (" + sendSite.flags() + " & (" + thSYN + " | " + thACK + ")) == " + thSYN
)

// isTCP is true at inet_sock_set_state for a TCP socket.
const isTCP = "((struct sock *)arg0)->sk_protocol == " + protoTCP

// tcpState is a tcp probe at inet_sock_set_state, when it changes the
// state from old to new.
func tcpState(old, new string) SDTSite {
	return SDTSite{System: "sock", Event: "inet_sock_set_state",
		Cond: isTCP + " && arg1 == " + old + " && arg2 == " + new,
		Args: []string{"NULL", "(struct sock *)arg0", "(struct sock *)arg0", "(struct sock *)arg0", "(struct sock *)arg0", "(int)arg1", "(int)arg2"}}
}

// toTimeWait is true at inet_sock_set_state when the socket closes to
// go to TIME_WAIT: tcp_time_wait() hands the connection to a time-wait
// socket and closes this one, from FIN_WAIT_2 or CLOSING, with no error
// (a reset sets sk_err first).
const toTimeWait = "(arg1 == " + tcpFinWait2 + " || arg1 == " + tcpClosing + ") && arg2 == " + tcpClose +
	" && ((struct sock *)arg0)->sk_err == 0"

// tcpSpecs are the tcp provider's probes, illumos's.
var tcpSpecs = []sdtSpec{{
	// The final ACK of a passive open makes the connection.
	name:  "accept-established",
	args:  tcpSockArgs,
	sites: []SDTSite{tcpState(tcpSynRecv, tcpEstablished)},
}, {
	// A SYN to a port nobody listens on is answered by a reset: the
	// arguments are the SYN's, without a socket.
	name: "accept-refused",
	args: tcpArgs,
	sites: []SDTSite{{System: "tcp", Event: "tcp_send_reset",
		Cond: "arg0 == 0 && arg1 != 0 && (" + resetSite.flags() + " & (" + thSYN + " | " + thACK + ")) == " + thSYN,
		Args: []string{resetSite.skb, "NULL", resetSite.hdr(), "NULL", "(struct tcphdr *)" + resetSite.th(), tcpListen, tcpClose}}},
}, {
	// The SYN-ACK of an active open makes the connection.
	name:  "connect-established",
	args:  tcpSockArgs,
	sites: []SDTSite{tcpState(tcpSynSent, tcpEstablished)},
}, {
	// A reset answers the SYN.
	name: "connect-refused",
	args: tcpSockArgs,
	sites: []SDTSite{{System: "tcp", Event: "tcp_receive_reset",
		Cond: "((struct sock *)arg0)->__sk_common.skc_state == " + tcpSynSent,
		Args: []string{"NULL", "(struct sock *)arg0", "(struct sock *)arg0", "(struct sock *)arg0", "(struct sock *)arg0", tcpSynSent, tcpClose}}},
}, {
	// A SYN is sent, retransmissions too.
	name:  "connect-request",
	args:  tcpArgs,
	sites: []SDTSite{tcpPacket("net_dev_queue", sendSite, sentSYN, sendSite.sk(), sendSite.state())},
}, {
	// The socket is not known yet: args[1] and args[3]'s socket are
	// NULL, and tcpsinfo_t comes from the segment, state 0.
	name:  "receive",
	args:  tcpArgs,
	sites: []SDTSite{tcpPacket("netif_receive_skb", recvSite, "", "NULL", "0")},
}, {
	name:  "send",
	args:  tcpArgs,
	sites: []SDTSite{tcpPacket("net_dev_queue", sendSite, sent, sendSite.sk(), sendSite.state())},
}, {
	// args[0], args[2] and args[4] are NULL, as in illumos. A
	// connection going to TIME_WAIT closes its socket, a time-wait
	// socket taking its place: that close is the change to TIME_WAIT,
	// and the time-wait socket's end is not seen.
	name: "state-change",
	args: tcpArgs,
	sites: []SDTSite{{System: "sock", Event: "inet_sock_set_state", Cond: isTCP,
		Args: []string{"NULL", "(struct sock *)arg0", "NULL", "(struct sock *)arg0", "NULL", "(int)arg1",
			toTimeWait + " ? " + tcpTimeWait + " : (int)arg2"}}},
}}

// udpSpecs are the udp provider's probes, illumos's send and receive.
var udpSpecs = []sdtSpec{{
	name:  "send",
	args:  []sdtArg{argPkt, argCS, argIP, argUDPS, argUDP},
	sites: []SDTSite{udpSite("net_dev_queue", sendSite, sent, sendSite.sk())},
}, {
	name:  "receive",
	args:  []sdtArg{argPkt, argCS, argIP, argUDPS, argUDP},
	sites: []SDTSite{udpSite("netif_receive_skb", recvSite, "", "NULL")},
}}

// udpSite is a udp probe at a packet site, its socket sk, when cond
// ("": always) holds.
func udpSite(event string, n netSite, cond, sk string) SDTSite {
	c := n.carries(protoUDP)
	if cond != "" {
		c += " && " + cond
	}
	return SDTSite{System: "net", Event: event, Cond: c,
		Args: []string{n.skb, sk, n.hdr(), sk, "(struct udphdr *)" + n.th()}}
}
