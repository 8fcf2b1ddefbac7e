/*
 * Internet address types of <netinet/in.h>, which inet_ntoa() and
 * inet_ntop() scripts cast to. The kernel's own types have other names
 * (__be32, struct in6_addr's in6_u), so these are defined here, as the
 * C library defines them.
 */

typedef uint32_t in_addr_t;
typedef uint16_t in_port_t;
