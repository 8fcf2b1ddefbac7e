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

// The D expressions of the packet sites, spelt out as constants so
// that the specs are constant data, made at no cost at start-up. A site
// has its packet, Skb, a struct sk_buff *, and NH, the address of the
// packet's IP header, an integer; from those, each site's constants
// are the same expressions:
//
//   - V4 and V6 are true for an IPv4 and an IPv6 packet, IP for either;
//   - First is true unless the packet is an IPv4 fragment after the
//     first;
//   - Proto is the packet's transport protocol, and TCP and UDP are true
//     for the first packet of a datagram of that protocol;
//   - TH is the address of the transport header: after the IPv4
//     header's IHL words, or the 40 bytes of an IPv6 header;
//   - Flags is the TCP header's flags byte;
//   - Hdr is the IP header as ipinfo_t takes it, a struct iphdr * of
//     either version (the version is where both have it), and IPH and
//     IP6H the header of its version, else NULL;
//   - SK is the packet's socket: a connection's, a request socket (for
//     a SYN-ACK), a time-wait socket, or the kernel's own that sends
//     resets and time-wait ACKs; State is its TCP state,
//     SYN_RECEIVED for a request socket.
//
// send is a packet at net_dev_queue, its network header set.
const (
	sendSkb   = "((struct sk_buff *)arg0)"
	sendNH    = "((uintptr_t)" + sendSkb + "->head + " + sendSkb + "->network_header)"
	sendV4    = "ntohs(" + sendSkb + "->protocol) == " + ethPIP
	sendV6    = "ntohs(" + sendSkb + "->protocol) == " + ethPIPv6
	sendIP    = "(" + sendV4 + " || " + sendV6 + ")"
	sendFirst = "(!(" + sendV4 + ") || (ntohs(((struct iphdr *)" + sendNH + ")->frag_off) & 0x1fff) == 0)"
	sendProto = "(" + sendV4 + " ? ((struct iphdr *)" + sendNH + ")->protocol : ((struct ipv6hdr *)" + sendNH + ")->nexthdr)"
	sendTCP   = sendIP + " && " + sendFirst + " && " + sendProto + " == " + protoTCP
	sendUDP   = sendIP + " && " + sendFirst + " && " + sendProto + " == " + protoUDP
	sendTH    = "(" + sendNH + " + (" + sendV4 + " ? (*(uint8_t *)" + sendNH + " & 0xf) << 2 : 40))"
	sendFlags = "*(uint8_t *)(" + sendTH + " + 13)"
	sendHdr   = "(struct iphdr *)" + sendNH
	sendIPH   = "(" + sendV4 + " ? (struct iphdr *)" + sendNH + " : NULL)"
	sendIP6H  = "(" + sendV6 + " ? (struct ipv6hdr *)" + sendNH + " : NULL)"
	sendSK    = sendSkb + "->sk"
	sendState = "(" + sendSK + "->__sk_common.skc_state == " + tcpNewSynRecv + " ? " + tcpSynRecv + " : (int)" + sendSK + "->__sk_common.skc_state)"
)

// recv is a packet at netif_receive_skb, its data at the IP header.
const (
	recvSkb   = "((struct sk_buff *)arg0)"
	recvNH    = "((uintptr_t)" + recvSkb + "->data)"
	recvV4    = "ntohs(" + recvSkb + "->protocol) == " + ethPIP
	recvV6    = "ntohs(" + recvSkb + "->protocol) == " + ethPIPv6
	recvIP    = "(" + recvV4 + " || " + recvV6 + ")"
	recvFirst = "(!(" + recvV4 + ") || (ntohs(((struct iphdr *)" + recvNH + ")->frag_off) & 0x1fff) == 0)"
	recvProto = "(" + recvV4 + " ? ((struct iphdr *)" + recvNH + ")->protocol : ((struct ipv6hdr *)" + recvNH + ")->nexthdr)"
	recvTCP   = recvIP + " && " + recvFirst + " && " + recvProto + " == " + protoTCP
	recvUDP   = recvIP + " && " + recvFirst + " && " + recvProto + " == " + protoUDP
	recvTH    = "(" + recvNH + " + (" + recvV4 + " ? (*(uint8_t *)" + recvNH + " & 0xf) << 2 : 40))"
	recvHdr   = "(struct iphdr *)" + recvNH
	recvIPH   = "(" + recvV4 + " ? (struct iphdr *)" + recvNH + " : NULL)"
	recvIP6H  = "(" + recvV6 + " ? (struct ipv6hdr *)" + recvNH + " : NULL)"
	recvSK    = recvSkb + "->sk"
)

// reset is the segment tcp_send_reset answers, after IP's processing.
const (
	resetSkb   = "((struct sk_buff *)arg1)"
	resetNH    = "((uintptr_t)" + resetSkb + "->head + " + resetSkb + "->network_header)"
	resetV4    = "ntohs(" + resetSkb + "->protocol) == " + ethPIP
	resetTH    = "(" + resetNH + " + (" + resetV4 + " ? (*(uint8_t *)" + resetNH + " & 0xf) << 2 : 40))"
	resetFlags = "*(uint8_t *)(" + resetTH + " + 13)"
	resetHdr   = "(struct iphdr *)" + resetNH
)

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
	name: "send",
	args: []sdtArg{argPkt, argCS, argIP, argIf, argIPv4, argIPv6},
	sites: []SDTSite{{System: "net", Event: "net_dev_queue", Cond: sendIP,
		Args: []string{sendSkb, sendSK, sendHdr, sendSkb + "->dev", sendIPH, sendIP6H}}},
}, {
	name: "receive",
	args: []sdtArg{argPkt, argCS, argIP, argIf, argIPv4, argIPv6},
	sites: []SDTSite{{System: "net", Event: "netif_receive_skb", Cond: recvIP,
		Args: []string{recvSkb, recvSK, recvHdr, recvSkb + "->dev", recvIPH, recvIP6H}}},
}}

// tcpArgs are the tcp probes' arguments: illumos's five, args[5] the
// state before the event (tcplsinfo_t, which illumos gives state-change
// only), and args[6] the state after it, which tcpsinfo_t's tcps_state
// reads (at the socket's own events the kernel has not yet stored it).
var (
	tcpArgs     = []sdtArg{argPkt, argCS, argIP, argTCPS, argTCP, argTCPLS, argInt}
	tcpSockArgs = []sdtArg{argPkt, argCS, argSockI, argTCPS, argSockT, argTCPLS, argInt}
)

// sent is true at net_dev_queue for a packet this host sends, which has
// a socket, not one it forwards; sentSYN for a SYN it sends.
const (
	sent    = sendSK + " != NULL"
	sentSYN = sent + " && (" + sendFlags + " & (" + thSYN + " | " + thACK + ")) == " + thSYN
)

// isTCP is true at inet_sock_set_state for a TCP socket.
const isTCP = "((struct sock *)arg0)->sk_protocol == " + protoTCP

// stateArgs are the arguments of a tcp probe at inet_sock_set_state
// that changes a connection's state, the socket's and the states'.
var stateArgs = []string{"NULL", "(struct sock *)arg0", "(struct sock *)arg0", "(struct sock *)arg0", "(struct sock *)arg0", "(int)arg1", "(int)arg2"}

// toTimeWait is true at inet_sock_set_state when the socket closes to
// go to TIME_WAIT: tcp_time_wait() hands the connection to a time-wait
// socket and closes this one, from FIN_WAIT_2 or CLOSING, with no error
// (a reset sets sk_err first).
const toTimeWait = "(arg1 == " + tcpFinWait2 + " || arg1 == " + tcpClosing + ") && arg2 == " + tcpClose +
	" && ((struct sock *)arg0)->sk_err == 0"

// tcpSpecs are the tcp provider's probes, illumos's.
var tcpSpecs = []sdtSpec{{
	// The final ACK of a passive open makes the connection.
	name: "accept-established",
	args: tcpSockArgs,
	sites: []SDTSite{{System: "sock", Event: "inet_sock_set_state",
		Cond: isTCP + " && arg1 == " + tcpSynRecv + " && arg2 == " + tcpEstablished, Args: stateArgs}},
}, {
	// A SYN to a port nobody listens on is answered by a reset: the
	// arguments are the SYN's, without a socket.
	name: "accept-refused",
	args: tcpArgs,
	sites: []SDTSite{{System: "tcp", Event: "tcp_send_reset",
		Cond: "arg0 == 0 && arg1 != 0 && (" + resetFlags + " & (" + thSYN + " | " + thACK + ")) == " + thSYN,
		Args: []string{resetSkb, "NULL", resetHdr, "NULL", "(struct tcphdr *)" + resetTH, tcpListen, tcpClose}}},
}, {
	// The SYN-ACK of an active open makes the connection.
	name: "connect-established",
	args: tcpSockArgs,
	sites: []SDTSite{{System: "sock", Event: "inet_sock_set_state",
		Cond: isTCP + " && arg1 == " + tcpSynSent + " && arg2 == " + tcpEstablished, Args: stateArgs}},
}, {
	// A reset answers the SYN.
	name: "connect-refused",
	args: tcpSockArgs,
	sites: []SDTSite{{System: "tcp", Event: "tcp_receive_reset",
		Cond: "((struct sock *)arg0)->__sk_common.skc_state == " + tcpSynSent,
		Args: []string{"NULL", "(struct sock *)arg0", "(struct sock *)arg0", "(struct sock *)arg0", "(struct sock *)arg0", tcpSynSent, tcpClose}}},
}, {
	// A SYN is sent, retransmissions too.
	name: "connect-request",
	args: tcpArgs,
	sites: []SDTSite{{System: "net", Event: "net_dev_queue", Cond: sendTCP + " && " + sentSYN,
		Args: []string{sendSkb, sendSK, sendHdr, sendSK, "(struct tcphdr *)" + sendTH, sendState, sendState}}},
}, {
	// The socket is not known yet: args[1] and args[3]'s socket are
	// NULL, and tcpsinfo_t comes from the segment, state 0.
	name: "receive",
	args: tcpArgs,
	sites: []SDTSite{{System: "net", Event: "netif_receive_skb", Cond: recvTCP,
		Args: []string{recvSkb, "NULL", recvHdr, "NULL", "(struct tcphdr *)" + recvTH, "0", "0"}}},
}, {
	name: "send",
	args: tcpArgs,
	sites: []SDTSite{{System: "net", Event: "net_dev_queue", Cond: sendTCP + " && " + sent,
		Args: []string{sendSkb, sendSK, sendHdr, sendSK, "(struct tcphdr *)" + sendTH, sendState, sendState}}},
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
	name: "send",
	args: []sdtArg{argPkt, argCS, argIP, argUDPS, argUDP},
	sites: []SDTSite{{System: "net", Event: "net_dev_queue", Cond: sendUDP + " && " + sent,
		Args: []string{sendSkb, sendSK, sendHdr, sendSK, "(struct udphdr *)" + sendTH}}},
}, {
	name: "receive",
	args: []sdtArg{argPkt, argCS, argIP, argUDPS, argUDP},
	sites: []SDTSite{{System: "net", Event: "netif_receive_skb", Cond: recvUDP,
		Args: []string{recvSkb, "NULL", recvHdr, "NULL", "(struct udphdr *)" + recvTH}}},
}}
