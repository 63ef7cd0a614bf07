/* The floor of a schedule: the least CPU any client can spend per request when it sends them on a given
 * schedule, measured by a client that does nothing else. bench/floor.py builds it with `cc -O2` and runs it
 * beside shootout and its peer, so the table can say how much of a mode's cost is the schedule's rather than
 * shootout's.
 *
 *     probe HOST PORT CONNECTIONS SECONDS RATE GRAIN_US
 *
 * RATE 0 is the closed model: every connection sends its next request as soon as its response is in. RATE > 0 is
 * the open model: request k falls due at start + k/RATE and goes out on an idle connection. GRAIN_US 0 sends each
 * request at its due time to the nanosecond the kernel allows (the loop sleeps until exactly then); GRAIN_US > 0
 * wakes only on multiples of that many microseconds and sends everything due by then in a burst (a coarse clock
 * tick, as wrk2's millisecond timer does). It keeps no latencies and parses nothing but the end of each
 * response: it assumes one small response per request (`Content-Length`, no chunks), as the bench's nginx gives.
 * Output, one line: "requests N late_over_1ms M".
 *
 * Each connection is registered once with edge-triggered epoll; sleeps use epoll_pwait2's nanosecond timeout,
 * with the thread's timer slack at 1 ns so they end when asked.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { MOST = 4096 };

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: probe HOST PORT CONNECTIONS SECONDS RATE GRAIN_US\n");
        return 2;
    }
    const char *host = argv[1];
    int port = atoi(argv[2]), conns = atoi(argv[3]);
    double seconds = atof(argv[4]), rate = atof(argv[5]);
    int64_t grain = (int64_t)atoll(argv[6]) * 1000;
    if (conns < 1 || conns > MOST || seconds <= 0 || rate < 0 || grain < 0) {
        fprintf(stderr, "probe: CONNECTIONS 1..%d, SECONDS > 0, RATE >= 0, GRAIN_US >= 0\n", MOST);
        return 2;
    }
    char request[256];
    int request_len = snprintf(request, sizeof request, "GET / HTTP/1.1\r\nHost: %s:%d\r\n\r\n", host, port);

    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        fprintf(stderr, "probe: %s is not an IPv4 address\n", host);
        return 2;
    }
    /* Sleeps end at the due time itself, not up to the default 50 µs of timer slack later. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    int ep = epoll_create1(0);
    static int fd[MOST], busy[MOST], idle[MOST];
    int idle_count = 0;
    for (int i = 0; i < conns; i++) {
        fd[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (fd[i] < 0 || connect(fd[i], (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
        int one = 1;
        setsockopt(fd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u32 = (uint32_t)i};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &ev) < 0) die("epoll_ctl");
        idle[idle_count++] = i;
    }

    int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9);
    int64_t period = rate > 0 ? (int64_t)(1e9 / rate) : 0;
    int64_t next_due = start;
    long long sent = 0, done = 0, late = 0;
    char buffer[65536];
    struct epoll_event events[MOST];

    if (rate == 0) { /* closed: every connection starts at once */
        while (idle_count > 0) {
            int i = idle[--idle_count];
            if (write(fd[i], request, request_len) != request_len) die("write");
            busy[i] = 1;
            sent++;
        }
    }
    for (;;) {
        int64_t now = now_ns();
        if (now >= end) break;
        if (rate > 0) {
            /* Send everything due by now; with a grain, only at the grain's ticks. */
            while (next_due <= now && next_due < end && idle_count > 0) {
                int i = idle[--idle_count];
                if (write(fd[i], request, request_len) != request_len) die("write");
                busy[i] = 1;
                sent++;
                if (now - next_due > 1000000) late++;
                next_due += period;
            }
        }
        int64_t wake = end;
        if (rate > 0 && idle_count > 0 && next_due < wake) {
            wake = next_due;
            if (grain > 0) wake = start + ((wake - start + grain - 1) / grain) * grain;
        }
        int64_t left = wake - now_ns();
        if (left < 0) left = 0;
        struct timespec timeout = {.tv_sec = left / 1000000000, .tv_nsec = left % 1000000000};
        int n = epoll_pwait2(ep, events, MOST, &timeout, NULL);
        if (n < 0 && errno != EINTR) die("epoll_pwait2");
        for (int e = 0; e < n; e++) {
            int i = (int)events[e].data.u32;
            ssize_t got = read(fd[i], buffer, sizeof buffer);
            if (got <= 0) {
                fprintf(stderr, "probe: connection %d closed\n", i);
                return 1;
            }
            /* One small response per request: it is whole when its last byte (the body's "\n") is in. */
            if (busy[i] && buffer[got - 1] == '\n') {
                busy[i] = 0;
                done++;
                if (rate == 0) {
                    if (write(fd[i], request, request_len) != request_len) die("write");
                    busy[i] = 1;
                    sent++;
                } else {
                    idle[idle_count++] = i;
                }
            }
        }
    }
    printf("requests %lld late_over_1ms %lld sent %lld\n", done, late, sent);
    return 0;
}
