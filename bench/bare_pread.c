/*
 * bare_pread.c: the bare loop bench/pread-vs-bare.sh measures iomatrix against.
 *
 * 4 KiB pread(2)s at random 4 KiB-aligned offsets of one file, one at a time, for a fixed
 * time, with no statistics: the clock is read once before the first request and once after the
 * last, a timer signal (setitimer, SIGALRM) ends the loop, and the loop counts the requests.
 * The offsets are the ones iomatrix's access suite reads, in the same order: its generator
 * (xoshiro256++ seeded by splitmix64, rand_xoshiro's `Xoshiro256PlusPlus::seed_from_u64`, behind
 * `iomatrix_random::Generator` in crates/random), seeded with the cell's seed, one
 * below(positions) draw per request, offset = draw * 4096, positions = (size - 4096) / 4096 + 1.
 * With -x, the xorshift64* generator iomatrix's access runner had before its runs named their
 * generator (conditions.generator absent), for binaries built before that change.
 *
 * Usage:
 *   bare_pread [-c] [-x] [-s SEED] SIZE FILE SECONDS   read FILE for SECONDS; prints
 *                                                       "REQUESTS NANOSECONDS" (one line)
 *   bare_pread [-c] [-x] [-s SEED] -n N SIZE            print the first N offsets, one per line
 *
 *   SIZE   the file size in bytes, as iomatrix was given it (--file-size): it sets the
 *          number of positions; FILE must be at least that long
 *   -s     the cell's seed [default 0x12006: iomatrix's plan seed, rank 0, cell 0]
 *   -c     also draw the two coin flips iomatrix's loop drew per request before issue 16
 *          (read or write, then random or sequential: two below(100) draws before the offset),
 *          for binaries built before that change
 *   -x     draw with the old xorshift64* (a binary whose runs name no generator)
 *
 * Build: gcc -O2 -o bare_pread bare_pread.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define BS 4096

/* iomatrix's generator: xoshiro256++ (Blackman and Vigna's reference), its state filled by
 * splitmix64 from the seed, as rand_xoshiro's seed_from_u64 does; or, with old set, the
 * xorshift64* of iomatrix's access runner before its runs named their generator. */
typedef struct {
    uint64_t s[4];
    int old;
} rng_t;

static inline uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline rng_t rng_new(uint64_t seed, int old) {
    rng_t r = {{0, 0, 0, 0}, old};
    if (old) {
        r.s[0] = (seed * 0x9e3779b97f4a7c15ULL) | 1;
        return r;
    }
    for (int i = 0; i < 4; i++)
        r.s[i] = splitmix64(&seed);
    return r;
}

static inline uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(rng_t *r) {
    uint64_t *s = r->s;
    if (r->old) {
        s[0] ^= s[0] >> 12;
        s[0] ^= s[0] << 25;
        s[0] ^= s[0] >> 27;
        return s[0] * 0x2545f4914f6cdd1dULL;
    }
    uint64_t result = rotl(s[0] + s[3], 23) + s[0];
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in 0..n by multiply-shift, as Rng::below. */
static inline uint64_t rng_below(rng_t *r, uint64_t n) {
    return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* The next request's offset; with flips, first the two draws iomatrix's old loop made. */
static inline uint64_t next_offset(rng_t *r, uint64_t positions, int flips) {
    if (flips) {
        (void)rng_below(r, 100);
        (void)rng_below(r, 100);
    }
    return rng_below(r, positions) * BS;
}

static volatile sig_atomic_t stop;

static void on_alarm(int sig) {
    (void)sig;
    stop = 1;
}

static void usage(void) {
    fprintf(stderr, "usage: bare_pread [-c] [-x] [-s SEED] SIZE FILE SECONDS\n"
                    "       bare_pread [-c] [-x] [-s SEED] -n N SIZE\n");
    exit(2);
}

static uint64_t number(const char *text, const char *what) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0' || text[0] == '-') {
        fprintf(stderr, "bare_pread: %s '%s' is not a whole number\n", what, text);
        exit(2);
    }
    return v;
}

/* The timed loop. always_inline with constant old and flips: one loop each, no branch on them inside. */
static inline __attribute__((always_inline)) uint64_t
read_loop(int fd, char *buf, uint64_t seed, int old, uint64_t positions, int flips) {
    rng_t r = rng_new(seed, old);
    uint64_t done = 0;
    while (!stop) {
        uint64_t off = next_offset(&r, positions, flips);
        ssize_t got;
        do {
            got = pread(fd, buf, BS, (off_t)off);
        } while (got < 0 && errno == EINTR && !stop);
        if (got != BS) {
            if (got < 0 && errno == EINTR)
                break; /* the timer ended the loop inside this request: not counted */
            if (got < 0)
                fprintf(stderr, "bare_pread: pread at %" PRIu64 ": %s\n", off, strerror(errno));
            else
                fprintf(stderr, "bare_pread: short pread at %" PRIu64 ": %zd of %d bytes\n", off, got, BS);
            exit(1);
        }
        done++;
    }
    return done;
}

int main(int argc, char **argv) {
    uint64_t seed = 0x12006, list = 0;
    int flips = 0, old = 0, opt;
    while ((opt = getopt(argc, argv, "cxs:n:")) != -1) {
        switch (opt) {
        case 'c': flips = 1; break;
        case 'x': old = 1; break;
        case 's': seed = number(optarg, "seed"); break;
        case 'n': list = number(optarg, "-n"); break;
        default: usage();
        }
    }
    argc -= optind;
    argv += optind;
    if (argc != (list ? 1 : 3))
        usage();
    uint64_t size = number(argv[0], "size");
    if (size < BS) {
        fprintf(stderr, "bare_pread: size %" PRIu64 " is below one block (%d)\n", size, BS);
        return 2;
    }
    uint64_t positions = (size - BS) / BS + 1;

    if (list) {
        rng_t r = rng_new(seed, old);
        for (uint64_t i = 0; i < list; i++)
            printf("%" PRIu64 "\n", next_offset(&r, positions, flips));
        return 0;
    }

    uint64_t seconds = number(argv[2], "seconds");
    if (seconds < 1)
        usage();
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "bare_pread: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    off_t length = lseek(fd, 0, SEEK_END);
    if (length < 0 || (uint64_t)length < size) {
        fprintf(stderr, "bare_pread: %s is %lld bytes, shorter than the size %" PRIu64 "\n", argv[1],
                (long long)length, size);
        return 1;
    }
    char *buf;
    if (posix_memalign((void **)&buf, BS, BS) != 0) {
        fprintf(stderr, "bare_pread: out of memory\n");
        return 1;
    }
    memset(buf, 0, BS);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGALRM, &sa, NULL) != 0) {
        perror("bare_pread: sigaction");
        return 1;
    }
    struct itimerval timer = {.it_interval = {0, 0}, .it_value = {(time_t)seconds, 0}};
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    if (setitimer(ITIMER_REAL, &timer, NULL) != 0) {
        perror("bare_pread: setitimer");
        return 1;
    }
    /* Constant generator and flips in each call: four loops, no branch on either inside. */
    uint64_t done = old ? (flips ? read_loop(fd, buf, seed, 1, positions, 1) : read_loop(fd, buf, seed, 1, positions, 0))
                        : (flips ? read_loop(fd, buf, seed, 0, positions, 1) : read_loop(fd, buf, seed, 0, positions, 0));
    clock_gettime(CLOCK_MONOTONIC, &end);
    int64_t ns = (int64_t)(end.tv_sec - start.tv_sec) * 1000000000 + (end.tv_nsec - start.tv_nsec);
    printf("%" PRIu64 " %" PRId64 "\n", done, ns);
    close(fd);
    return 0;
}
