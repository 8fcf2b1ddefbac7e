/*
 * Internet address types of <netinet/in.h>, which inet_ntoa() and
 * inet_ntop() scripts cast to. The kernel's own types have other names
 * (__be32, struct in6_addr's in6_u), so these are defined here, as the
 * C library defines them.
 */

typedef uint32_t in_addr_t;
typedef uint16_t in_port_t;

/*
 * struct in6_addr as FreeBSD's <netinet6/in6.h> declares it, which
 * scripts of inet_ntop() and inet_ntoa6() fill through __u6_addr; the
 * kernel's has the same 16 bytes as in6_u.
 */
struct in6_addr {
	union {
		uint8_t __u6_addr8[16];
		uint16_t __u6_addr16[8];
		uint32_t __u6_addr32[4];
	} __u6_addr;
};

/* The address families inet_ntop() takes, as Linux numbers them. */
inline int AF_INET = 2;
inline int AF_INET6 = 10;
