/* Shared by lossprobe_udp.c and lossprobe_udp_send.c (one library, see build.sh). */
#ifndef LOSSPROBE_UDP_H
#define LOSSPROBE_UDP_H

/* Empties a socket's error queue (ICMP errors queued by IP_RECVERR); returns how many it held. */
int lossprobe_drain_error_queue(int fd);

#endif
