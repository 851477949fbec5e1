/* loco_write_genesis from a C program: a model of several tensors (one bf16) written as a genesis
 * file, deterministically; a peer of a run config naming it sees its tensors in that order; a
 * file whose bytes differ is refused at open naming model.genesis-blake2b; every bad argument is
 * a status and a message. No tracker: loco_peer_open reads the run config and the file only. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "loco/loco.h"

/* `status` is `expected` and loco_last_error() names `needle`. */
static void expect_error(loco_status status, loco_status expected, const char* needle,
                         const char* what) {
  const char* message = loco_last_error();
  CHECK(status == expected, "%s: %s, expected %s (%s)", what, loco_status_name(status),
        loco_status_name(expected), message);
  CHECK(strstr(message, needle) != NULL, "%s: \"%s\" does not say \"%s\"", what, message, needle);
  printf("%-26s %s: %s\n", what, loco_status_name(status), message);
}

/* A peer config of run config `run` (no tracker is contacted by loco_peer_open). */
static void write_peer_config(const char* name, const char* run) {
  char text[1024];
  snprintf(text, sizeof text,
           "log-level = \"warn\"\n[peer]\nkey = \"peer.key\"\n[run]\nid = \"genesis\"\n"
           "config = \"%s/%s\"\n[tracker]\naddress = \"127.0.0.1:1\"\npublic-key = \"%064d\"\n",
           g_dir, run, 0);
  write_file(name, text);
}

/* A DiLoCo run of rounds every H steps: a trainer peer's rounds come when its trainer calls them,
 * so it cannot join the rounds the tracker paces (a DiLoCo swarm's default). */
static void write_run_config(const char* name, const char* lines) {
  char text[1024];
  snprintf(text, sizeof text,
           "%s[train]\nsteps = 40\n[strategy]\nkind = \"diloco\"\ntracker-paced = false\n", lines);
  write_file(name, text);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "%s", "/tmp/loco-capi-genesis-XXXXXX");
  if (mkdtemp(g_dir) == NULL) return 1;
  char path[512], key[512];
  path_in_dir(path, sizeof path, "genesis.safetensors");
  path_in_dir(key, sizeof key, "peer.key");
  CHECK(loco_keygen(key, NULL) == LOCO_OK, "%s", loco_last_error());

  /* An LSTM's tensors, in its own order (not alphabetical); one of them bf16. */
  float w_ih[8 * 3], w_hh[8 * 2], head[3 * 2];
  uint16_t bias[8];
  for (int i = 0; i < 24; ++i) w_ih[i] = (float)i / 8.0f;
  for (int i = 0; i < 16; ++i) w_hh[i] = -(float)i / 4.0f;
  for (int i = 0; i < 6; ++i) head[i] = 0.5f * (float)i;
  for (int i = 0; i < 8; ++i) bias[i] = (uint16_t)(0x3f80 + i); /* bf16 1.0, 1.0078125, ... */
  const size_t s_ih[] = {8, 3}, s_hh[] = {8, 2}, s_bias[] = {8}, s_head[] = {3, 2};
  loco_tensor model[] = {
      {"encoder.weight_ih_l0", s_ih, 2, LOCO_DTYPE_F32, w_ih},
      {"encoder.weight_hh_l0", s_hh, 2, LOCO_DTYPE_F32, w_hh},
      {"encoder.bias_ih_l0", s_bias, 1, LOCO_DTYPE_BF16, bias},
      {"head.proj.weight", s_head, 2, LOCO_DTYPE_F32, head},
  };
  char hash[65], again[65];
  const char* lines = NULL;
  CHECK(loco_write_genesis(path, model, 4, hash, &lines) == LOCO_OK, "%s", loco_last_error());
  CHECK(strlen(hash) == 64 && lines != NULL && strstr(lines, hash) != NULL &&
            strstr(lines, "kind = \"external\"") != NULL &&
            strstr(lines, "genesis = \"genesis.safetensors\"") != NULL,
        "the hash and the config lines: %s", lines != NULL ? lines : "(none)");
  printf("%s", lines);
  write_run_config("run.toml", lines);
  char other[512];
  path_in_dir(other, sizeof other, "again.safetensors");
  CHECK(loco_write_genesis(other, model, 4, again, NULL) == LOCO_OK && strcmp(hash, again) == 0,
        "the same tensors give the same bytes: %s %s", hash, again);

  /* A peer of that run: the file's tensors, in its order. */
  write_peer_config("peer.toml", "run.toml");
  char config[512];
  path_in_dir(config, sizeof config, "peer.toml");
  loco_peer* peer = NULL;
  CHECK(loco_peer_open(config, &peer) == LOCO_OK, "open: %s", loco_last_error());
  if (peer != NULL) {
    size_t count = 0;
    CHECK(loco_peer_tensor_count(peer, &count) == LOCO_OK && count == 4, "%zu tensors", count);
    for (size_t i = 0; i < count && i < 4; ++i) {
      const char* name;
      const size_t* shape;
      size_t rank;
      CHECK(loco_peer_tensor_info(peer, i, &name, &shape, &rank) == LOCO_OK &&
                strcmp(name, model[i].name) == 0 && rank == model[i].rank &&
                shape[0] == model[i].shape[0],
            "tensor %zu is %s", i, model[i].name);
    }
    loco_peer_close(peer);
  }

  /* The run's hash, other bytes (one weight changed): refused at open, the setting named. */
  w_hh[3] += 1.0f;
  CHECK(loco_write_genesis(path, model, 4, NULL, NULL) == LOCO_OK, "%s", loco_last_error());
  expect_error(loco_peer_open(config, &peer), LOCO_ERR_CONFIG, "model.genesis-blake2b",
               "a genesis file that differs");
  CHECK(peer == NULL, "no handle");
  /* loco's own trainer peer refuses a Streaming run of another layout than balanced. */
  char streaming[1024];
  snprintf(streaming, sizeof streaming, "%s[strategy]\nkind = \"streaming\"\n", lines);
  write_file("stream.toml", streaming);
  write_peer_config("stream-peer.toml", "stream.toml");
  path_in_dir(config, sizeof config, "stream-peer.toml");
  expect_error(loco_peer_open(config, &peer), LOCO_ERR_CONFIG, "layout = \"balanced\"",
               "a Streaming run by layers");

  /* Bad arguments: each a status and a message naming the tensor. */
  const size_t zero[] = {8, 0}, deep[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  loco_tensor bad = model[0];
  expect_error(loco_write_genesis(NULL, model, 4, NULL, NULL), LOCO_ERR_INVALID_ARGUMENT, "path",
               "a null path");
  expect_error(loco_write_genesis(path, model, 0, NULL, NULL), LOCO_ERR_INVALID_ARGUMENT,
               "a model has 1 to", "a model of no tensor");
  bad.name = NULL;
  expect_error(loco_write_genesis(path, &bad, 1, NULL, NULL), LOCO_ERR_INVALID_ARGUMENT,
               "name is null", "a null name");
  bad = model[0];
  bad.shape = zero;
  expect_error(loco_write_genesis(path, &bad, 1, NULL, NULL), LOCO_ERR_INVALID_ARGUMENT,
               "dimension of 0", "a tensor of no elements");
  bad.shape = deep;
  bad.rank = 9;
  expect_error(loco_write_genesis(path, &bad, 1, NULL, NULL), LOCO_ERR_INVALID_ARGUMENT, "rank 9",
               "a rank over 8");
  bad = model[0];
  bad.data = NULL;
  expect_error(loco_write_genesis(path, &bad, 1, NULL, NULL), LOCO_ERR_INVALID_ARGUMENT, "no data",
               "no data");
  bad = model[0];
  bad.dtype = (loco_dtype)7;
  expect_error(loco_write_genesis(path, &bad, 1, NULL, NULL), LOCO_ERR_INVALID_ARGUMENT, "dtype",
               "a dtype loco does not know");
  loco_tensor twice[] = {model[0], model[0]};
  expect_error(loco_write_genesis(path, twice, 2, NULL, NULL), LOCO_ERR_INVALID_ARGUMENT,
               "encoder.weight_ih_l0", "a name repeated");

  printf("%d failed\n", g_failures);
  if (g_failures == 0) {
    char command[600];
    snprintf(command, sizeof command, "rm -rf %s", g_dir);
    if (system(command) != 0) return 1;
  }
  return g_failures > 0 ? 1 : 0;
}
