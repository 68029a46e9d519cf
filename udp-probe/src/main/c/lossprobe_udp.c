/*
 * lossprobe's small native piece for the UDP transport (io.lossprobe.udp.NativeUdp): what Java 17 and Netty's
 * epoll transport cannot do.
 *
 *  - kernel receive timestamps: Netty's recvmmsg passes no control buffer, so SO_TIMESTAMPNS stamps never reach
 *    Java. readStamped0 reads the sockets of one epoll set with recvmmsg and returns, per datagram, the kernel's
 *    stamp as the kernel took it (CLOCK_REALTIME), and with them two samples of CLOCK_REALTIME - CLOCK_MONOTONIC
 *    (System.nanoTime's clock on Linux), one before the wait and one after the reads: Java converts the stamps
 *    (RealtimeToMonotonic), across any step of the realtime clock the samples reveal;
 *  - per-thread settings: prctl(PR_SET_TIMERSLACK), sched_setaffinity and sched_setattr act on the calling thread
 *    only;
 *  - the batched send path: lossprobe_udp_send.c, built into the same library.
 *
 * Every function returns a value >= 0 or -errno; nothing here allocates, blocks longer than asked, or keeps state.
 * Built by udp-probe's pom (gcc, when present); without it lossprobe falls back and says so in its results.
 */
#define _GNU_SOURCE
#include <jni.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include "lossprobe_udp.h"

#ifndef SO_TIMESTAMPNS
#define SO_TIMESTAMPNS 35
#endif
#ifndef SCM_TIMESTAMPNS
#define SCM_TIMESTAMPNS SO_TIMESTAMPNS
#endif

/*
 * The meta buffer: MAX_BATCH records, one a datagram, then the read's two clock samples. Every name and value here
 * is mirrored by NativeUdp in Java, and layout0 lists them for the test that holds the two together
 * (NativeLayoutTest): change both, or that test fails.
 */
#define META_BYTES 48
#define META_TOKEN 0        /* int: the socket's token given to epollAdd0 */
#define META_LENGTH 4       /* int: bytes received (a slot's size when the datagram was longer) */
#define META_REALTIME_NS 8  /* long: the kernel's stamp, CLOCK_REALTIME, or NO_STAMP when the kernel gave none */
#define META_FAMILY 16    /* short: AF_INET or AF_INET6 */
#define META_PORT 18      /* unsigned short, host order */
#define META_ADDR 24      /* 4 or 16 bytes, network order */
#define META_SEGMENT 40   /* int: with UDP_GRO, the size of the coalesced datagrams it holds (the last may be
                             shorter); 0 for one datagram */
#define META_TOS 44       /* int: the TOS / traffic-class byte the datagram arrived with (IP_RECVTOS,
                             IPV6_RECVTCLASS), or NO_TOS when the kernel gave none */
#define NO_TOS (-1)
#define SEGMENT_TRUNCATED (-1) /* META_SEGMENT of a datagram cut to its slot (MSG_TRUNC) */
#define NO_STAMP INT64_MIN
#define MAX_BATCH 128
/* Where the read's samples of CLOCK_REALTIME - CLOCK_MONOTONIC sit: after the records, one sample each. */
#define META_SAMPLE_BEFORE (MAX_BATCH * META_BYTES) /* taken before the wait */
#define META_SAMPLE_AFTER (META_SAMPLE_BEFORE + SAMPLE_BYTES) /* after the last read: absent when nothing was read */
#define META_BUFFER_BYTES (META_SAMPLE_AFTER + SAMPLE_BYTES)
#define SAMPLE_BYTES 24
#define SAMPLE_OFFSET_NS 0  /* long: CLOCK_REALTIME - CLOCK_MONOTONIC, the midpoint of the tightest try */
#define SAMPLE_WINDOW_NS 8  /* long: that try's two realtime reads apart (the offset is within half of it); -1: no
                               sample */
#define SAMPLE_AT_NS 16     /* long: CLOCK_MONOTONIC when the sample was taken */

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define MAX_EVENTS 64
#define WAKE_TOKEN (-1)
/* META_LENGTH of a record that says a socket's error queue was emptied; META_REALTIME_NS holds how many it held. */
#define ERRQUEUE_DRAINED (-100000)

static inline int64_t ns_of(const struct timespec *t) {
    return (int64_t) t->tv_sec * 1000000000LL + t->tv_nsec;
}

/*
 * Writes a sample of CLOCK_REALTIME minus CLOCK_MONOTONIC at m (SAMPLE_*): a monotonic read between two realtime
 * reads, the midpoint taken, the tightest of up to four tries. The offset is within half the window of the truth: a
 * thread preempted (or a VM exit) between the reads widens its try's window, so the tightest try bounds the error.
 * A try whose realtime reads go backwards saw the realtime clock stepped back between them: no bound, skipped. A
 * step forward inside a try only widens it.
 */
static void sample_offset(char *m) {
    int64_t best = 0, best_window = -1, at = 0;
    int i;
    for (i = 0; i < 4 || (best_window < 0 && i < 16); i++) {
        struct timespec r1, mono, r2;
        clock_gettime(CLOCK_REALTIME, &r1);
        clock_gettime(CLOCK_MONOTONIC, &mono);
        clock_gettime(CLOCK_REALTIME, &r2);
        int64_t window = ns_of(&r2) - ns_of(&r1);
        if (window >= 0 && (best_window < 0 || window < best_window)) {
            best_window = window;
            best = ns_of(&r1) + window / 2 - ns_of(&mono);
            at = ns_of(&mono);
        }
        if (best_window >= 0 && best_window <= 100) {
            break; /* as good as these clocks get: tens of nanoseconds per read */
        }
    }
    memcpy(m + SAMPLE_OFFSET_NS, &best, 8);
    memcpy(m + SAMPLE_WINDOW_NS, &best_window, 8);
    memcpy(m + SAMPLE_AT_NS, &at, 8);
}

static void no_sample(char *m) {
    int64_t none = -1;
    memset(m, 0, SAMPLE_BYTES);
    memcpy(m + SAMPLE_WINDOW_NS, &none, 8);
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

/* struct sched_attr of linux/sched/types.h (its first version: 48 bytes); glibc 2.36 does not declare it. */
struct lossprobe_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};

/*
 * Asks the scheduler for a slice of ns for the calling thread, keeping its policy (SCHED_OTHER) and nice. Since
 * Linux 6.12 (EEVDF) sched_runtime is a fair task's requested slice (clamped to 0.1-100 ms): a shorter slice gives
 * an earlier virtual deadline, so the thread, woken, preempts a CPU-bound thread at once instead of waiting for the
 * end of that thread's slice or the next tick. No privilege is needed. Older kernels take the call and ignore the
 * value (slice0 then reads 0).
 */
JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_setSlice0(JNIEnv *env, jclass c, jlong ns) {
    struct lossprobe_sched_attr attr;
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t) syscall(SYS_gettid));
    if (nice == -1 && errno != 0) {
        return -errno;
    }
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.sched_policy = SCHED_OTHER;
    attr.sched_nice = nice;
    attr.sched_runtime = (uint64_t) ns;
    return syscall(SYS_sched_setattr, 0, &attr, 0) == 0 ? 0 : -errno;
}

/* The calling thread's slice in ns as the kernel reports it (0: a kernel without custom slices), or -errno. */
JNIEXPORT jlong JNICALL Java_io_lossprobe_udp_NativeUdp_slice0(JNIEnv *env, jclass c) {
    struct lossprobe_sched_attr attr;
    memset(&attr, 0, sizeof(attr));
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) != 0) {
        return -errno;
    }
    return (jlong) attr.sched_runtime;
}

JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_currentCpu0(JNIEnv *env, jclass c) {
    int cpu = sched_getcpu();
    return cpu >= 0 ? cpu : -errno;
}

JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_enableTimestamps0(JNIEnv *env, jclass c, jint fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) == 0 ? 0 : -errno;
}

/*
 * Asks a socket for the class each datagram arrives with: IP_RECVTOS, and IPV6_RECVTCLASS as well on an AF_INET6
 * socket (ipv6 nonzero), whose IPv4 arrivals come with IP_TOS.
 */
JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_enableTos0(JNIEnv *env, jclass c, jint fd, jint ipv6) {
    int on = 1;
    if (ipv6 && setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &on, sizeof(on)) != 0) {
        return -errno;
    }
    if (setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on)) != 0 && !ipv6) {
        return -errno;
    }
    return 0;
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


static void put_meta(char *m, int token, int length, int64_t realtime_ns, int segment, int tos,
                     const struct sockaddr_in6 *from) {
    int16_t family = (int16_t) from->sin6_family;
    uint16_t port;
    memset(m, 0, META_BYTES);
    memcpy(m + META_TOKEN, &token, 4);
    memcpy(m + META_LENGTH, &length, 4);
    memcpy(m + META_REALTIME_NS, &realtime_ns, 8);
    memcpy(m + META_SEGMENT, &segment, 4);
    memcpy(m + META_TOS, &tos, 4);
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
 * Waits up to timeoutNs (0: not at all) for the epoll set: epoll_pwait2, whose timeout is in nanoseconds (Linux 5.11
 * and later), so a responder can sleep until a few microseconds before its next request is due; epoll_wait with the
 * timeout rounded up to milliseconds where the kernel has no epoll_pwait2.
 */
static int wait_ready(int epfd, struct epoll_event *events, jlong timeoutNs) {
#ifdef SYS_epoll_pwait2
    struct timespec timeout = {(time_t) (timeoutNs / 1000000000L), (long) (timeoutNs % 1000000000L)};
    int ready = (int) syscall(SYS_epoll_pwait2, epfd, events, MAX_EVENTS, &timeout, NULL, 0);
    if (ready >= 0 || errno != ENOSYS) {
        return ready;
    }
#endif
    return epoll_wait(epfd, events, MAX_EVENTS, (int) ((timeoutNs + 999999) / 1000000));
}

/*
 * Waits up to timeoutNs (0: just looks; see wait_ready) for any socket of epfd, then reads each ready socket with one
 * recvmmsg (MSG_DONTWAIT) into consecutive slots of slotBytes until maxDatagrams (with UDP_GRO on the socket a slot may
 * hold several coalesced datagrams: META_SEGMENT says their size). Returns the datagrams read (their records
 * in meta, their bytes in the slots), 0 when none, or -errno of a failed wait. Every call samples the clocks'
 * offset before its wait (META_SAMPLE_BEFORE), and after its reads when it read anything (META_SAMPLE_AFTER): the
 * datagrams' stamps stay the kernel's realtime ones, converted in Java, where consecutive samples bracket any step
 * of the realtime clock. A socket whose read fails with
 * anything but EAGAIN is reported as a record of length -errno (its pending error, e.g. an ICMP port unreachable),
 * so the caller can count it. A socket reporting EPOLLERR has its error queue (ICMP errors queued by IP_RECVERR)
 * emptied first, reported as one record of length ERRQUEUE_DRAINED: left there, it would keep this level-triggered
 * wait returning at once. An eventfd added with token -1 (a wake-up) is drained and reported as nothing.
 */
JNIEXPORT jint JNICALL Java_io_lossprobe_udp_NativeUdp_readStamped0(JNIEnv *env, jclass c, jint epfd,
                                                                     jlong timeoutNs, jobject buffer, jint slotBytes,
                                                                     jint maxDatagrams, jobject meta) {
    char *slots = (char *) (*env)->GetDirectBufferAddress(env, buffer);
    char *records = (char *) (*env)->GetDirectBufferAddress(env, meta);
    struct epoll_event events[MAX_EVENTS];
    struct mmsghdr msgs[MAX_BATCH];
    struct iovec iov[MAX_BATCH];
    struct sockaddr_in6 from[MAX_BATCH];
    char control[MAX_BATCH][CMSG_SPACE(sizeof(struct timespec)) + 2 * CMSG_SPACE(sizeof(int))];
    int ready, i, total = 0;

    if (slots == NULL || records == NULL || (*env)->GetDirectBufferCapacity(env, meta) < META_BUFFER_BYTES) {
        return -EINVAL;
    }
    if (slotBytes <= 0 || maxDatagrams <= 0 || timeoutNs < 0) {
        return -EINVAL;
    }
    if (maxDatagrams > MAX_BATCH) {
        maxDatagrams = MAX_BATCH;
    }
    if ((*env)->GetDirectBufferCapacity(env, buffer) < (jlong) maxDatagrams * slotBytes) {
        return -EINVAL;
    }
    sample_offset(records + META_SAMPLE_BEFORE);
    no_sample(records + META_SAMPLE_AFTER);
    do {
        ready = wait_ready(epfd, events, timeoutNs);
    } while (ready < 0 && errno == EINTR && timeoutNs == 0);
    if (ready < 0) {
        return errno == EINTR ? 0 : -errno;
    }
    for (i = 0; i < ready && total < maxDatagrams; i++) {
        int token = (int) (uint32_t) events[i].data.u64;
        int fd = (int) (events[i].data.u64 >> 32);
        int got, k, room = maxDatagrams - total;
        if (token == WAKE_TOKEN) {
            uint64_t count;
            ssize_t drained = read(fd, &count, sizeof(count)); /* a wake-up: nothing to deliver */
            (void) drained;
            continue;
        }
        if (events[i].events & EPOLLERR) {
            int64_t queued = lossprobe_drain_error_queue(fd);
            if (queued > 0) {
                struct sockaddr_in6 none;
                memset(&none, 0, sizeof(none));
                put_meta(records + (size_t) total * META_BYTES, token, ERRQUEUE_DRAINED, queued, 0, NO_TOS, &none);
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
                put_meta(records + (size_t) total * META_BYTES, token, -errno, NO_STAMP, 0, NO_TOS, &none);
                total++;
            }
            continue;
        }
        for (k = 0; k < got; k++) {
            int64_t realtime_ns = NO_STAMP;
            int segment = 0, tos = NO_TOS;
            struct cmsghdr *cm;
            for (cm = CMSG_FIRSTHDR(&msgs[k].msg_hdr); cm != NULL; cm = CMSG_NXTHDR(&msgs[k].msg_hdr, cm)) {
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
                    struct timespec ts;
                    memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
                    realtime_ns = ns_of(&ts);
                } else if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
                    memcpy(&segment, CMSG_DATA(cm), sizeof(segment));
                } else if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS) {
                    tos = *(unsigned char *) CMSG_DATA(cm); /* one byte (ip_cmsg_recv_tos) */
                } else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_TCLASS) {
                    int tclass;
                    memcpy(&tclass, CMSG_DATA(cm), sizeof(tclass));
                    tos = tclass & 0xff;
                }
            }
            if (msgs[k].msg_hdr.msg_flags & MSG_TRUNC) {
                segment = SEGMENT_TRUNCATED; /* longer than its slot: cut by the kernel */
            }
            put_meta(records + (size_t) (total + k) * META_BYTES, token, (int) msgs[k].msg_len, realtime_ns, segment,
                     tos, &from[k]);
        }
        total += got;
    }
    if (total > 0) {
        sample_offset(records + META_SAMPLE_AFTER);
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

/* Every constant Java mirrors (NativeUdp), by name. */
#define MIRRORED(X) X(META_BYTES) X(META_TOKEN) X(META_LENGTH) X(META_REALTIME_NS) X(META_FAMILY) X(META_PORT) \
    X(META_ADDR) X(META_SEGMENT) X(META_TOS) X(NO_TOS) X(NO_STAMP) X(MAX_BATCH) X(META_SAMPLE_BEFORE) \
    X(META_SAMPLE_AFTER) X(META_BUFFER_BYTES) X(SAMPLE_BYTES) X(SAMPLE_OFFSET_NS) X(SAMPLE_WINDOW_NS) X(SAMPLE_AT_NS) \
    X(ERRQUEUE_DRAINED) X(WAKE_TOKEN) X(ENTRY_BYTES) X(ENTRY_PORT) X(ENTRY_OFFSET) X(ENTRY_LENGTH) X(ENTRY_SEGMENT) \
    X(ENTRY_RESULT) X(ENTRY_TOS)
#define APPEND_MIRRORED(name) \
    used += snprintf(text + used, sizeof(text) - used, "%s%s=%lld", used > 0 ? "," : "", #name, (long long) (name));

/*
 * The constants NativeUdp (and NativeBatchSender, the send table's ENTRY_*) mirrors, as this library was compiled with them: "NAME=value" joined by commas. Only the
 * test that holds the two together calls it (NativeLayoutTest).
 */
JNIEXPORT jstring JNICALL Java_io_lossprobe_udp_NativeUdp_layout0(JNIEnv *env, jclass c) {
    char text[1024];
    int used = 0;
    MIRRORED(APPEND_MIRRORED)
    return (*env)->NewStringUTF(env, text);
}
