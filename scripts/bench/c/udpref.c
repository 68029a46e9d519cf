/*
 * udpref: the fastest plain-socket UDP path this harness knows, as a reference for lossprobe's own.
 *
 * The sender hands the kernel up to 64 datagrams per sendmsg with UDP_SEGMENT (GSO), round robin over the
 * flows' sockets, as fast as it can; the receiver reads every flow's socket with recvmmsg (64 at a time) from
 * one epoll loop. Each datagram carries its flow's 64-bit sequence number in its first 8 bytes and the receiver
 * counts what arrived, what is missing (highest + 1 - received) and what came out of order: a reference that
 * checks nothing would not be a fair one. No pacing, no timestamps, no per-message authentication: that is
 * lossprobe's extra work, and the ratio against this program is what it costs.
 *
 * With --auth 1 it does lossprobe's per-message authentication too, so the ratio against it leaves out the cost of
 * the cryptography itself: every datagram starts with lossprobe's 48-byte header, six 64-bit words big-endian
 * (docs/wire-format.md): magic/version/kind/flow, run id/step/length, the flow's sequence number, the send time
 * twice (one clock read per sendmsg, as lossprobe reads its clock once per cycle) and the SipHash-2-4 tag of the
 * first five under a random 128-bit key (MessageAuth.tag: the words as SipHash's message words, then the length
 * block). The receiver verifies every datagram's tag before it counts it; one that fails (or is shorter than the
 * header) is counted in badTag and not received. 'both' draws the key from getrandom() (or takes --key); separate
 * send and recv processes need the same --key HEX32 (16 bytes in hex, OpenSSL's hexkey order: k0 is the first 8
 * bytes little-endian, as MessageAuth's wrapped key). --size is at least 48 then.
 *
 *   udpref both --addr 127.0.0.1 --port 31700 --flows 48 --size 64 --seconds 5
 *   udpref recv --addr 198.18.0.1 --port 31700 --flows 48 --seconds 7    (then, on the sending host:)
 *   udpref send --addr 198.18.0.1 --port 31700 --flows 48 --size 64 --seconds 5
 *
 * With --gro 1 the receiving sockets have UDP_GRO on: the kernel queues a GSO send whole and one read returns it,
 * cut here into its datagrams by the segment size the UDP_GRO control message gives (16 reads of 64 KiB a call),
 * every datagram's sequence still checked. That is the reference for lossprobe with UDP_GRO (udp.gro=auto at max).
 *
 * Prints one JSON object per role on stdout. Bounded: the sender stops after --seconds, the receiver after
 * --seconds plus one second of silence at most. Built by scripts/bench/run.sh with gcc -O2.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#define GRO_SLOT 65536
#define GRO_BATCH 16
#define BATCH 64
#define MAX_FLOWS 1024
#define HEADER 48
#define MAGIC 0x4C505242ULL /* 'LPRB' */
#define RUN_ID 0x75647266ULL /* a constant: one run */

struct options {
    const char *addr;
    int port, flows, size, gso, gro, auth;
    uint64_t k0, k1; /* the SipHash key with --auth 1 */
    double seconds;
};

/* ---- SipHash-2-4 (Aumasson and Bernstein), over 64-bit message words as MessageAuth.tag feeds it ---- */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                                  \
    do {                                                                                                          \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);                                                \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                                                    \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                                                    \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);                                                \
    } while (0)

/*
 * The tag of a header's first five words: SipHash-2-4 of their 40 bytes in little-endian order under the key
 * (k0, k1), each word one message block (two rounds), then the last block with the length 40 in its top byte and
 * no bytes left over, then four finalisation rounds.
 */
static uint64_t sip_tag(uint64_t k0, uint64_t k1, const uint64_t w[5]) {
    uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
    for (int i = 0; i <= 5; i++) {
        uint64_t m = i < 5 ? w[i] : 40ULL << 56;
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* The header's word i (big-endian on the wire) and its writer. */
static inline uint64_t get_word(const char *p, int i) {
    uint64_t v;
    memcpy(&v, p + 8 * i, sizeof v);
    return be64toh(v);
}

static inline void put_word(char *p, int i, uint64_t v) {
    v = htobe64(v);
    memcpy(p + 8 * i, &v, sizeof v);
}

/* The constant first two words of flow f's messages: magic, version 2, kind 1 (data), flow id; run id, step 0,
 * the message length. */
static inline uint64_t word0(int f) {
    return MAGIC << 32 | 2ULL << 24 | 1ULL << 16 | (uint64_t) (f & 0xFFFF);
}

static inline uint64_t word1(int size) {
    return RUN_ID << 32 | (uint64_t) (size & 0xFFFF);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static struct sockaddr_in address(const char *addr, int port) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    if (inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
        fprintf(stderr, "udpref: not an IPv4 address: %s\n", addr);
        exit(2);
    }
    return a;
}

/* ---- receiver ---- */

struct rx_result {
    uint64_t received, missing, reordered, calls, bad_tag;
    double seconds;
};

static void *receive(void *arg) {
    struct options *o = arg;
    static struct rx_result r;
    int fds[MAX_FLOWS];
    uint64_t next[MAX_FLOWS], got[MAX_FLOWS];
    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    for (int i = 0; i < o->flows; i++) {
        fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
        if (fds[i] < 0) die("socket");
        int buf = 4 << 20;
        setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
        int one = 1;
        if (o->gro && setsockopt(fds[i], IPPROTO_UDP, UDP_GRO, &one, sizeof one) < 0) die("UDP_GRO");
        struct sockaddr_in a = address(o->addr, o->port + i);
        if (bind(fds[i], (struct sockaddr *) &a, sizeof a) < 0) die("bind");
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t) i};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) < 0) die("epoll_ctl");
        next[i] = 0;
        got[i] = 0;
    }
    int batch = o->gro ? GRO_BATCH : BATCH;
    size_t slot = o->gro ? GRO_SLOT : 2048;
    char *bufs = malloc((size_t) batch * slot);
    static char controls[BATCH][CMSG_SPACE(sizeof(int))];
    struct mmsghdr msgs[BATCH];
    struct iovec iovs[BATCH];
    if (!bufs) die("malloc");
    for (int k = 0; k < batch; k++) {
        iovs[k].iov_base = bufs + (size_t) k * slot;
        iovs[k].iov_len = slot;
        memset(&msgs[k], 0, sizeof msgs[k]);
        msgs[k].msg_hdr.msg_iov = &iovs[k];
        msgs[k].msg_hdr.msg_iovlen = 1;
    }
    double start = -1, last = now_s(), deadline = now_s() + o->seconds + 30;
    struct epoll_event events[64];
    for (;;) {
        int n = epoll_wait(ep, events, 64, 100);
        double t = now_s();
        if (n < 0 && errno != EINTR) die("epoll_wait");
        if (n <= 0) {
            /* done: one second of silence after traffic, or nothing at all before the deadline */
            if ((start >= 0 && t - last > 1.0) || t > deadline) break;
            continue;
        }
        for (int e = 0; e < n; e++) {
            int f = (int) events[e].data.u32;
            int got_now;
            for (;;) {
                if (o->gro) {
                    for (int k = 0; k < batch; k++) { /* the kernel shortens these to what it wrote */
                        msgs[k].msg_hdr.msg_control = controls[k];
                        msgs[k].msg_hdr.msg_controllen = sizeof controls[k];
                    }
                }
                if ((got_now = recvmmsg(fds[f], msgs, batch, MSG_DONTWAIT, NULL)) <= 0) break;
                r.calls++;
                for (int k = 0; k < got_now; k++) {
                    const char *data = bufs + (size_t) k * slot;
                    size_t len = msgs[k].msg_len, seg = len;
                    if (o->gro) { /* a coalesced read: datagrams of seg bytes each, the last maybe shorter */
                        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[k].msg_hdr); c;
                             c = CMSG_NXTHDR(&msgs[k].msg_hdr, c)) {
                            if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
                                int g;
                                memcpy(&g, CMSG_DATA(c), sizeof g);
                                if (g > 0 && (size_t) g < len) seg = (size_t) g;
                            }
                        }
                    }
                    size_t off = 0;
                    do { /* one datagram of seg bytes (the last maybe shorter); an empty read is one too
                          * ('continue' goes to the condition, off already moved on) */
                        uint64_t seq;
                        size_t n = len - off < seg ? len - off : seg;
                        int has_seq = n >= sizeof seq;
                        if (o->auth) { /* the tag first: a datagram that fails it is not received */
                            const char *h = data + off;
                            uint64_t w[5];
                            if (n < HEADER) {
                                r.bad_tag++;
                                off += seg;
                                continue;
                            }
                            for (int j = 0; j < 5; j++) w[j] = get_word(h, j);
                            if (sip_tag(o->k0, o->k1, w) != get_word(h, 5)) {
                                r.bad_tag++;
                                off += seg;
                                continue;
                            }
                            seq = w[2];
                        } else if (has_seq) {
                            memcpy(&seq, data + off, sizeof seq);
                        }
                        r.received++;
                        got[f]++;
                        if (has_seq) {
                            if (seq < next[f]) {
                                r.reordered++;
                            } else {
                                next[f] = seq + 1;
                            }
                        }
                        off += seg;
                    } while (off < len);
                }
            }
        }
        if (start < 0) start = t;
        last = now_s();
    }
    for (int i = 0; i < o->flows; i++) {
        r.missing += next[i] > got[i] ? next[i] - got[i] : 0;
        close(fds[i]);
    }
    free(bufs);
    r.seconds = start < 0 ? 0 : last - start;
    close(ep);
    return &r;
}

/* ---- sender ---- */

struct tx_result {
    uint64_t sent, refused, calls;
    double seconds;
};

static struct tx_result send_all(struct options *o) {
    struct tx_result r = {0};
    int fds[MAX_FLOWS];
    uint64_t seq[MAX_FLOWS];
    for (int i = 0; i < o->flows; i++) {
        fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
        if (fds[i] < 0) die("socket");
        int buf = 4 << 20;
        setsockopt(fds[i], SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
        struct sockaddr_in a = address(o->addr, o->port + i);
        if (connect(fds[i], (struct sockaddr *) &a, sizeof a) < 0) die("connect");
        seq[i] = 0;
    }
    int segments = o->gso > 0 ? o->gso : 1;
    char *payload = calloc((size_t) segments, (size_t) o->size);
    char control[CMSG_SPACE(sizeof(uint16_t))];
    if (!payload) die("calloc");
    double start = now_s(), end = start + o->seconds;
    int f = 0;
    for (;;) {
        /* one clock read per sendmsg: the loop's end, and with --auth 1 the headers' send time */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (ts.tv_sec + ts.tv_nsec / 1e9 >= end) break;
        if (o->auth) {
            uint64_t w[5] = {word0(f), word1(o->size), 0, 0, 0};
            w[3] = w[4] = (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
            for (int k = 0; k < segments; k++) {
                char *h = payload + (size_t) k * o->size;
                w[2] = seq[f]++;
                for (int j = 0; j < 5; j++) put_word(h, j, w[j]);
                put_word(h, 5, sip_tag(o->k0, o->k1, w));
            }
        } else {
            for (int k = 0; k < segments; k++) {
                memcpy(payload + (size_t) k * o->size, &seq[f], sizeof seq[f]);
                seq[f]++;
            }
        }
        struct iovec iov = {.iov_base = payload, .iov_len = (size_t) segments * o->size};
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
        if (o->gso > 0) {
            memset(control, 0, sizeof control);
            m.msg_control = control;
            m.msg_controllen = sizeof control;
            struct cmsghdr *c = CMSG_FIRSTHDR(&m);
            c->cmsg_level = SOL_UDP;
            c->cmsg_type = UDP_SEGMENT;
            c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            uint16_t seg = (uint16_t) o->size;
            memcpy(CMSG_DATA(c), &seg, sizeof seg);
        }
        r.calls++;
        if (sendmsg(fds[f], &m, 0) < 0) {
            /* counted, not retried: the sequence numbers stay consumed, so the receiver sees them missing */
            r.refused += segments;
        } else {
            r.sent += segments;
        }
        f = (f + 1) % o->flows;
    }
    r.seconds = now_s() - start;
    for (int i = 0; i < o->flows; i++) close(fds[i]);
    free(payload);
    return r;
}

static void print_tx(struct options *o, struct tx_result *t) {
    printf("{\"role\":\"send\",\"flows\":%d,\"size\":%d,\"gso\":%d,\"auth\":%d,\"sent\":%llu,"
           "\"refused\":%llu,\"calls\":%llu,\"seconds\":%.3f,\"sentPerS\":%.0f}\n", o->flows, o->size, o->gso,
           o->auth, (unsigned long long) t->sent, (unsigned long long) t->refused, (unsigned long long) t->calls,
           t->seconds, t->seconds > 0 ? t->sent / t->seconds : 0);
}

static void print_rx(struct options *o, struct rx_result *r, double window_s) {
    printf("{\"role\":\"recv\",\"flows\":%d,\"gro\":%d,\"auth\":%d,\"received\":%llu,\"missing\":%llu,"
           "\"reordered\":%llu,\"badTag\":%llu,\"calls\":%llu,\"seconds\":%.3f,\"receivedPerS\":%.0f}\n",
           o->flows, o->gro, o->auth, (unsigned long long) r->received, (unsigned long long) r->missing,
           (unsigned long long) r->reordered, (unsigned long long) r->bad_tag, (unsigned long long) r->calls,
           r->seconds, window_s > 0 ? r->received / window_s : 0);
}

int main(int argc, char **argv) {
    struct options o = {.addr = "127.0.0.1", .port = 31700, .flows = 1, .size = 64, .gso = BATCH, .seconds = 5};
    if (argc < 2) {
        fprintf(stderr, "usage: udpref both|send|recv [--addr A] [--port P] [--flows N] [--size B] "
                        "[--gso SEGMENTS|0] [--gro 0|1] [--auth 0|1] [--key HEX32] [--seconds S]\n");
        return 2;
    }
    const char *role = argv[1], *key = NULL;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--addr")) o.addr = argv[i + 1];
        else if (!strcmp(argv[i], "--port")) o.port = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--flows")) o.flows = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--size")) o.size = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--gso")) o.gso = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--gro")) o.gro = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--auth")) o.auth = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--key")) key = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds")) o.seconds = atof(argv[i + 1]);
        else {
            fprintf(stderr, "udpref: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (o.flows < 1 || o.flows > MAX_FLOWS || o.size < 8 || o.size > 1472 || o.gso < 0 || o.gso > BATCH
        || o.gro < 0 || o.gro > 1 || o.seconds <= 0 || o.seconds > 600 || o.port < 1
        || o.port + o.flows > 65536) {
        fprintf(stderr, "udpref: flows 1-%d, size 8-1472, gso 0-%d, gro 0 or 1, seconds up to 600\n", MAX_FLOWS,
                BATCH);
        return 2;
    }
    if (o.auth < 0 || o.auth > 1 || (o.auth && o.size < HEADER)) {
        fprintf(stderr, "udpref: auth 0 or 1; with --auth 1 the size is at least %d (lossprobe's header)\n", HEADER);
        return 2;
    }
    if (o.auth) {
        uint8_t k[16];
        if (key) {
            if (strlen(key) != 32 || strspn(key, "0123456789abcdefABCDEF") != 32) {
                fprintf(stderr, "udpref: --key is 32 hexadecimal digits\n");
                return 2;
            }
            for (int i = 0; i < 16; i++) {
                char byte[3] = {key[2 * i], key[2 * i + 1], 0};
                k[i] = (uint8_t) strtoul(byte, NULL, 16);
            }
        } else if (strcmp(role, "both")) {
            fprintf(stderr, "udpref: send and recv with --auth 1 need the same --key HEX32 on both\n");
            return 2;
        } else if (getrandom(k, sizeof k, 0) != (ssize_t) sizeof k) {
            die("getrandom");
        }
        memcpy(&o.k0, k, 8); /* little-endian, as OpenSSL's hexkey and MessageAuth read a key's bytes */
        memcpy(&o.k1, k + 8, 8);
        o.k0 = le64toh(o.k0);
        o.k1 = le64toh(o.k1);
    }
    if (!strcmp(role, "recv")) {
        struct rx_result *r = receive(&o);
        print_rx(&o, r, r->seconds);
    } else if (!strcmp(role, "send")) {
        struct tx_result t = send_all(&o);
        print_tx(&o, &t);
    } else if (!strcmp(role, "both")) {
        pthread_t rx;
        if (pthread_create(&rx, NULL, receive, &o) != 0) die("pthread_create");
        usleep(200000); /* the receiver binds first; a start-up gap only, not a wait for a condition in a test */
        struct tx_result t = send_all(&o);
        void *res;
        pthread_join(rx, &res);
        print_tx(&o, &t);
        /* per second of the sender's window, so the figure compares with lossprobe's achieved receive rate */
        print_rx(&o, res, t.seconds);
    } else {
        fprintf(stderr, "udpref: role must be both, send or recv\n");
        return 2;
    }
    return 0;
}
