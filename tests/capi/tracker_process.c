#define _POSIX_C_SOURCE 200809L
#include "tracker_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Reads one line from `fd` into `line` (at most `size` - 1 characters), waiting at most until
 * `deadline`. Returns 0 when a whole line came. */
static int read_line(int fd, char* line, size_t size, double deadline) {
  size_t used = 0;
  while (used + 1 < size) {
    const double left = deadline - now_s();
    if (left <= 0) return -1;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    const int ready = poll(&p, 1, (int)(left * 1000) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return -1;
    char c;
    const ssize_t got = read(fd, &c, 1);
    if (got <= 0) return -1; /* the tracker ended */
    if (c == '\n') {
      line[used] = '\0';
      return 0;
    }
    line[used++] = c;
  }
  return -1;
}

int tracker_start(tracker_process* tracker, const char* program, char* const argv[],
                  const char* log_path, int timeout_s) {
  memset(tracker, 0, sizeof *tracker);
  int out[2];
  if (pipe(out) != 0) {
    perror("pipe");
    return -1;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return -1;
  }
  if (pid == 0) {
    const int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (log >= 0) dup2(log, STDERR_FILENO);
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    execv(program, argv);
    perror("execv");
    _exit(127);
  }
  close(out[1]);
  tracker->pid = pid;
  char line[256];
  const int got = read_line(out[0], line, sizeof line, now_s() + timeout_s);
  tracker->out = out[0];
  char address[64], key[65];
  if (got != 0 || sscanf(line, "listening on %63s as %64s", address, key) != 2) {
    fprintf(stderr, "loco-tracker did not say where it listens (%s); its log: %s\n",
            got == 0 ? line : "no line in time", log_path);
    tracker_stop(tracker, 5);
    return -1;
  }
  memcpy(tracker->address, address, sizeof address);
  memcpy(tracker->public_key, key, sizeof key);
  return 0;
}

int tracker_stop(tracker_process* tracker, int timeout_s) {
  if (tracker->pid <= 0) return -1;
  kill(tracker->pid, SIGTERM);
  int status = 0;
  const double deadline = now_s() + timeout_s;
  for (;;) {
    const pid_t done = waitpid(tracker->pid, &status, WNOHANG);
    if (done == tracker->pid) break;
    if (now_s() > deadline) {
      kill(tracker->pid, SIGKILL);
      waitpid(tracker->pid, &status, 0);
      break;
    }
    const struct timespec tick = {.tv_sec = 0, .tv_nsec = 20 * 1000 * 1000};
    nanosleep(&tick, NULL);
  }
  tracker->pid = 0;
  close(tracker->out);
  return status;
}
