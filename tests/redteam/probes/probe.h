/* Shared helpers for the red-team probes (tests/redteam/probes/rowNN_*.c).
 *
 * Every probe runs *inside* a corral sandbox, attempts one attack and prints one line per
 * check:   "SAFE rowNN <what>: <detail>"   or   "UNSAFE rowNN <what>: <detail>"
 * and exits 0 when every check was safe, 1 otherwise (see probe_exit()). redteam_test.cc
 * parses these lines; a probe that dies half-way prints too few SAFE lines and fails there.
 */
#ifndef CORRAL_REDTEAM_PROBE_H
#define CORRAL_REDTEAM_PROBE_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int probe_unsafe_count;

static void probe_line(int safe, const char *row, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void probe_line(int safe, const char *row, const char *what, const char *fmt, ...) {
  char detail[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  if (!safe) probe_unsafe_count++;
  printf("%s %s %s: %s\n", safe ? "SAFE" : "UNSAFE", row, what, detail);
  fflush(stdout);
}

#define SAFE(row, what, ...) probe_line(1, row, what, __VA_ARGS__)
#define UNSAFE(row, what, ...) probe_line(0, row, what, __VA_ARGS__)

/* Informational line (not counted either way). */
#define NOTE(row, ...)          \
  do {                          \
    printf("NOTE %s ", row);    \
    printf(__VA_ARGS__);        \
    printf("\n");               \
    fflush(stdout);             \
  } while (0)

/* A call that must fail: `r` is its return value (-1/negative = failed, errno set).
 * Safe when it failed with one of the listed errnos (0-terminated list); it is unsafe when
 * it succeeded, and also when it failed for an unexpected reason (the defence under test
 * may not be what stopped it, so a human should look). */
static int errno_in(int e, const int *list) {
  for (; *list; ++list)
    if (*list == e) return 1;
  return 0;
}

__attribute__((unused)) static void expect_fail_list(const char *row, const char *what, long r, int err, const int *ok) {
  if (r >= 0) {
    UNSAFE(row, what, "succeeded (returned %ld)", r);
  } else if (errno_in(err, ok)) {
    SAFE(row, what, "%s", strerrorname_np(err) ? strerrorname_np(err) : strerror(err));
  } else {
    UNSAFE(row, what, "failed with unexpected errno %d (%s)", err, strerror(err));
  }
}

/* EXPECT_FAIL(row, what, call, ERRNO...) */
#define EXPECT_FAIL(row, what, call, ...)               \
  do {                                                  \
    errno = 0;                                          \
    long r_ = (long)(call);                             \
    int e_ = errno;                                     \
    static const int ok_[] = {__VA_ARGS__, 0};          \
    expect_fail_list(row, what, r_, e_, ok_);           \
  } while (0)

__attribute__((unused)) static int probe_exit(void) {
  fflush(stdout);
  return probe_unsafe_count ? 1 : 0;
}

#endif
