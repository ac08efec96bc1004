/*
 * egress_int.h - what the files of the egress layer share (relay.c).
 */
#ifndef MB_EGRESS_INT_H
#define MB_EGRESS_INT_H

#include <stddef.h>

/* Sends all of p (MSG_NOSIGNAL); 0 or -1. */
int mb_egress__write_all(int fd, const void *p, size_t n);
/* Relays a <-> b until both directions ended (each end is passed on as a
 * SHUT_WR) or nothing moved for idle_ms; counts bytes a->b in *up, b->a in *down. */
void mb_egress__relay(int a, int b, int idle_ms, unsigned long long *up, unsigned long long *down);

#endif /* MB_EGRESS_INT_H */
