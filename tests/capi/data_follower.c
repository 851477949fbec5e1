/* A trainer peer that follows its data shard (loco_peer_data_shard), for
 * tests/programs/dataset_reassign_test.cpp: it joins with the peer config given, prints
 *   joined shard I of N
 *   files I: NAME NAME ...      (loco_peer_data_files' paths, by file name)
 * then runs rounds (a pause before each, in which the test may freeze it) until its data shard
 * changes, and prints
 *   shard I of N after C change(s)
 *   files I: NAME NAME ...
 * and leaves. Exit status 0; 1 with the failing call on stderr; 2 when no change came within
 * the rounds given. Its buffers are left as the join wrote them: Δ is 0, the rounds are a clock. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loco/loco.h"

static int failed(loco_peer* peer, const char* call) {
  fprintf(stderr, "%s: %s\n", call, peer ? loco_peer_last_error(peer) : loco_last_error());
  loco_peer_close(peer);
  return 1;
}

static float* g_buffers[256]; /* the tensors' buffers, freed at exit */
static size_t g_count;

static void free_buffers(void) {
  for (size_t i = 0; i < g_count; ++i) free(g_buffers[i]);
}

/* A zeroed buffer for every tensor; 0 when a call fails. */
static int bind_all(loco_peer* peer) {
  size_t count = 0;
  if (loco_peer_tensor_count(peer, &count) != LOCO_OK || count > 256) return 0;
  for (size_t i = 0; i < count; ++i) {
    const char* name;
    const size_t* shape;
    size_t rank, size = 1;
    if (loco_peer_tensor_info(peer, i, &name, &shape, &rank) != LOCO_OK) return 0;
    for (size_t d = 0; d < rank; ++d) size *= shape[d];
    float* buffer = calloc(size, sizeof *buffer);
    g_buffers[g_count++] = buffer;
    if (buffer == NULL || loco_peer_bind(peer, name, shape, rank, buffer) != LOCO_OK) return 0;
  }
  return 1;
}

/* "files I: NAME ..." of the paths loco_peer_data_files gives; 0 when it fails. */
static int print_files(loco_peer* peer, uint32_t index) {
  size_t count = 0;
  if (loco_peer_data_files(peer, 120.0, &count) != LOCO_OK) return 0;
  printf("files %u:", index);
  for (size_t k = 0; k < count; ++k) {
    const char* path = loco_peer_data_path(peer, k);
    const char* slash = strrchr(path, '/');
    printf(" %s", slash ? slash + 1 : path);
  }
  printf("\n");
  fflush(stdout);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s PEER_CONFIG MAX_ROUNDS\n", argv[0]);
    return 1;
  }
  const long max_rounds = strtol(argv[2], NULL, 10);
  atexit(free_buffers); /* after loco_peer_close, which every return calls first */
  loco_peer* peer = NULL;
  if (loco_peer_open(argv[1], &peer) != LOCO_OK) return failed(NULL, "loco_peer_open");
  if (!bind_all(peer)) return failed(peer, "loco_peer_bind");
  loco_join_info joined;
  if (loco_peer_join(peer, 60.0, &joined) != LOCO_OK) return failed(peer, "loco_peer_join");
  printf("joined shard %u of %u\n", joined.shard_index, joined.shard_count);
  if (!print_files(peer, joined.shard_index)) return failed(peer, "loco_peer_data_files");
  const struct timespec pause = {.tv_sec = 0, .tv_nsec = 200 * 1000 * 1000};
  for (long r = 0; r < max_rounds; ++r) {
    nanosleep(&pause, NULL);
    loco_round_result result;
    if (loco_peer_round(peer, NAN, &result) != LOCO_OK) return failed(peer, "loco_peer_round");
    loco_data_shard shard;
    if (loco_peer_data_shard(peer, &shard) != LOCO_OK) return failed(peer, "loco_peer_data_shard");
    if (shard.changes == 0) continue;
    printf("shard %u of %u after %llu change(s)\n", shard.index, shard.count,
           (unsigned long long)shard.changes);
    if (!print_files(peer, shard.index)) return failed(peer, "loco_peer_data_files");
    loco_peer_leave(peer, "its new shard is in");
    loco_peer_close(peer);
    return 0;
  }
  fprintf(stderr, "no change of data shard in %ld rounds\n", max_rounds);
  loco_peer_close(peer);
  return 2;
}
