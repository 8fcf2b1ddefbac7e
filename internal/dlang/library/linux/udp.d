/*
 * udp.d: the types of the udp provider's arguments, as illumos and
 * Oracle's DTrace for Linux define them, translated from Linux's UDP
 * headers and sockets.
 *
 * A UDP socket need not be connected, so udpsinfo_t's ports and
 * addresses are the datagram's at the udp provider's probes, args[2]
 * and args[4]: the local end is the source at send, the destination at
 * receive.
 */

#pragma D depends_on module vmlinux
#pragma D depends_on library ip.d

/* A UDP header. */
typedef struct udpinfo {
	uint16_t udp_sport;	/* source port */
	uint16_t udp_dport;	/* destination port */
	uint16_t udp_length;	/* length of header and data */
	uint16_t udp_checksum;	/* checksum */
	struct udphdr *udp_hdr;	/* the header */
} udpinfo_t;

/* A UDP socket. */
typedef struct udpsinfo {
	uintptr_t udps_addr;	/* its socket */
	uint16_t udps_lport;	/* local port */
	uint16_t udps_rport;	/* remote port */
	string udps_laddr;	/* local address */
	string udps_raddr;	/* remote address */
} udpsinfo_t;

translator udpinfo_t < struct udphdr *U > {
	udp_sport = U == NULL ? 0 : ntohs(U->source);
	udp_dport = U == NULL ? 0 : ntohs(U->dest);
	udp_length = U == NULL ? 0 : ntohs(U->len);
	udp_checksum = U == NULL ? 0 : ntohs(U->check);
	udp_hdr = U;
};

/*
 * The source and destination address of the datagram at a udp probe,
 * from its IP header, arg2.
 */
inline string __kdt_usaddr = arg2 == 0 ? "<unknown>" :
    *(uint8_t *)arg2 >> 4 == 4 ? inet_ntop(AF_INET, &((struct iphdr *)arg2)->saddr) :
    inet_ntop(AF_INET6, &((struct ipv6hdr *)arg2)->saddr);
inline string __kdt_udaddr = arg2 == 0 ? "<unknown>" :
    *(uint8_t *)arg2 >> 4 == 4 ? inet_ntop(AF_INET, &((struct iphdr *)arg2)->daddr) :
    inet_ntop(AF_INET6, &((struct ipv6hdr *)arg2)->daddr);

/*
 * At the udp provider's probes: a datagram received has no socket yet (S
 * is NULL), one sent has its sender's.
 */
translator udpsinfo_t < struct sock *S > {
	udps_addr = (uintptr_t)S;
	udps_lport = arg4 == 0 ? 0 :
	    ntohs(S == NULL ? ((struct udphdr *)arg4)->dest : ((struct udphdr *)arg4)->source);
	udps_rport = arg4 == 0 ? 0 :
	    ntohs(S == NULL ? ((struct udphdr *)arg4)->source : ((struct udphdr *)arg4)->dest);
	udps_laddr = S == NULL ? __kdt_udaddr : __kdt_usaddr;
	udps_raddr = S == NULL ? __kdt_usaddr : __kdt_udaddr;
};
