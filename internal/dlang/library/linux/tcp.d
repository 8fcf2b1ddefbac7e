/*
 * tcp.d: the types of the tcp provider's arguments, as illumos and
 * Oracle's DTrace for Linux define them, translated from Linux's TCP
 * headers and sockets.
 *
 * tcpsinfo_t describes a connection from its socket. At the tcp
 * provider's probes where there is none (receive, accept-refused, a
 * reset the kernel sends for no connection) its ports and addresses
 * come from the segment, args[2] and args[4]; its state is args[6], the
 * state after the event, since at a change of state the socket still
 * holds the old one.
 */

#pragma D depends_on module vmlinux
#pragma D depends_on library ip.d

/* The TCP header's flags. */
inline int TH_FIN = 0x01;
inline int TH_SYN = 0x02;
inline int TH_RST = 0x04;
inline int TH_PSH = 0x08;
inline int TH_ACK = 0x10;
inline int TH_URG = 0x20;
inline int TH_ECE = 0x40;
inline int TH_CWR = 0x80;

/* TCP states, numbered as Linux numbers them (net/tcp_states.h). */
inline int TCP_STATE_IDLE = 0;
inline int TCP_STATE_ESTABLISHED = 1;
inline int TCP_STATE_SYN_SENT = 2;
inline int TCP_STATE_SYN_RECEIVED = 3;
inline int TCP_STATE_FIN_WAIT_1 = 4;
inline int TCP_STATE_FIN_WAIT_2 = 5;
inline int TCP_STATE_TIME_WAIT = 6;
inline int TCP_STATE_CLOSED = 7;
inline int TCP_STATE_CLOSE_WAIT = 8;
inline int TCP_STATE_LAST_ACK = 9;
inline int TCP_STATE_LISTEN = 10;
inline int TCP_STATE_CLOSING = 11;

/* The name of TCP state s, as illumos's scripts print it. */
inline string tcp_state_string[int s] =
    s == TCP_STATE_CLOSED ? "state-closed" :
    s == TCP_STATE_IDLE ? "state-idle" :
    s == TCP_STATE_LISTEN ? "state-listen" :
    s == TCP_STATE_SYN_SENT ? "state-syn-sent" :
    s == TCP_STATE_SYN_RECEIVED ? "state-syn-received" :
    s == TCP_STATE_ESTABLISHED ? "state-established" :
    s == TCP_STATE_CLOSE_WAIT ? "state-close-wait" :
    s == TCP_STATE_FIN_WAIT_1 ? "state-fin-wait-1" :
    s == TCP_STATE_CLOSING ? "state-closing" :
    s == TCP_STATE_LAST_ACK ? "state-last-ack" :
    s == TCP_STATE_FIN_WAIT_2 ? "state-fin-wait-2" :
    s == TCP_STATE_TIME_WAIT ? "state-time-wait" :
    "<unknown>";

/* A TCP header. */
typedef struct tcpinfo {
	uint16_t tcp_sport;	/* source port */
	uint16_t tcp_dport;	/* destination port */
	uint32_t tcp_seq;	/* sequence number */
	uint32_t tcp_ack;	/* acknowledgment number */
	uint8_t tcp_offset;	/* data offset, bytes */
	uint8_t tcp_flags;	/* TH_* */
	uint16_t tcp_window;	/* window */
	uint16_t tcp_checksum;	/* checksum */
	uint16_t tcp_urgent;	/* urgent pointer */
	uintptr_t tcp_hdr;	/* the header */
} tcpinfo_t;

/* A TCP connection. */
typedef struct tcpsinfo {
	uintptr_t tcps_addr;	/* its socket */
	int tcps_local;		/* 1 when both ends are the same address */
	uint16_t tcps_lport;	/* local port */
	uint16_t tcps_rport;	/* remote port */
	string tcps_laddr;	/* local address */
	string tcps_raddr;	/* remote address */
	int tcps_state;		/* TCP_STATE_* */
	uint32_t tcps_iss;	/* initial sequence number sent */
	uint32_t tcps_suna;	/* oldest sequence number not acknowledged */
	uint32_t tcps_snxt;	/* next sequence number to send */
	uint32_t tcps_rnxt;	/* next sequence number expected */
	uint32_t tcps_swnd;	/* send window */
	int32_t tcps_snd_ws;	/* send window scale */
	uint32_t tcps_rwnd;	/* receive window */
	int32_t tcps_rcv_ws;	/* receive window scale */
	uint32_t tcps_cwnd;	/* congestion window, segments */
	uint32_t tcps_cwnd_ssthresh;	/* slow start threshold */
	uint32_t tcps_sack_snxt;	/* next sequence number SACK retransmits */
	uint32_t tcps_rto;	/* retransmission timeout, jiffies */
	uint32_t tcps_mss;	/* maximum segment size */
	int tcps_retransmit;	/* 1 at a send that retransmits */
	uint32_t tcps_rtt;	/* smoothed round-trip time, ms */
	uint32_t tcps_rtt_sd;	/* its mean deviation, ms */
	uint32_t tcps_irs;	/* initial sequence number received */
} tcpsinfo_t;

/* The state a connection changes from. */
typedef struct tcplsinfo {
	int tcps_state;		/* TCP_STATE_* */
} tcplsinfo_t;

translator tcpinfo_t < struct tcphdr *T > {
	tcp_sport = T == NULL ? 0 : ntohs(T->source);
	tcp_dport = T == NULL ? 0 : ntohs(T->dest);
	tcp_seq = T == NULL ? 0 : ntohl(T->seq);
	tcp_ack = T == NULL ? 0 : ntohl(T->ack_seq);
	tcp_offset = T == NULL ? 0 : (*((uint8_t *)T + 12) >> 4) << 2;
	tcp_flags = T == NULL ? 0 : *((uint8_t *)T + 13);
	tcp_window = T == NULL ? 0 : ntohs(T->window);
	tcp_checksum = T == NULL ? 0 : ntohs(T->check);
	tcp_urgent = T == NULL ? 0 : ntohs(T->urg_ptr);
	tcp_hdr = (uintptr_t)T;
};

/*
 * The ports of a segment a connection received, from its socket: the
 * remote port is the source. The tcp provider's connection events have
 * the socket and not the segment; the header's other fields are 0.
 */
translator tcpinfo_t < struct sock *S > {
	tcp_sport = S == NULL ? 0 : ntohs(S->__sk_common.skc_dport);
	tcp_dport = S == NULL ? 0 : S->__sk_common.skc_num;
	tcp_seq = 0;
	tcp_ack = 0;
	tcp_offset = 0;
	tcp_flags = 0;
	tcp_window = 0;
	tcp_checksum = 0;
	tcp_urgent = 0;
	tcp_hdr = 0;
};

/*
 * __kdt_tsk is true when socket S is a connection's, by the fields all
 * its kinds share (struct sock_common): a request socket, a time-wait
 * socket, or a stream socket; not the raw socket the kernel sends resets
 * and ACKs for no connection from. __kdt_tfull is true when S is a
 * connection's own, a struct tcp_sock.
 */
inline int __kdt_tfull[struct sock *S] = S != NULL &&
    S->__sk_common.skc_state != TCP_STATE_TIME_WAIT &&
    S->__sk_common.skc_state != 12 &&	/* TCP_NEW_SYN_RECV */
    S->sk_type == 1;			/* SOCK_STREAM */
inline int __kdt_tsk[struct sock *S] = S != NULL &&
    (S->__sk_common.skc_state == TCP_STATE_TIME_WAIT ||
    S->__sk_common.skc_state == 12 || S->sk_type == 1);

/*
 * The source and destination address of the segment at a tcp probe, from
 * its IP header, arg2.
 */
inline string __kdt_tsaddr = arg2 == 0 ? "<unknown>" :
    *(uint8_t *)arg2 >> 4 == 4 ? inet_ntop(AF_INET, &((struct iphdr *)arg2)->saddr) :
    inet_ntop(AF_INET6, &((struct ipv6hdr *)arg2)->saddr);
inline string __kdt_tdaddr = arg2 == 0 ? "<unknown>" :
    *(uint8_t *)arg2 >> 4 == 4 ? inet_ntop(AF_INET, &((struct iphdr *)arg2)->daddr) :
    inet_ntop(AF_INET6, &((struct ipv6hdr *)arg2)->daddr);

/*
 * Without a connection's socket, the ends are the segment's, at a tcp
 * probe: an inbound one has no socket at all (S is NULL), an outbound one
 * the kernel's own.
 */
translator tcpsinfo_t < struct sock *S > {
	tcps_addr = (uintptr_t)S;
	tcps_local = __kdt_tsk[S] ? (S->__sk_common.skc_family == AF_INET ?
	    S->__sk_common.skc_rcv_saddr == S->__sk_common.skc_daddr :
	    S->__sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32[0] ==
	    S->__sk_common.skc_v6_daddr.in6_u.u6_addr32[0] &&
	    S->__sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32[1] ==
	    S->__sk_common.skc_v6_daddr.in6_u.u6_addr32[1] &&
	    S->__sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32[2] ==
	    S->__sk_common.skc_v6_daddr.in6_u.u6_addr32[2] &&
	    S->__sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32[3] ==
	    S->__sk_common.skc_v6_daddr.in6_u.u6_addr32[3]) :
	    __kdt_tsaddr == __kdt_tdaddr;
	/* A closing socket gives up its port (skc_num) but keeps inet_sport. */
	tcps_lport = __kdt_tfull[S] ? ntohs(((struct inet_sock *)S)->inet_sport) :
	    __kdt_tsk[S] ? S->__sk_common.skc_num : arg4 == 0 ? 0 :
	    ntohs(S == NULL ? ((struct tcphdr *)arg4)->dest : ((struct tcphdr *)arg4)->source);
	tcps_rport = __kdt_tsk[S] ? ntohs(S->__sk_common.skc_dport) : arg4 == 0 ? 0 :
	    ntohs(S == NULL ? ((struct tcphdr *)arg4)->source : ((struct tcphdr *)arg4)->dest);
	tcps_laddr = __kdt_tsk[S] ? (S->__sk_common.skc_family == AF_INET ?
	    inet_ntop(AF_INET, &S->__sk_common.skc_rcv_saddr) :
	    inet_ntop(AF_INET6, &S->__sk_common.skc_v6_rcv_saddr)) :
	    S == NULL ? __kdt_tdaddr : __kdt_tsaddr;
	tcps_raddr = __kdt_tsk[S] ? (S->__sk_common.skc_family == AF_INET ?
	    inet_ntop(AF_INET, &S->__sk_common.skc_daddr) :
	    inet_ntop(AF_INET6, &S->__sk_common.skc_v6_daddr)) :
	    S == NULL ? __kdt_tsaddr : __kdt_tdaddr;
	tcps_state = probeprov == "tcp" ? (int)arg6 :
	    S == NULL ? 0 : S->__sk_common.skc_state;
	/* bytes_acked counts the SYN. */
	tcps_iss = __kdt_tfull[S] ? ((struct tcp_sock *)S)->snd_una - (uint32_t)((struct tcp_sock *)S)->bytes_acked : 0;
	tcps_suna = __kdt_tfull[S] ? ((struct tcp_sock *)S)->snd_una : 0;
	tcps_snxt = __kdt_tfull[S] ? ((struct tcp_sock *)S)->snd_nxt : 0;
	tcps_rnxt = __kdt_tfull[S] ? ((struct tcp_sock *)S)->rcv_nxt : 0;
	tcps_swnd = __kdt_tfull[S] ? ((struct tcp_sock *)S)->snd_wnd : 0;
	tcps_snd_ws = __kdt_tfull[S] ? ((struct tcp_sock *)S)->rx_opt.snd_wscale : 0;
	tcps_rwnd = __kdt_tfull[S] ? ((struct tcp_sock *)S)->rcv_wnd : 0;
	tcps_rcv_ws = __kdt_tfull[S] ? ((struct tcp_sock *)S)->rx_opt.rcv_wscale : 0;
	tcps_cwnd = __kdt_tfull[S] ? ((struct tcp_sock *)S)->snd_cwnd : 0;
	tcps_cwnd_ssthresh = __kdt_tfull[S] ? ((struct tcp_sock *)S)->snd_ssthresh : 0;
	tcps_sack_snxt = !__kdt_tfull[S] ? 0 :
	    ((struct tcp_sock *)S)->sacked_out == 0 || ((struct tcp_sock *)S)->highest_sack == NULL ? ((struct tcp_sock *)S)->snd_nxt :
	    ((struct tcp_skb_cb *)((struct tcp_sock *)S)->highest_sack->cb)->seq;
	tcps_rto = __kdt_tfull[S] ? ((struct tcp_sock *)S)->inet_conn.icsk_rto : 0;
	tcps_mss = __kdt_tfull[S] ? ((struct tcp_sock *)S)->mss_cache : 0;
	/*
	 * A segment goes to the interface before snd_nxt moves past it: one
	 * that starts before snd_nxt is sent again.
	 */
	tcps_retransmit = probename == "send" && __kdt_tfull[S] && arg4 != 0 &&
	    (int32_t)(((struct tcp_sock *)S)->snd_nxt - ntohl(((struct tcphdr *)arg4)->seq)) > 0;
	tcps_rtt = __kdt_tfull[S] ? (((struct tcp_sock *)S)->srtt_us >> 3) / 1000 : 0;
	tcps_rtt_sd = __kdt_tfull[S] ? (((struct tcp_sock *)S)->mdev_us >> 2) / 1000 : 0;
	/* rcv_nxt counts the SYN, bytes_received does not. */
	tcps_irs = __kdt_tfull[S] && ((struct tcp_sock *)S)->rcv_nxt != 0 ?
	    ((struct tcp_sock *)S)->rcv_nxt - (uint32_t)((struct tcp_sock *)S)->bytes_received - 1 : 0;
};

translator tcplsinfo_t < int I > {
	tcps_state = I;
};
