/* Shared by lossprobe_udp.c and lossprobe_udp_send.c (one library, see build.sh). */
#ifndef LOSSPROBE_UDP_H
#define LOSSPROBE_UDP_H

/*
 * One entry of the send table (lossprobe_udp_send.c); NativeBatchSender.ENTRY_* in Java mirrors every name and value
 * (ints, native order), and layout0 in lossprobe_udp.c lists them for NativeLayoutTest: change both, or it fails.
 */
#define ENTRY_BYTES 32
#define ENTRY_PORT 0      /* destination port */
#define ENTRY_OFFSET 4    /* first byte in the data buffer */
#define ENTRY_LENGTH 8    /* bytes: one datagram, or segments * segment size */
#define ENTRY_SEGMENT 12  /* UDP_SEGMENT size, or 0 for one plain datagram */
#define ENTRY_RESULT 16   /* written here: bytes sent, or -errno */
#define ENTRY_TOS 24      /* TOS / traffic-class byte for IP_TOS (IPV6_TCLASS) ancillary data, or -1: none */

/* Empties a socket's error queue (ICMP errors queued by IP_RECVERR); returns how many it held. */
int lossprobe_drain_error_queue(int fd);

#endif
