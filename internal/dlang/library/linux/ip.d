/*
 * ip.d: the types of the ip provider's arguments, which the tcp and udp
 * providers share, as illumos and Oracle's DTrace for Linux define them,
 * translated from Linux's socket buffers, sockets and devices.
 *
 * Strings of headers or sockets that are absent (NULL) are "<unknown>".
 */

#pragma D depends_on module vmlinux
#pragma D depends_on library in.d

/* Transport protocols, from Linux's uapi/linux/in.h and in6.h. */
inline int IPPROTO_IP = 0;
inline int IPPROTO_ICMP = 1;
inline int IPPROTO_IGMP = 2;
inline int IPPROTO_IPIP = 4;
inline int IPPROTO_TCP = 6;
inline int IPPROTO_EGP = 8;
inline int IPPROTO_UDP = 17;
inline int IPPROTO_IPV6 = 41;
inline int IPPROTO_ROUTING = 43;
inline int IPPROTO_FRAGMENT = 44;
inline int IPPROTO_GRE = 47;
inline int IPPROTO_ESP = 50;
inline int IPPROTO_AH = 51;
inline int IPPROTO_ICMPV6 = 58;
inline int IPPROTO_NONE = 59;
inline int IPPROTO_DSTOPTS = 60;
inline int IPPROTO_OSPF = 89;
inline int IPPROTO_SCTP = 132;
inline int IPPROTO_UDPLITE = 136;
inline int IPPROTO_RAW = 255;

/* The network stack an interface is in: its namespace, on Linux. */
typedef uint64_t netstackid_t;
typedef uint32_t ipaddr_t;
typedef struct in6_addr in6_addr_t;

/* A packet: the address of its struct sk_buff. */
typedef struct pktinfo {
	uintptr_t pkt_addr;
} pktinfo_t;

/* A connection: the address of its socket, which also identifies it. */
typedef struct csinfo {
	uintptr_t cs_addr;
	uint64_t cs_cid;
} csinfo_t;

/* What IPv4 and IPv6 headers have in common. */
typedef struct ipinfo {
	uint8_t ip_ver;		/* 4 or 6 */
	uint32_t ip_plength;	/* payload length, bytes */
	string ip_saddr;	/* source address */
	string ip_daddr;	/* destination address */
} ipinfo_t;

/* A network interface. */
typedef struct ifinfo {
	string if_name;		/* interface name */
	int8_t if_local;	/* 1 for the loopback interface */
	netstackid_t if_ipstack;	/* its network namespace */
	uintptr_t if_addr;	/* its struct net_device */
} ifinfo_t;

/* An IPv4 header; zeros and "<null>" for a packet of IPv6. */
typedef struct ipv4info {
	uint8_t ipv4_ver;	/* 4 */
	uint8_t ipv4_ihl;	/* header length, bytes */
	uint8_t ipv4_tos;	/* type of service */
	uint16_t ipv4_length;	/* total length, bytes */
	uint16_t ipv4_ident;	/* identification */
	uint8_t ipv4_flags;	/* flags: 2 don't fragment, 1 more fragments */
	uint16_t ipv4_offset;	/* fragment offset, bytes */
	uint8_t ipv4_ttl;	/* time to live */
	uint8_t ipv4_protocol;	/* transport protocol */
	string ipv4_protostr;	/* transport protocol's name */
	uint16_t ipv4_checksum;	/* header checksum */
	ipaddr_t ipv4_src;	/* source address, network order */
	ipaddr_t ipv4_dst;	/* destination address, network order */
	string ipv4_saddr;	/* source address */
	string ipv4_daddr;	/* destination address */
	struct iphdr *ipv4_hdr;	/* the header */
} ipv4info_t;

/* An IPv6 header; zeros and "<null>" for a packet of IPv4. */
typedef struct ipv6info {
	uint8_t ipv6_ver;	/* 6 */
	uint8_t ipv6_tclass;	/* traffic class */
	uint32_t ipv6_flow;	/* flow label */
	uint16_t ipv6_plen;	/* payload length, bytes */
	uint8_t ipv6_nexthdr;	/* next header's protocol */
	string ipv6_nextstr;	/* next header protocol's name */
	uint8_t ipv6_hlim;	/* hop limit */
	in6_addr_t *ipv6_src;	/* source address */
	in6_addr_t *ipv6_dst;	/* destination address */
	string ipv6_saddr;	/* source address */
	string ipv6_daddr;	/* destination address */
	struct ipv6hdr *ipv6_hdr;	/* the header */
} ipv6info_t;

/* The name of transport protocol p, or its number. */
inline string __kdt_protostr[int p] =
    p == IPPROTO_TCP ? "TCP" : p == IPPROTO_UDP ? "UDP" :
    p == IPPROTO_IP ? "IP" : p == IPPROTO_ICMP ? "ICMP" :
    p == IPPROTO_IGMP ? "IGMP" : p == IPPROTO_EGP ? "EGP" :
    p == IPPROTO_IPV6 ? "IPv6" : p == IPPROTO_ROUTING ? "ROUTE" :
    p == IPPROTO_ESP ? "ESP" : p == IPPROTO_AH ? "AH" :
    p == IPPROTO_ICMPV6 ? "ICMPv6" : p == IPPROTO_OSPF ? "OSPF" :
    p == IPPROTO_SCTP ? "SCTP" : p == IPPROTO_RAW ? "RAW" :
    lltostr(p);

translator pktinfo_t < struct sk_buff *S > {
	pkt_addr = (uintptr_t)S;
};

translator csinfo_t < struct sock *S > {
	cs_addr = (uintptr_t)S;
	cs_cid = (uint64_t)S;
};

/*
 * An IP header of either version: the probes pass an IPv6 header as a
 * struct iphdr * too, and its first four bits say which it is.
 */
translator ipinfo_t < struct iphdr *I > {
	ip_ver = I == NULL ? 0 : *(uint8_t *)I >> 4;
	ip_plength = I == NULL ? 0 : *(uint8_t *)I >> 4 == 4 ?
	    ntohs(I->tot_len) - ((*(uint8_t *)I & 0xf) << 2) :
	    ntohs(((struct ipv6hdr *)I)->payload_len);
	ip_saddr = I == NULL ? "<unknown>" : *(uint8_t *)I >> 4 == 4 ?
	    inet_ntop(AF_INET, &I->saddr) :
	    inet_ntop(AF_INET6, &((struct ipv6hdr *)I)->saddr);
	ip_daddr = I == NULL ? "<unknown>" : *(uint8_t *)I >> 4 == 4 ?
	    inet_ntop(AF_INET, &I->daddr) :
	    inet_ntop(AF_INET6, &((struct ipv6hdr *)I)->daddr);
};

translator ipinfo_t < struct ipv6hdr *I > {
	ip_ver = I == NULL ? 0 : 6;
	ip_plength = I == NULL ? 0 : ntohs(I->payload_len);
	ip_saddr = I == NULL ? "<unknown>" : inet_ntop(AF_INET6, &I->saddr);
	ip_daddr = I == NULL ? "<unknown>" : inet_ntop(AF_INET6, &I->daddr);
};

/*
 * The IP of a segment a connection received, from its socket: the
 * remote address is the source. The tcp provider's connection events
 * (connect-established, accept-established, connect-refused) have the
 * socket and not the segment.
 */
translator ipinfo_t < struct sock *S > {
	ip_ver = S == NULL ? 0 : S->__sk_common.skc_family == AF_INET ? 4 : 6;
	ip_plength = 0;
	ip_saddr = S == NULL ? "<unknown>" :
	    S->__sk_common.skc_family == AF_INET ?
	    inet_ntop(AF_INET, &S->__sk_common.skc_daddr) :
	    inet_ntop(AF_INET6, &S->__sk_common.skc_v6_daddr);
	ip_daddr = S == NULL ? "<unknown>" :
	    S->__sk_common.skc_family == AF_INET ?
	    inet_ntop(AF_INET, &S->__sk_common.skc_rcv_saddr) :
	    inet_ntop(AF_INET6, &S->__sk_common.skc_v6_rcv_saddr);
};

translator ifinfo_t < struct net_device *N > {
	if_name = N == NULL ? "<unknown>" : stringof(N->name);
	if_local = N != NULL && (N->flags & 0x8) != 0;	/* IFF_LOOPBACK */
	if_ipstack = N == NULL ? 0 : (uint64_t)N->nd_net.net;
	if_addr = (uintptr_t)N;
};

translator ipv4info_t < struct iphdr *I > {
	ipv4_ver = I == NULL ? 0 : 4;
	ipv4_ihl = I == NULL ? 0 : (*(uint8_t *)I & 0xf) << 2;
	ipv4_tos = I == NULL ? 0 : I->tos;
	ipv4_length = I == NULL ? 0 : ntohs(I->tot_len);
	ipv4_ident = I == NULL ? 0 : ntohs(I->id);
	ipv4_flags = I == NULL ? 0 : ntohs(I->frag_off) >> 13;
	ipv4_offset = I == NULL ? 0 : (ntohs(I->frag_off) & 0x1fff) << 3;
	ipv4_ttl = I == NULL ? 0 : I->ttl;
	ipv4_protocol = I == NULL ? 0 : I->protocol;
	ipv4_protostr = I == NULL ? "<null>" : __kdt_protostr[I->protocol];
	ipv4_checksum = I == NULL ? 0 : ntohs(I->check);
	ipv4_src = I == NULL ? 0 : I->saddr;
	ipv4_dst = I == NULL ? 0 : I->daddr;
	ipv4_saddr = I == NULL ? "<null>" : inet_ntop(AF_INET, &I->saddr);
	ipv4_daddr = I == NULL ? "<null>" : inet_ntop(AF_INET, &I->daddr);
	ipv4_hdr = I;
};

translator ipv6info_t < struct ipv6hdr *I > {
	ipv6_ver = I == NULL ? 0 : *(uint8_t *)I >> 4;
	ipv6_tclass = I == NULL ? 0 : (ntohl(*(uint32_t *)I) >> 20) & 0xff;
	ipv6_flow = I == NULL ? 0 : ntohl(*(uint32_t *)I) & 0xfffff;
	ipv6_plen = I == NULL ? 0 : ntohs(I->payload_len);
	ipv6_nexthdr = I == NULL ? 0 : I->nexthdr;
	ipv6_nextstr = I == NULL ? "<null>" : __kdt_protostr[I->nexthdr];
	ipv6_hlim = I == NULL ? 0 : I->hop_limit;
	ipv6_src = I == NULL ? NULL : (in6_addr_t *)&I->saddr;
	ipv6_dst = I == NULL ? NULL : (in6_addr_t *)&I->daddr;
	ipv6_saddr = I == NULL ? "<null>" : inet_ntop(AF_INET6, &I->saddr);
	ipv6_daddr = I == NULL ? "<null>" : inet_ntop(AF_INET6, &I->daddr);
	ipv6_hdr = I;
};
