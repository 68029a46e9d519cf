/*
 * lossprobe's native send path (io.lossprobe.udp.NativeBatchSender through NativeUdp): one unconnected socket, a
 * cycle's sends for every flow in as few sendmmsg calls as the kernel allows. Compiled with lossprobe_udp.c into one
 * library (build.sh); the conventions are that file's: every function returns a value >= 0 or -errno.
 */
#define _GNU_SOURCE
#include <jni.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include "lossprobe_udp.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#define SEND_CHUNK 256    /* entries per sendmmsg (the kernel takes up to UIO_MAXIOV = 1024) */
#define DEST_DRAINED 20   /* int in dest: error-queue entries emptied, added to by sendBatch0 */

/* Empties a socket's error queue (ICMP errors queued by IP_RECVERR); returns how many it held. */
int lossprobe_drain_error_queue(int fd) {
    int queued = 0;
    char scratch[256], cbuf[512];
    for (;;) {
        struct iovec v = { scratch, sizeof(scratch) };
        struct msghdr h;
        memset(&h, 0, sizeof(h));
        h.msg_iov = &v;
        h.msg_iovlen = 1;
        h.msg_control = cbuf;
        h.msg_controllen = sizeof(cbuf);
        if (recvmsg(fd, &h, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
            return queued;
        }
        queued++;
    }
}

/* An unconnected, non-blocking datagram socket for the family of the destination (AF_INET or AF_INET6). */
JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_udpSocket0(JNIEnv *env, jclass c, jint family, jint sndbuf,
                                                                   jint recverr) {
    int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -errno;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) != 0
        || (recverr && family == AF_INET && setsockopt(fd, IPPROTO_IP, IP_RECVERR, &recverr, sizeof(recverr)) != 0)
        || (recverr && family == AF_INET6
            && setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &recverr, sizeof(recverr)) != 0)) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_intOption0(JNIEnv *env, jclass c, jint fd, jint level,
                                                                   jint name) {
    int value = 0;
    socklen_t len = sizeof(value);
    return getsockopt(fd, level, name, &value, &len) == 0 ? value : -errno;
}


/*
 * Sends the first `entries` entries of the table from the data buffer on one socket, each to the destination
 * address in dest (int family, then 16 address bytes, network order) at the entry's port, with as few sendmmsg
 * calls as the kernel allows: one per SEND_CHUNK entries when nothing fails. Each entry's result is the bytes sent
 * or -errno. An entry refused as the first of a call keeps its error; one refused after others were sent (sendmmsg
 * then returns the count before it and drops its error) is tried again as the first of the next call, and keeps
 * the error only if refused again: the Netty path's semantics. Stops at EAGAIN (the socket's buffer is
 * full): that entry and the rest are not sent. Returns the entries finished (sent or failed), or -errno.
 * After any refusal it empties the socket's error queue (the ICMP error behind a refusal queues itself there with
 * IP_RECVERR, and nothing else reads this socket) and adds how many it held to the int at DEST_DRAINED of dest.
 */
JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_sendBatch0(JNIEnv *env, jclass c, jint fd, jobject data,
                                                                   jobject table, jint entries, jobject dest) {
    char *bytes = (char *) (*env)->GetDirectBufferAddress(env, data);
    char *t = (char *) (*env)->GetDirectBufferAddress(env, table);
    char *d = (char *) (*env)->GetDirectBufferAddress(env, dest);
    struct mmsghdr msgs[SEND_CHUNK];
    struct iovec iov[SEND_CHUNK];
    struct sockaddr_in6 to[SEND_CHUNK];
    char control[SEND_CHUNK][CMSG_SPACE(sizeof(uint16_t)) + CMSG_SPACE(sizeof(int))];
    int family, done = 0, refused = 0;
    if (bytes == NULL || t == NULL || d == NULL) {
        return -EINVAL;
    }
    memcpy(&family, d, 4);
    while (done < entries) {
        int n = entries - done < SEND_CHUNK ? entries - done : SEND_CHUNK, k, sent;
        for (k = 0; k < n; k++) {
            char *e = t + (size_t) (done + k) * ENTRY_BYTES;
            int port, offset, length, segment, tos;
            memcpy(&port, e + ENTRY_PORT, 4);
            memcpy(&offset, e + ENTRY_OFFSET, 4);
            memcpy(&length, e + ENTRY_LENGTH, 4);
            memcpy(&segment, e + ENTRY_SEGMENT, 4);
            memset(&msgs[k], 0, sizeof(msgs[k]));
            memset(&to[k], 0, sizeof(to[k]));
            if (family == AF_INET) {
                struct sockaddr_in *v4 = (struct sockaddr_in *) &to[k];
                v4->sin_family = AF_INET;
                v4->sin_port = htons((uint16_t) port);
                memcpy(&v4->sin_addr, d + 4, 4);
                msgs[k].msg_hdr.msg_namelen = sizeof(struct sockaddr_in);
            } else {
                to[k].sin6_family = AF_INET6;
                to[k].sin6_port = htons((uint16_t) port);
                memcpy(&to[k].sin6_addr, d + 4, 16);
                msgs[k].msg_hdr.msg_namelen = sizeof(struct sockaddr_in6);
            }
            msgs[k].msg_hdr.msg_name = &to[k];
            iov[k].iov_base = bytes + offset;
            iov[k].iov_len = (size_t) length;
            msgs[k].msg_hdr.msg_iov = &iov[k];
            msgs[k].msg_hdr.msg_iovlen = 1;
            memcpy(&tos, e + ENTRY_TOS, 4);
            if (segment > 0 || tos >= 0) {
                struct cmsghdr *cm;
                size_t used = 0;
                memset(control[k], 0, sizeof(control[k]));
                msgs[k].msg_hdr.msg_control = control[k];
                msgs[k].msg_hdr.msg_controllen = sizeof(control[k]);
                cm = CMSG_FIRSTHDR(&msgs[k].msg_hdr);
                if (segment > 0) {
                    uint16_t seg = (uint16_t) segment;
                    cm->cmsg_level = SOL_UDP;
                    cm->cmsg_type = UDP_SEGMENT;
                    cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
                    memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
                    used += CMSG_SPACE(sizeof(uint16_t));
                    cm = CMSG_NXTHDR(&msgs[k].msg_hdr, cm);
                }
                if (tos >= 0) {
                    /* the flow's class: one socket sends every flow, so the class goes with each send */
                    cm->cmsg_level = family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6;
                    cm->cmsg_type = family == AF_INET ? IP_TOS : IPV6_TCLASS;
                    cm->cmsg_len = CMSG_LEN(sizeof(int));
                    memcpy(CMSG_DATA(cm), &tos, sizeof(tos));
                    used += CMSG_SPACE(sizeof(int));
                }
                msgs[k].msg_hdr.msg_controllen = used;
            }
        }
        sent = sendmmsg(fd, msgs, (unsigned int) n, MSG_DONTWAIT);
        if (sent > 0) {
            for (k = 0; k < sent; k++) {
                int r = (int) msgs[k].msg_len;
                memcpy(t + (size_t) (done + k) * ENTRY_BYTES + ENTRY_RESULT, &r, 4);
            }
            done += sent; /* stopped short: the next entry's error is lost, so the next call tries it again */
            continue;
        }
        if (sent < 0 && errno == EINTR) {
            continue;
        }
        if (sent == 0 || errno == EAGAIN || errno == EWOULDBLOCK) {
            return done;
        }
        refused = 1;
        {
            int r = -errno;
            memcpy(t + (size_t) done * ENTRY_BYTES + ENTRY_RESULT, &r, 4);
            done++;
        }
    }
    if (refused) {
        int drained;
        memcpy(&drained, d + DEST_DRAINED, 4);
        drained += lossprobe_drain_error_queue(fd);
        memcpy(d + DEST_DRAINED, &drained, 4);
    }
    return done;
}

/*
 * Binds the socket to address (4 or 16 bytes, network order; NULL: the wildcard address of its family) on a port the
 * kernel picks, so its port is known before it sends (a receiver behind a NAT punches to it) and, given an address,
 * its datagrams leave from that address whatever the route's preferred source: returns the port, or -errno.
 */
JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_bind0(JNIEnv *env, jclass c, jint fd, jint family,
                                                              jbyteArray address) {
    struct sockaddr_in6 a;
    socklen_t len;
    jsize n = address == NULL ? 0 : (*env)->GetArrayLength(env, address);
    memset(&a, 0, sizeof(a));
    if (family == AF_INET) {
        struct sockaddr_in *v4 = (struct sockaddr_in *) &a;
        if (n != 0 && n != 4) {
            return -EINVAL;
        }
        v4->sin_family = AF_INET;
        if (n == 4) {
            (*env)->GetByteArrayRegion(env, address, 0, 4, (jbyte *) &v4->sin_addr);
        }
        len = sizeof(struct sockaddr_in);
    } else {
        if (n != 0 && n != 16) {
            return -EINVAL;
        }
        a.sin6_family = AF_INET6;
        if (n == 16) {
            (*env)->GetByteArrayRegion(env, address, 0, 16, (jbyte *) &a.sin6_addr);
        }
        len = sizeof(struct sockaddr_in6);
    }
    if (bind(fd, (struct sockaddr *) &a, len) != 0) {
        return -errno;
    }
    len = sizeof(a);
    if (getsockname(fd, (struct sockaddr *) &a, &len) != 0) {
        return -errno;
    }
    return family == AF_INET ? ntohs(((struct sockaddr_in *) &a)->sin_port) : ntohs(a.sin6_port);
}

/*
 * Waits up to timeoutMs for one datagram on the (non-blocking) socket and reads at most capacity bytes of it into
 * buffer; its source goes into from: int family, int port (host order), then 4 or 16 address bytes (network
 * order). Returns the datagram's whole length (more than capacity when it was cut), -EAGAIN when none came, or
 * -errno.
 */
JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_receiveFrom0(JNIEnv *env, jclass c, jint fd, jobject buffer,
                                                                     jint capacity, jobject from, jint timeoutMs) {
    char *b = (char *) (*env)->GetDirectBufferAddress(env, buffer);
    char *f = (char *) (*env)->GetDirectBufferAddress(env, from);
    struct pollfd p;
    struct sockaddr_in6 a;
    socklen_t len = sizeof(a);
    ssize_t n;
    int family, port;
    if (b == NULL || f == NULL || capacity < 0 || (*env)->GetDirectBufferCapacity(env, buffer) < capacity
        || (*env)->GetDirectBufferCapacity(env, from) < 24) {
        return -EINVAL;
    }
    p.fd = fd;
    p.events = POLLIN;
    p.revents = 0;
    if (poll(&p, 1, timeoutMs) < 0) {
        return -errno;
    }
    n = recvfrom(fd, b, (size_t) capacity, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *) &a, &len);
    if (n < 0) {
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }
    family = a.sin6_family;
    memset(f, 0, 24);
    memcpy(f, &family, 4);
    if (family == AF_INET) {
        struct sockaddr_in *v4 = (struct sockaddr_in *) &a;
        port = ntohs(v4->sin_port);
        memcpy(f + 8, &v4->sin_addr, 4);
    } else {
        port = ntohs(a.sin6_port);
        memcpy(f + 8, &a.sin6_addr, 16);
    }
    memcpy(f + 4, &port, 4);
    return (jint) n;
}
