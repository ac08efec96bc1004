/*
 * policy.c - what the egress proxy lets through: allow-list matching of host
 * names, the public-address rule, and parsing of the authority a client names.
 */
#include "egress/egress.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int mb_egress_allowed(const char *const *allow, const char *host)
{
    size_t hn = strlen(host);
    for (size_t i = 0; allow && allow[i]; i++) {
        const char *a = allow[i];
        if (!strcmp(a, "*")) return 1;
        if (a[0] == '*' && a[1] == '.') a += 2; /* "*.example.com" reads as "example.com" */
        size_t an = strlen(a);
        if (!an) continue;
        if (hn == an && !strcasecmp(host, a)) return 1;
        /* A subdomain: "x.example.com" under "example.com"; IP literals never. */
        if (hn > an && host[hn - an - 1] == '.' && !strcasecmp(host + hn - an, a) &&
            !strchr(host, ':')) {
            struct in_addr v4;
            if (inet_pton(AF_INET, host, &v4) != 1) return 1;
        }
    }
    return 0;
}

int mb_egress_entry_valid(const char *e)
{
    if (!e) return 0;
    if (!strcmp(e, "*")) return 1;
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, e, &v4) == 1 || inet_pton(AF_INET6, e, &v6) == 1) return 1;
    if (e[0] == '*' && e[1] == '.') e += 2;
    size_t n = strlen(e), label = 0;
    if (n == 0 || n > 253) return 0;
    for (size_t i = 0; i <= n; i++) {
        unsigned char c = (unsigned char)e[i];
        if (c == '.' || c == '\0') {
            if (label == 0 || label > 63) return 0;
            label = 0;
        } else if (isalnum(c) || c == '-' || c == '_') {
            label++;
        } else {
            return 0;
        }
    }
    return 1;
}

int mb_egress_within(const char *const *allow, const char *entry)
{
    if (!strcmp(entry, "*")) {
        for (size_t i = 0; allow && allow[i]; i++)
            if (!strcmp(allow[i], "*")) return 1;
        return 0;
    }
    if (entry[0] == '*' && entry[1] == '.') entry += 2; /* the name and its subdomains */
    /* A name is admitted with all its subdomains, so the name being admitted
     * means its whole subtree is; an IP literal is only ever itself. */
    return mb_egress_allowed(allow, entry);
}

static int v4_public(uint32_t a)
{
    uint8_t b0 = a >> 24, b1 = (a >> 16) & 0xff, b2 = (a >> 8) & 0xff;
    if (b0 == 0 || b0 == 10 || b0 == 127) return 0;          /* this net, private, loopback */
    if (b0 == 100 && (b1 & 0xc0) == 64) return 0;             /* 100.64/10 CGNAT */
    if (b0 == 169 && b1 == 254) return 0;                     /* link-local, cloud metadata */
    if (b0 == 172 && (b1 & 0xf0) == 16) return 0;             /* 172.16/12 */
    if (b0 == 192 && b1 == 168) return 0;                     /* 192.168/16 */
    if (b0 == 192 && b1 == 0 && (b2 == 0 || b2 == 2)) return 0; /* IETF, TEST-NET-1 */
    if (b0 == 198 && (b1 & 0xfe) == 18) return 0;             /* 198.18/15 benchmarking */
    if (b0 == 198 && b1 == 51 && b2 == 100) return 0;         /* TEST-NET-2 */
    if (b0 == 203 && b1 == 0 && b2 == 113) return 0;          /* TEST-NET-3 */
    if (b0 >= 224) return 0;                                  /* multicast, reserved, broadcast */
    return 1;
}

int mb_egress_addr_public(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        return v4_public(ntohl(s4->sin_addr.s_addr));
    }
    if (sa->sa_family != AF_INET6) return 0;
    const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    const uint8_t *b = a->s6_addr;
    if (IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_V4COMPAT(a)) {
        if (IN6_IS_ADDR_V4COMPAT(a) && !b[12] && !b[13] && !b[14] && b[15] <= 1) return 0; /* ::, ::1 */
        return v4_public((uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15]);
    }
    if (b[0] == 0x64 && b[1] == 0xff && b[2] == 0x9b) /* NAT64 64:ff9b::/96 */
        return v4_public((uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15]);
    if ((b[0] & 0xe0) != 0x20) return 0; /* only 2000::/3 is global unicast */
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return 0; /* documentation */
    if (b[0] == 0x20 && b[1] == 0x02) /* 6to4 carries an IPv4 address */
        return v4_public((uint32_t)b[2] << 24 | (uint32_t)b[3] << 16 | (uint32_t)b[4] << 8 | b[5]);
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) return 0; /* Teredo */
    return 1;
}

static int host_char_ok(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_';
}

int mb_egress_split_authority(const char *s, size_t n, int default_port, char *host,
                              size_t host_cap, int *port)
{
    const char *hs = s, *he, *ps = NULL;
    const char *end = s + n;
    if (n == 0) return MB_EINVAL;
    if (*s == '[') {
        const char *rb = memchr(s, ']', n);
        if (!rb) return MB_EINVAL;
        hs = s + 1;
        he = rb;
        if (rb + 1 < end) {
            if (rb[1] != ':') return MB_EINVAL;
            ps = rb + 2;
        }
    } else {
        const char *colon = memchr(s, ':', n);
        he = colon ? colon : end;
        if (colon) ps = colon + 1;
    }
    size_t hn = (size_t)(he - hs);
    if (hn == 0 || hn >= host_cap || hn > 253) return MB_EINVAL;
    for (size_t i = 0; i < hn; i++) {
        unsigned char c = (unsigned char)hs[i];
        if (*s == '[' ? !(isxdigit(c) || c == ':' || c == '.') : !host_char_ok(c)) return MB_EINVAL;
        host[i] = (char)tolower(c);
    }
    host[hn] = '\0';
    if (*s == '[') {
        struct in6_addr a6;
        if (inet_pton(AF_INET6, host, &a6) != 1) return MB_EINVAL;
    } else if (host[0] == '.' || host[0] == '-' || strstr(host, "..")) {
        return MB_EINVAL;
    }
    if (!ps) {
        if (!default_port) return MB_EINVAL;
        *port = default_port;
        return 0;
    }
    if (ps == end || end - ps > 5) return MB_EINVAL;
    int p = 0;
    for (const char *c = ps; c < end; c++) {
        if (!isdigit((unsigned char)*c)) return MB_EINVAL;
        p = p * 10 + (*c - '0');
    }
    if (p < 1 || p > 65535) return MB_EINVAL;
    *port = p;
    return 0;
}
