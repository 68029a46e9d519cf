/*
 * lossprobe's small native piece for the UDP transport (io.lossprobe.udp.NativeUdp): what Java 17 and Netty's
 * epoll transport cannot do.
 *
 *  - kernel receive timestamps: Netty's recvmmsg passes no control buffer, so SO_TIMESTAMPNS stamps never reach
 *    Java. readStamped0 reads the sockets of one epoll set with recvmmsg and returns, per datagram, the kernel's
 *    stamp converted to CLOCK_MONOTONIC (System.nanoTime's clock on Linux);
 *  - per-thread settings: prctl(PR_SET_TIMERSLACK) and sched_setaffinity act on the calling thread only.
 *
 * Every function returns a value >= 0 or -errno; nothing here allocates, blocks longer than asked, or keeps state.
 * Built by udp-probe's pom (gcc, when present); without it lossprobe falls back and says so in its results.
 */
#define _GNU_SOURCE
#include <jni.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#ifndef SO_TIMESTAMPNS
#define SO_TIMESTAMPNS 35
#endif
#ifndef SCM_TIMESTAMPNS
#define SCM_TIMESTAMPNS SO_TIMESTAMPNS
#endif

/* One datagram's record in the meta buffer; offsets mirror NativeUdp.META_* in Java. */
#define META_BYTES 48
#define META_TOKEN 0      /* int: the socket's token given to epollAdd0 */
#define META_LENGTH 4     /* int: bytes received (a slot's size when the datagram was longer) */
#define META_KERNEL_NS 8  /* long: kernel stamp on CLOCK_MONOTONIC, or INT64_MIN when the kernel gave none */
#define META_FAMILY 16    /* short: AF_INET or AF_INET6 */
#define META_PORT 18      /* unsigned short, host order */
#define META_ADDR 24      /* 4 or 16 bytes, network order */

#define MAX_BATCH 128
#define MAX_EVENTS 64
#define EVENT_TOKEN (-1)
/* META_LENGTH of a record that says a socket's error queue was emptied; META_KERNEL_NS holds how many it held. */
#define ERRQUEUE_DRAINED (-100000)

static inline int64_t ns_of(const struct timespec *t) {
    return (int64_t) t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* CLOCK_REALTIME minus CLOCK_MONOTONIC now, read between two realtime reads to halve the error. */
static int64_t realtime_minus_monotonic(void) {
    struct timespec r1, m, r2;
    clock_gettime(CLOCK_REALTIME, &r1);
    clock_gettime(CLOCK_MONOTONIC, &m);
    clock_gettime(CLOCK_REALTIME, &r2);
    return (ns_of(&r1) + ns_of(&r2)) / 2 - ns_of(&m);
}

JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_setTimerSlack0(JNIEnv *env, jclass c, jlong ns) {
    return prctl(PR_SET_TIMERSLACK, (unsigned long) ns, 0, 0, 0) == 0 ? 0 : -errno;
}

JNIEXPORT jlong JNICALL Java_io_lossprobe_udp_NativeUdp_timerSlack0(JNIEnv *env, jclass c) {
    int r = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    return r >= 0 ? r : -errno;
}

JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_pinToCpu0(JNIEnv *env, jclass c, jint cpu) {
    cpu_set_t set;
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
        return -EINVAL;
    }
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set) == 0 ? 0 : -errno;
}

JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_currentCpu0(JNIEnv *env, jclass c) {
    int cpu = sched_getcpu();
    return cpu >= 0 ? cpu : -errno;
}

JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_enableTimestamps0(JNIEnv *env, jclass c, jint fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) == 0 ? 0 : -errno;
}

JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_epollCreate0(JNIEnv *env, jclass c) {
    int fd = epoll_create1(EPOLL_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

/* Level-triggered: a socket with datagrams left after one read is reported again by the next wait. */
JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_epollAdd0(JNIEnv *env, jclass c, jint epfd, jint fd,
                                                                  jint token) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.u64 = ((uint64_t) (uint32_t) fd << 32) | (uint32_t) token; /* the wait needs both */
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_eventFd0(JNIEnv *env, jclass c) {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd >= 0 ? fd : -errno;
}

JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_eventFdWrite0(JNIEnv *env, jclass c, jint fd) {
    uint64_t one = 1;
    return write(fd, &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}

JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_close0(JNIEnv *env, jclass c, jint fd) {
    return close(fd) == 0 ? 0 : -errno;
}

/* Empties a socket's error queue (ICMP errors queued by IP_RECVERR); returns how many it held. */
static int drain_error_queue(int fd) {
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

static void put_meta(char *m, int token, int length, int64_t kernel_ns, const struct sockaddr_in6 *from) {
    int16_t family = (int16_t) from->sin6_family;
    uint16_t port;
    memset(m, 0, META_BYTES);
    memcpy(m + META_TOKEN, &token, 4);
    memcpy(m + META_LENGTH, &length, 4);
    memcpy(m + META_KERNEL_NS, &kernel_ns, 8);
    memcpy(m + META_FAMILY, &family, 2);
    if (from->sin6_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *) from;
        port = ntohs(v4->sin_port);
        memcpy(m + META_ADDR, &v4->sin_addr, 4);
    } else {
        port = ntohs(from->sin6_port);
        memcpy(m + META_ADDR, &from->sin6_addr, 16);
    }
    memcpy(m + META_PORT, &port, 2);
}

/*
 * Waits up to timeoutMs (0: just looks) for any socket of epfd, then reads each ready socket with one recvmmsg
 * (MSG_DONTWAIT) into consecutive slots of slotBytes until maxDatagrams. Returns the datagrams read (their records
 * in meta, their bytes in the slots), 0 when none, or -errno of a failed wait. A socket whose read fails with
 * anything but EAGAIN is reported as a record of length -errno (its pending error, e.g. an ICMP port unreachable),
 * so the caller can count it. A socket reporting EPOLLERR has its error queue (ICMP errors queued by IP_RECVERR)
 * emptied first, reported as one record of length ERRQUEUE_DRAINED: left there, it would keep this level-triggered
 * wait returning at once. An eventfd added with token -1 (a wake-up) is drained and reported as nothing.
 */
JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_readStamped0(JNIEnv *env, jclass c, jint epfd,
                                                                     jint timeoutMs, jobject buffer, jint slotBytes,
                                                                     jint maxDatagrams, jobject meta) {
    char *slots = (char *) (*env)->GetDirectBufferAddress(env, buffer);
    char *records = (char *) (*env)->GetDirectBufferAddress(env, meta);
    struct epoll_event events[MAX_EVENTS];
    struct mmsghdr msgs[MAX_BATCH];
    struct iovec iov[MAX_BATCH];
    struct sockaddr_in6 from[MAX_BATCH];
    char control[MAX_BATCH][CMSG_SPACE(sizeof(struct timespec))];
    int ready, i, total = 0;
    int64_t offset = 0;
    int have_offset = 0;

    if (slots == NULL || records == NULL) {
        return -EINVAL;
    }
    if (maxDatagrams > MAX_BATCH) {
        maxDatagrams = MAX_BATCH;
    }
    do {
        ready = epoll_wait(epfd, events, MAX_EVENTS, timeoutMs);
    } while (ready < 0 && errno == EINTR && timeoutMs == 0);
    if (ready < 0) {
        return errno == EINTR ? 0 : -errno;
    }
    for (i = 0; i < ready && total < maxDatagrams; i++) {
        int token = (int) (uint32_t) events[i].data.u64;
        int fd = (int) (events[i].data.u64 >> 32);
        int got, k, room = maxDatagrams - total;
        if (token == EVENT_TOKEN) {
            uint64_t count;
            ssize_t drained = read(fd, &count, sizeof(count)); /* a wake-up: nothing to deliver */
            (void) drained;
            continue;
        }
        if (events[i].events & EPOLLERR) {
            int64_t queued = drain_error_queue(fd);
            if (queued > 0) {
                struct sockaddr_in6 none;
                memset(&none, 0, sizeof(none));
                put_meta(records + (size_t) total * META_BYTES, token, ERRQUEUE_DRAINED, queued, &none);
                total++;
                room = maxDatagrams - total;
                if (room <= 0) {
                    break;
                }
            }
        }
        for (k = 0; k < room; k++) {
            memset(&msgs[k], 0, sizeof(msgs[k]));
            iov[k].iov_base = slots + (size_t) (total + k) * slotBytes;
            iov[k].iov_len = slotBytes;
            msgs[k].msg_hdr.msg_iov = &iov[k];
            msgs[k].msg_hdr.msg_iovlen = 1;
            msgs[k].msg_hdr.msg_name = &from[k];
            msgs[k].msg_hdr.msg_namelen = sizeof(from[k]);
            msgs[k].msg_hdr.msg_control = control[k];
            msgs[k].msg_hdr.msg_controllen = sizeof(control[k]);
        }
        got = recvmmsg(fd, msgs, room, MSG_DONTWAIT, NULL);
        if (got < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                struct sockaddr_in6 none;
                memset(&none, 0, sizeof(none));
                put_meta(records + (size_t) total * META_BYTES, token, -errno, INT64_MIN, &none);
                total++;
            }
            continue;
        }
        if (!have_offset) {
            offset = realtime_minus_monotonic();
            have_offset = 1;
        }
        for (k = 0; k < got; k++) {
            int64_t kernel_ns = INT64_MIN;
            struct cmsghdr *cm;
            for (cm = CMSG_FIRSTHDR(&msgs[k].msg_hdr); cm != NULL; cm = CMSG_NXTHDR(&msgs[k].msg_hdr, cm)) {
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
                    struct timespec ts;
                    memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
                    kernel_ns = ns_of(&ts) - offset;
                }
            }
            put_meta(records + (size_t) (total + k) * META_BYTES, token, (int) msgs[k].msg_len, kernel_ns,
                     &from[k]);
        }
        total += got;
    }
    return total;
}

/* Sends len bytes at offset of buffer to the source recorded at metaOffset of meta (an echo reply). */
JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_replyTo0(JNIEnv *env, jclass c, jint fd, jobject buffer,
                                                                 jint offset, jint len, jobject meta,
                                                                 jint metaOffset) {
    char *data = (char *) (*env)->GetDirectBufferAddress(env, buffer);
    char *m = (char *) (*env)->GetDirectBufferAddress(env, meta);
    struct sockaddr_in6 to;
    socklen_t to_len;
    int16_t family;
    uint16_t port;
    ssize_t sent;
    if (data == NULL || m == NULL) {
        return -EINVAL;
    }
    m += metaOffset;
    memcpy(&family, m + META_FAMILY, 2);
    memcpy(&port, m + META_PORT, 2);
    memset(&to, 0, sizeof(to));
    if (family == AF_INET) {
        struct sockaddr_in *v4 = (struct sockaddr_in *) &to;
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        memcpy(&v4->sin_addr, m + META_ADDR, 4);
        to_len = sizeof(struct sockaddr_in);
    } else {
        to.sin6_family = AF_INET6;
        to.sin6_port = htons(port);
        memcpy(&to.sin6_addr, m + META_ADDR, 16);
        to_len = sizeof(struct sockaddr_in6);
    }
    sent = sendto(fd, data + offset, (size_t) len, MSG_DONTWAIT, (struct sockaddr *) &to, to_len);
    return sent >= 0 ? (jint) sent : -errno;
}

/* ---- the batched sender (io.lossprobe.udp.NativeBatchSender) ---- */

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif
/* One entry of the send table; offsets mirror NativeBatchSender.ENTRY_* in Java (ints, native order). */
#define ENTRY_BYTES 32
#define ENTRY_PORT 0      /* destination port */
#define ENTRY_OFFSET 4    /* first byte in the data buffer */
#define ENTRY_LENGTH 8    /* bytes: one datagram, or segments * segment size */
#define ENTRY_SEGMENT 12  /* UDP_SEGMENT size, or 0 for one plain datagram */
#define ENTRY_RESULT 16   /* written here: bytes sent, or -errno */
#define SEND_CHUNK 256    /* entries per sendmmsg (the kernel takes up to UIO_MAXIOV = 1024) */
#define DEST_DRAINED 20   /* int in dest: error-queue entries emptied, added to by sendBatch0 */

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
    char control[SEND_CHUNK][CMSG_SPACE(sizeof(uint16_t))];
    int family, done = 0, refused = 0;
    if (bytes == NULL || t == NULL || d == NULL) {
        return -EINVAL;
    }
    memcpy(&family, d, 4);
    while (done < entries) {
        int n = entries - done < SEND_CHUNK ? entries - done : SEND_CHUNK, k, sent;
        for (k = 0; k < n; k++) {
            char *e = t + (size_t) (done + k) * ENTRY_BYTES;
            int port, offset, length, segment;
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
            if (segment > 0) {
                struct cmsghdr *cm;
                uint16_t seg = (uint16_t) segment;
                memset(control[k], 0, sizeof(control[k]));
                msgs[k].msg_hdr.msg_control = control[k];
                msgs[k].msg_hdr.msg_controllen = sizeof(control[k]);
                cm = CMSG_FIRSTHDR(&msgs[k].msg_hdr);
                cm->cmsg_level = SOL_UDP;
                cm->cmsg_type = UDP_SEGMENT;
                cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
                memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
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
        drained += drain_error_queue(fd);
        memcpy(d + DEST_DRAINED, &drained, 4);
    }
    return done;
}
