/*
 * create_loop.c: the bare loop bench/metadata-vs-mdtest.sh measures iomatrix's file creation
 * against, and the maker of the tree its remover bench removes.
 *
 * open(O_CREAT|O_RDWR|O_CLOEXEC, 0664) and close(2) of N empty files with mdtest's names
 * (file.mdtest.0.0, file.mdtest.0.1, ...) in one folder, one at a time, with no statistics:
 * the clock (CLOCK_MONOTONIC) is read once before the first create and once after the last.
 * That is what mdtest's POSIX backend and iomatrix's local file system seam do per file
 * creation of an empty file (mdtest -w 0), without the timing of each operation, the
 * barriers or the bookkeeping; the ratio of iomatrix's file-create rate to this loop's is
 * what that bookkeeping costs.
 *
 * Usage:
 *   create_loop DIR N             create N files in DIR (it must exist and hold none of
 *                                 them); prints "FILES NANOSECONDS" (one line)
 *   create_loop -t FOLDERS DIR N  make FOLDERS folders d.0 .. d.{FOLDERS-1} in DIR and N
 *                                 files spread over them in turn (the tree the remover bench
 *                                 removes); prints the same line, the folders not counted
 *
 * Exit status: 0, or 1 with a message naming the file and the error.
 *
 * Build: gcc -O2 -o create_loop create_loop.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t whole(const char *text, const char *what) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-') {
        fprintf(stderr, "create_loop: %s '%s' is not a whole number\n", what, text);
        exit(1);
    }
    return v;
}

int main(int argc, char **argv) {
    uint64_t folders = 0;
    int at = 1;
    if (argc == 5 && strcmp(argv[1], "-t") == 0) {
        folders = whole(argv[2], "FOLDERS");
        at = 3;
    } else if (argc != 3) {
        fprintf(stderr, "usage: create_loop [-t FOLDERS] DIR N\n");
        return 1;
    }
    const char *dir = argv[at];
    uint64_t n = whole(argv[at + 1], "N");
    char path[4096];
    for (uint64_t f = 0; f < folders; f++) {
        snprintf(path, sizeof path, "%s/d.%" PRIu64, dir, f);
        if (mkdir(path, 0775) != 0) {
            fprintf(stderr, "create_loop: mkdir %s: %s\n", path, strerror(errno));
            return 1;
        }
    }
    uint64_t start = now_ns();
    for (uint64_t i = 0; i < n; i++) {
        if (folders)
            snprintf(path, sizeof path, "%s/d.%" PRIu64 "/file.mdtest.0.%" PRIu64, dir, i % folders, i);
        else
            snprintf(path, sizeof path, "%s/file.mdtest.0.%" PRIu64, dir, i);
        int fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0664);
        if (fd < 0 || close(fd) != 0) {
            fprintf(stderr, "create_loop: %s: %s\n", path, strerror(errno));
            return 1;
        }
    }
    uint64_t end = now_ns();
    printf("%" PRIu64 " %" PRIu64 "\n", n, end - start);
    return 0;
}
