/* The C API from a C program: a real loco-tracker on loopback and peers of libloco.so in this
 * process. Each error path gives its status and a message and never aborts; two peers run DiLoCo
 * rounds together and hold the same bits after each; a third joins late and fetches the state;
 * two peers of a Streaming DiLoCo run (a tracker of its own) run fragment rounds. A join that
 * cannot succeed (another run, another key, nothing listening, other settings) says why with its
 * own status before its timeout.
 * A watchdog (alarm) ends a hung test; every wait is on a real event with a bound. */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp */
#include <arpa/inet.h>
#include <ftw.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "loco/loco.h"
#include "tracker_process.h"

/* `status` is `expected` and the message of the call (`peer`'s, or this thread's when null)
 * names `needle`. */
static void expect_error(loco_status status, loco_status expected, const loco_peer* peer,
                         const char* needle, const char* what) {
  const char* message = peer != NULL ? loco_peer_last_error(peer) : loco_last_error();
  CHECK(status == expected, "%s: %s, expected %s (%s)", what, loco_status_name(status),
        loco_status_name(expected), message);
  CHECK(strstr(message, needle) != NULL, "%s: message \"%s\" does not say \"%s\"", what, message,
        needle);
  printf("%-28s %s: %s\n", what, loco_status_name(status), message);
}

static struct timespec g_start;

/* Seconds since the test started, for its log. */
static double elapsed(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - g_start.tv_sec) + (double)(now.tv_nsec - g_start.tv_nsec) / 1e9;
}
static tracker_process g_tracker;

static int remove_entry(const char* path, const struct stat* info, int flag, struct FTW* at) {
  (void)info, (void)flag, (void)at;
  return remove(path);
}

/* A loco-peer config for key file `key`, run `run_id` of run config `run_config` and `tracker`,
 * written as `name`. */
static void write_config_of(const char* name, const char* key, const char* run_id,
                            const char* run_config, const tracker_process* tracker) {
  char text[2048];
  snprintf(text, sizeof text,
           "log-level = \"warn\"\n"
           "[peer]\nkey = \"%s\"\nlisten = \"127.0.0.1:0\"\n"
           "[run]\nid = \"%s\"\nconfig = \"%s\"\n"
           "[tracker]\naddress = \"%s\"\npublic-key = \"%s\"\n",
           key, run_id, run_config, tracker->address, tracker->public_key);
  write_file(name, text);
}

/* The same for the DiLoCo run of configs/swarm-tiny.toml and g_tracker. */
static void write_peer_config(const char* name, const char* key, const char* run_id) {
  write_config_of(name, key, run_id, LOCO_SOURCE_DIR "/configs/swarm-tiny.toml", &g_tracker);
}

static loco_peer* open_peer(const char* config_name) {
  char path[512];
  path_in_dir(path, sizeof path, config_name);
  loco_peer* peer = NULL;
  const loco_status s = loco_peer_open(path, &peer);
  CHECK(s == LOCO_OK, "open %s: %s %s", config_name, loco_status_name(s), loco_last_error());
  return peer;
}

/* One buffer per tensor of the run's model, bound to the peer: the trainer's model. */
typedef struct model {
  size_t count;
  float** tensors;
  size_t* sizes;
} model;

static model bind_model(loco_peer* peer) {
  model m = {0};
  CHECK(loco_peer_tensor_count(peer, &m.count) == LOCO_OK, "%s", loco_last_error());
  m.tensors = calloc(m.count, sizeof *m.tensors);
  m.sizes = calloc(m.count, sizeof *m.sizes);
  for (size_t i = 0; i < m.count; ++i) {
    const char* name;
    const size_t* shape;
    size_t rank;
    CHECK(loco_peer_tensor_info(peer, i, &name, &shape, &rank) == LOCO_OK, "%s", loco_last_error());
    m.sizes[i] = 1;
    for (size_t d = 0; d < rank; ++d) m.sizes[i] *= shape[d];
    m.tensors[i] = malloc(m.sizes[i] * sizeof(float));
    for (size_t k = 0; k < m.sizes[i]; ++k) m.tensors[i][k] = NAN; /* loco must overwrite */
    const loco_status s = loco_peer_bind(peer, name, shape, rank, m.tensors[i]);
    CHECK(s == LOCO_OK, "bind %s: %s", name, loco_peer_last_error(peer));
  }
  return m;
}

static void free_model(model* m) {
  for (size_t i = 0; i < m->count; ++i) free(m->tensors[i]);
  free(m->tensors);
  free(m->sizes);
}

static int same_weights(const model* a, const model* b) {
  for (size_t i = 0; i < a->count; ++i)
    if (memcmp(a->tensors[i], b->tensors[i], a->sizes[i] * sizeof(float)) != 0) return 0;
  return 1;
}

/* The inner steps of a trainer: every weight moved, differently on each peer. */
static void train(model* m, float step) {
  for (size_t i = 0; i < m->count; ++i)
    for (size_t k = 0; k < m->sizes[i]; ++k) m->tensors[i][k] -= step * (float)((k % 7) - 3);
}

typedef struct round_call {
  loco_peer* peer;
  float loss;
  loco_round_result result;
  loco_status status;
} round_call;

static void* run_round(void* arg) {
  round_call* call = arg;
  call->status = loco_peer_round(call->peer, call->loss, &call->result);
  return NULL;
}

/* loco-tracker for run `run_id` of run config `config`, its key, state and log files named
 * `name`.key, .state, .log in the test's folder. 0 when it listens. */
static int start_tracker(tracker_process* tracker, const char* run_id, const char* config,
                         const char* name) {
  char key[512], state[512], log[512], file[64];
  snprintf(file, sizeof file, "%s.key", name);
  path_in_dir(key, sizeof key, file);
  snprintf(file, sizeof file, "%s.state", name);
  path_in_dir(state, sizeof state, file);
  snprintf(file, sizeof file, "%s.log", name);
  path_in_dir(log, sizeof log, file);
  const char* program = LOCO_BIN_DIR "/loco-tracker";
  char* const argv[] = {(char*)program,
                        "--tracker.key",
                        key,
                        "--tracker.listen",
                        "127.0.0.1:0",
                        "--tracker.state-file",
                        state,
                        "--tracker.http",
                        "",
                        "--tracker.max-members-per-address",
                        "0",
                        "--run.id",
                        (char*)run_id,
                        "--run.config",
                        (char*)config,
                        "--run.min-peers",
                        "2",
                        "--admission.policy",
                        "open",
                        NULL};
  return tracker_start(tracker, program, argv, log, 30);
}

/* configs/swarm-tiny.toml as a Streaming DiLoCo run (P = 2, τ = 2), written as `name`; its path
 * into `path`. */
static void write_streaming_config(const char* name, char* path, size_t size) {
  char source[512];
  snprintf(source, sizeof source, "%s/configs/swarm-tiny.toml", LOCO_SOURCE_DIR);
  FILE* in = fopen(source, "r");
  static char text[8192];
  const size_t n = in != NULL ? fread(text, 1, sizeof text - 1, in) : 0;
  if (in != NULL) fclose(in);
  text[n] = 0;
  static const char diloco[] = "kind = \"diloco\"";
  const char* kind = strstr(text, diloco);
  CHECK(kind != NULL, "%s: no [strategy] kind = \"diloco\"", source);
  if (kind == NULL) return;
  static char out[8448]; /* [strategy] is its last section: the lines go at its end */
  snprintf(out, sizeof out, "%.*skind = \"streaming\"%s\nfragments = 2\ntau = 2\nalpha = 0.5\n",
           (int)(kind - text), text, kind + strlen(diloco));
  write_file(name, out);
  path_in_dir(path, size, name);
}

static void test_errors_before_the_tracker(void) {
  loco_peer* peer = (loco_peer*)1;
  char path[512];
  path_in_dir(path, sizeof path, "missing.toml");
  expect_error(loco_peer_open(path, &peer), LOCO_ERR_CONFIG, NULL, "no such file",
               "a config that is missing");
  CHECK(peer == NULL, "a failed open leaves no handle");

  write_file("typo.toml", "[peer]\nkee = \"peer.key\"\n");
  path_in_dir(path, sizeof path, "typo.toml");
  expect_error(loco_peer_open(path, &peer), LOCO_ERR_CONFIG, NULL, "kee", "a key no option has");

  write_file("syntax.toml", "[peer\nkey = \n");
  path_in_dir(path, sizeof path, "syntax.toml");
  expect_error(loco_peer_open(path, &peer), LOCO_ERR_CONFIG, NULL, "syntax.toml",
               "a config that is not TOML");

  write_peer_config("no-key.toml", "absent.key", "capi-run");
  path_in_dir(path, sizeof path, "no-key.toml");
  expect_error(loco_peer_open(path, &peer), LOCO_ERR_IO, NULL, "absent.key",
               "a key file that is missing");

  write_file("garbage.key", "not a key\n");
  char garbage[512];
  path_in_dir(garbage, sizeof garbage, "garbage.key");
  chmod(garbage, 0600);
  write_peer_config("bad-key.toml", "garbage.key", "capi-run");
  path_in_dir(path, sizeof path, "bad-key.toml");
  expect_error(loco_peer_open(path, &peer), LOCO_ERR_CONFIG, NULL, "garbage.key",
               "a key file that is garbage");

  expect_error(loco_peer_open(NULL, &peer), LOCO_ERR_INVALID_ARGUMENT, NULL, "config_path",
               "a null config path");
  expect_error(loco_peer_round(NULL, 0, NULL), LOCO_ERR_INVALID_ARGUMENT, NULL, "peer",
               "a null handle");
}

/* Errors of a peer that opened: tensors that do not fit, calls out of order, a wrong run. */
static void test_errors_of_an_open_peer(void) {
  write_peer_config("wrong-run.toml", "peer-x.key", "another-run");
  loco_peer* peer = open_peer("wrong-run.toml");
  if (peer == NULL) return;
  const char* name;
  const size_t* shape;
  size_t rank;
  CHECK(loco_peer_tensor_info(peer, 0, &name, &shape, &rank) == LOCO_OK, "%s", loco_last_error());
  float* buffer = calloc(shape[0] * (rank > 1 ? shape[1] : 1) + 1, sizeof(float));
  size_t wrong[2] = {shape[0] + 1, rank > 1 ? shape[1] : 1};
  expect_error(loco_peer_bind(peer, name, wrong, rank, buffer), LOCO_ERR_INVALID_ARGUMENT, peer,
               "the run's model has", "a shape that differs");
  expect_error(loco_peer_bind(peer, "no.such.weight", shape, rank, buffer),
               LOCO_ERR_INVALID_ARGUMENT, peer, "no.such.weight", "a tensor the model lacks");
  expect_error(loco_peer_join(peer, 10.0, NULL), LOCO_ERR_INVALID_ARGUMENT, peer, "is not bound",
               "join with tensors unbound");
  expect_error(loco_peer_round(peer, 0, NULL), LOCO_ERR_STATE, peer, "join", "a round before join");
  loco_data_shard shard;
  expect_error(loco_peer_data_shard(peer, &shard), LOCO_ERR_STATE, peer, "join",
               "the data shard before join");
  expect_error(loco_peer_data_shard(peer, NULL), LOCO_ERR_INVALID_ARGUMENT, peer, "null",
               "the data shard into nothing");
  loco_due due;
  expect_error(loco_peer_fragment_due(peer, 1, &due), LOCO_ERR_STATE, peer, "not a Streaming",
               "a fragment call in DiLoCo");
  size_t index_past = 0;
  CHECK(loco_peer_tensor_count(peer, &index_past) == LOCO_OK, "%s", loco_last_error());
  expect_error(loco_peer_tensor_info(peer, index_past, &name, &shape, &rank),
               LOCO_ERR_INVALID_ARGUMENT, peer, "past", "a tensor index past the end");
  expect_error(loco_peer_bind_bf16(peer, name, wrong, rank, (uint16_t*)buffer),
               LOCO_ERR_INVALID_ARGUMENT, peer, "the run's model has", "a bf16 shape that differs");
  free(buffer);

  /* loco's checkpoint: out of order, missing, damaged. */
  char path[512];
  path_in_dir(path, sizeof path, "loco.ckpt");
  expect_error(loco_peer_save(peer, path), LOCO_ERR_STATE, peer, "join", "a save before join");
  expect_error(loco_peer_save(peer, NULL), LOCO_ERR_INVALID_ARGUMENT, peer, "path is null",
               "a save to no path");
  expect_error(loco_peer_load(peer, path), LOCO_ERR_IO, peer, "loco.ckpt", "a load of no file");
  write_file("loco.ckpt", "not a checkpoint");
  expect_error(loco_peer_load(peer, path), LOCO_ERR_FORMAT, peer, "loco.ckpt",
               "a load of a damaged file");

  model m = bind_model(peer);
  /* The run id is part of the secure handshake: the tracker of another run ends it without a
   * word, and after a few such attempts the join says so. */
  const double started = elapsed();
  expect_error(loco_peer_join(peer, 60.0, NULL), LOCO_ERR_CONFIG, peer, "[run] id",
               "a run the tracker lacks");
  const double took = elapsed() - started;
  printf("%-28s returned after %.1f s\n", "a run the tracker lacks", took);
  CHECK(took < 30.0, "a wrong run id ends the join before its timeout (%.1f s)", took);
  expect_error(loco_peer_join(peer, 3.0, NULL), LOCO_ERR_STATE, peer, "open a new peer",
               "a join after a failed one");
  loco_peer_close(peer);
  free_model(&m);
}

/* A port on loopback where nothing listens (bound, never listening: a connection is refused),
 * kept for the test's life; 0 if none could be had. */
static int dead_port(void) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = 0};
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof at;
  if (fd < 0 || bind(fd, (struct sockaddr*)&at, sizeof at) != 0 ||
      getsockname(fd, (struct sockaddr*)&at, &size) != 0)
    return 0;
  return ntohs(at.sin_port);
}

/* Opens `config_name`, binds a model and joins with the join's full timeout: the join must end
 * with `expected` (its message naming `needle`) well before that timeout. */
static void expect_join_fails(const char* config_name, loco_status expected, const char* needle,
                              const char* what) {
  loco_peer* peer = open_peer(config_name);
  if (peer == NULL) return;
  model m = bind_model(peer);
  const double started = elapsed();
  expect_error(loco_peer_join(peer, 60.0, NULL), expected, peer, needle, what);
  const double took = elapsed() - started;
  printf("%-28s returned after %.1f s\n", what, took);
  CHECK(took < 30.0, "%s: the join ends before its 60 s timeout (%.1f s)", what, took);
  loco_peer_close(peer);
  free_model(&m);
}

/* Each reason a join cannot succeed comes back with its own status, not at the timeout: a key
 * that is not the tracker's (as a man in the middle shows), a tracker address where nothing
 * listens, a run config whose settings differ from the run's (the tracker's refusal). */
static void test_join_fails_fast(const char* other_key_hex) {
  tracker_process impostor = g_tracker; /* the run's address, another key pinned */
  snprintf(impostor.public_key, sizeof impostor.public_key, "%s", other_key_hex);
  write_config_of("wrong-key.toml", "peer-x.key", "capi-run",
                  LOCO_SOURCE_DIR "/configs/swarm-tiny.toml", &impostor);
  expect_join_fails("wrong-key.toml", LOCO_ERR_CRYPTO, "public-key", "a key not the tracker's");

  tracker_process dead = g_tracker;
  const int port = dead_port();
  CHECK(port != 0, "no free port on loopback");
  snprintf(dead.address, sizeof dead.address, "127.0.0.1:%d", port);
  write_config_of("dead.toml", "peer-x.key", "capi-run", LOCO_SOURCE_DIR "/configs/swarm-tiny.toml",
                  &dead);
  expect_join_fails("dead.toml", LOCO_ERR_NETWORK, "[tracker] address", "nothing listens");

  char streaming[512];
  write_streaming_config("other-settings.toml", streaming, sizeof streaming);
  write_config_of("other-run-config.toml", "peer-x.key", "capi-run", streaming, &g_tracker);
  expect_join_fails("other-run-config.toml", LOCO_ERR_CONFIG, "the tracker refused this peer",
                    "another run config");
}

/* Two peers train together; a third joins after two rounds and fetches the run's state. */
static void test_rounds(void) {
  write_peer_config("a.toml", "peer-a.key", "capi-run");
  write_peer_config("b.toml", "peer-b.key", "capi-run");
  write_peer_config("c.toml", "peer-c.key", "capi-run");
  loco_peer* a = open_peer("a.toml");
  loco_peer* b = open_peer("b.toml");
  if (a == NULL || b == NULL) return;
  model ma = bind_model(a), mb = bind_model(b);
  const char* kind = NULL;
  CHECK(loco_peer_strategy(a, &kind) == LOCO_OK && strcmp(kind, "diloco") == 0,
        "the run's strategy: %s", kind != NULL ? kind : loco_peer_last_error(a));
  expect_error(loco_peer_strategy(a, NULL), LOCO_ERR_INVALID_ARGUMENT, a, "kind",
               "strategy without an out pointer");

  loco_join_info ja, jb;
  CHECK(loco_peer_join(a, 30.0, &ja) == LOCO_OK, "join a: %s", loco_peer_last_error(a));
  CHECK(loco_peer_join(b, 30.0, &jb) == LOCO_OK, "join b: %s", loco_peer_last_error(b));
  CHECK(!ja.fetched && !jb.fetched && ja.round == 0, "a new run starts at its genesis");
  CHECK(ja.shard_index != jb.shard_index, "each peer has its own data shard (%u, %u)",
        ja.shard_index, jb.shard_index);
  CHECK(same_weights(&ma, &mb) && !isnan(ma.tensors[0][0]),
        "both start from the run's genesis, written into their buffers");
  expect_error(loco_peer_round_start(a, 0, NULL), LOCO_ERR_STATE, a, "loco_peer_overlap",
               "round_start without overlap");
  expect_error(loco_peer_round_land(a, NULL), LOCO_ERR_STATE, a, "no round started",
               "round_land with none started");
  expect_error(loco_peer_overlap(a), LOCO_ERR_STATE, a, "joined already", "overlap after join");

  for (int r = 1; r <= 2; ++r) {
    train(&ma, 1e-3f);
    train(&mb, -2e-3f);
    round_call calls[2] = {{.peer = a, .loss = 4.0f}, {.peer = b, .loss = 4.1f}};
    pthread_t threads[2];
    for (int i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, run_round, &calls[i]);
    for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
    for (int i = 0; i < 2; ++i) {
      CHECK(calls[i].status == LOCO_OK, "round %d: %s", r, loco_peer_last_error(calls[i].peer));
      CHECK(calls[i].result.kind == LOCO_ROUND_COMMITTED && calls[i].result.members == 2 &&
                calls[i].result.round == (uint64_t)r,
            "round %d: kind %d, %zu members, at round %llu", r, (int)calls[i].result.kind,
            calls[i].result.members, (unsigned long long)calls[i].result.round);
      const loco_round_times* t = &calls[i].result.times;
      CHECK(calls[i].result.bytes_sent > 0 && t->exchange_s > 0 && t->gather_s >= 0 &&
                t->delta_s >= 0 && t->hash_s >= 0 && t->outer_s >= 0 && t->write_back_s >= 0,
            "round %d: its times and bytes are reported", r);
    }
    CHECK(memcmp(calls[0].result.state_hash, calls[1].result.state_hash, LOCO_HASH_BYTES) == 0,
          "round %d: both peers report the same state hash", r);
    CHECK(same_weights(&ma, &mb), "round %d: both buffers hold the same θ", r);
    uint8_t hash[LOCO_HASH_BYTES];
    uint64_t at = 0;
    CHECK(loco_peer_state_hash(a, hash, &at) == LOCO_OK && at == (uint64_t)r &&
              memcmp(hash, calls[0].result.state_hash, LOCO_HASH_BYTES) == 0,
          "round %d: the hash getter agrees", r);
    printf("round %d committed by 2 peers, state %02x%02x%02x%02x...\n", r, hash[0], hash[1],
           hash[2], hash[3]);
  }

  loco_peer* c = open_peer("c.toml");
  if (c != NULL) {
    model mc = bind_model(c);
    loco_join_info jc;
    CHECK(loco_peer_join(c, 30.0, &jc) == LOCO_OK, "join c: %s", loco_peer_last_error(c));
    CHECK(jc.fetched && jc.round == 2,
          "a newcomer fetches the run's state (fetched %d, round %llu)", jc.fetched,
          (unsigned long long)jc.round);
    CHECK(same_weights(&mc, &ma), "the newcomer's buffers hold the run's θ");
    uint8_t ha[LOCO_HASH_BYTES], hc[LOCO_HASH_BYTES];
    loco_peer_state_hash(a, ha, NULL);
    loco_peer_state_hash(c, hc, NULL);
    CHECK(memcmp(ha, hc, LOCO_HASH_BYTES) == 0, "the newcomer holds the run's state hash");
    CHECK(loco_peer_leave(c, "test done") == LOCO_OK, "%s", loco_peer_last_error(c));
    expect_error(loco_peer_round(c, 0, NULL), LOCO_ERR_STATE, c, "left", "a round after leave");
    loco_peer_close(c);
    free_model(&mc);
  }
  CHECK(loco_peer_leave(a, "test done") == LOCO_OK, "%s", loco_peer_last_error(a));
  loco_peer_close(a);
  loco_peer_close(b); /* leaves on close */
  free_model(&ma);
  free_model(&mb);
}

/* interrupt ends a round that waits for a group that cannot form (the run needs 2 peers and
 * this one is alone in it), and a join after it returns at once. */
static void test_interrupt(void) {
  write_peer_config("d.toml", "peer-d.key", "capi-run");
  write_peer_config("e.toml", "peer-e.key", "capi-run");
  loco_peer* d = open_peer("d.toml");
  loco_peer* e = open_peer("e.toml");
  if (d == NULL || e == NULL) return;
  model md = bind_model(d), me = bind_model(e);
  CHECK(loco_peer_join(d, 30.0, NULL) == LOCO_OK, "join d: %s", loco_peer_last_error(d));
  round_call call = {.peer = d, .loss = NAN};
  pthread_t thread;
  pthread_create(&thread, NULL, run_round, &call);
  loco_peer_interrupt(d); /* before or during the round: either way it ends skipped */
  pthread_join(thread, NULL);
  CHECK(call.status == LOCO_OK && call.result.kind == LOCO_ROUND_SKIPPED,
        "an interrupted round is skipped: %s, kind %d", loco_status_name(call.status),
        (int)call.result.kind);
  loco_peer_interrupt(e);
  expect_error(loco_peer_join(e, 30.0, NULL), LOCO_ERR_INTERRUPTED, e, "interrupted",
               "a join after interrupt");
  /* An overlapped round after interrupt: started without a mean, landed at once as skipped. */
  write_peer_config("f.toml", "peer-f.key", "capi-run");
  loco_peer* f = open_peer("f.toml");
  if (f != NULL) {
    model mf = bind_model(f);
    CHECK(loco_peer_overlap(f) == LOCO_OK && loco_peer_join(f, 30.0, NULL) == LOCO_OK, "%s",
          loco_peer_last_error(f));
    loco_peer_interrupt(f);
    int started = 1;
    loco_round_result landed;
    CHECK(loco_peer_round_start(f, NAN, &started) == LOCO_OK && started == 0 &&
              loco_peer_round_land(f, &landed) == LOCO_OK && landed.kind == LOCO_ROUND_SKIPPED,
          "an interrupted overlapped round is skipped: %s", loco_peer_last_error(f));
    loco_peer_close(f);
    free_model(&mf);
  }
  loco_peer_close(d);
  loco_peer_close(e);
  free_model(&md);
  free_model(&me);
}

/* Streaming DiLoCo (P = 2, τ = 2) on a tracker of its own: two peers of this process. The first
 * peer's fragment round cannot end before the second starts its own (the run needs both), so its
 * land without waiting is LOCO_ERR_NOT_READY; then both land with one state, the merge written
 * into the fragment's buffers only. A sync round (loco_peer_round) covers the next fragment.
 * Every misuse of the fragment calls is a status and a message. */
static void test_streaming(void) {
  char run_config[512];
  write_streaming_config("stream-run.toml", run_config, sizeof run_config);
  tracker_process tracker;
  if (start_tracker(&tracker, "capi-stream", run_config, "stream-tracker") != 0) {
    CHECK(0, "the Streaming run's tracker did not start");
    return;
  }
  write_config_of("s.toml", "peer-s.key", "capi-stream", run_config, &tracker);
  write_config_of("t.toml", "peer-t.key", "capi-stream", run_config, &tracker);
  loco_peer* s = open_peer("s.toml");
  loco_peer* t = open_peer("t.toml");
  if (s == NULL || t == NULL) return;
  loco_streaming_info info;
  CHECK(loco_peer_streaming(s, &info) == LOCO_OK && info.fragments == 2 && info.tau == 2 &&
            info.inner_steps == 20 && info.alpha == 0.5f && info.eager == 0,
        "the run's Streaming settings: %s", loco_peer_last_error(s));
  size_t count = 0, fragment = 9;
  const char* name = NULL;
  CHECK(loco_peer_fragment_tensor_count(s, 1, &count) == LOCO_OK && count > 0, "%s",
        loco_peer_last_error(s));
  CHECK(loco_peer_fragment_tensor(s, 1, 0, &name) == LOCO_OK &&
            loco_peer_fragment_of(s, name, &fragment) == LOCO_OK && fragment == 1,
        "fragment 1's first tensor %s is of fragment %zu", name, fragment);
  expect_error(loco_peer_fragment_tensor(s, 1, count, &name), LOCO_ERR_INVALID_ARGUMENT, s,
               "past fragment 1", "a tensor past a fragment's");
  expect_error(loco_peer_fragment_tensor_count(s, 2, &count), LOCO_ERR_INVALID_ARGUMENT, s,
               "2 fragments", "a fragment past the run's");
  expect_error(loco_peer_fragment_of(s, "lm_head.bias", &fragment), LOCO_ERR_INVALID_ARGUMENT, s,
               "no tensor lm_head.bias", "a tensor the model lacks");
  expect_error(loco_peer_fragment_start(s, 10, 0, NULL), LOCO_ERR_STATE, s, "join",
               "a fragment round before join");
  model ms = bind_model(s), mt = bind_model(t);
  loco_join_info js, jt;
  CHECK(loco_peer_join(s, 30.0, &js) == LOCO_OK && loco_peer_join(t, 30.0, &jt) == LOCO_OK,
        "join: %s %s", loco_peer_last_error(s), loco_peer_last_error(t));
  expect_error(loco_peer_fragment_land(s, 1, NULL), LOCO_ERR_STATE, s, "no fragment round",
               "a land with none started");
  loco_due due = LOCO_DUE_LAND;
  CHECK(loco_peer_fragment_due(s, 10, &due) == LOCO_OK && due == LOCO_DUE_START,
        "fragment 0 leaves after step H/P = 10 (due %d)", (int)due);
  train(&ms, 1e-3f);
  train(&mt, -2e-3f);
  CHECK(loco_peer_fragment_start(s, 10, 4.0f, &fragment) == LOCO_OK && fragment == 0, "start: %s",
        loco_peer_last_error(s));
  int ready = 1;
  CHECK(loco_peer_fragment_ready(s, &ready) == LOCO_OK && ready == 0, "not ready before t starts");
  expect_error(loco_peer_fragment_land(s, 0, NULL), LOCO_ERR_NOT_READY, s, "not ended yet",
               "a land that is not ready");
  expect_error(loco_peer_fragment_start(s, 10, 4.0f, NULL), LOCO_ERR_STATE, s, "land it first",
               "a start while one is started");
  CHECK(loco_peer_fragment_due(s, 11, &due) == LOCO_OK && due == LOCO_DUE_NOTHING &&
            loco_peer_fragment_due(s, 12, &due) == LOCO_OK && due == LOCO_DUE_LAND,
        "the round lands τ = 2 steps after it left");
  CHECK(loco_peer_fragment_start(t, 10, 4.1f, NULL) == LOCO_OK, "%s", loco_peer_last_error(t));
  loco_round_result rs, rt;
  CHECK(loco_peer_fragment_land(s, 1, &rs) == LOCO_OK &&
            loco_peer_fragment_land(t, 1, &rt) == LOCO_OK,
        "land: %s %s", loco_peer_last_error(s), loco_peer_last_error(t));
  CHECK(rs.kind == LOCO_ROUND_COMMITTED && rt.kind == LOCO_ROUND_COMMITTED && rs.round == 1 &&
            rs.members == 2 && rs.step == 12 &&
            memcmp(rs.state_hash, rt.state_hash, LOCO_HASH_BYTES) == 0,
        "fragment round 1 committed by both, one state (kinds %d %d, step %llu)", (int)rs.kind,
        (int)rt.kind, (unsigned long long)rs.step);
  CHECK(loco_peer_fragment_next(s, &fragment) == LOCO_OK && fragment == 1, "then fragment 1");
  round_call calls[2] = {{.peer = s, .loss = 3.9f}, {.peer = t, .loss = 4.0f}};
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, run_round, &calls[i]);
  for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  CHECK(calls[0].status == LOCO_OK && calls[1].status == LOCO_OK &&
            calls[0].result.kind == LOCO_ROUND_COMMITTED && calls[0].result.round == 2 &&
            memcmp(calls[0].result.state_hash, calls[1].result.state_hash, LOCO_HASH_BYTES) == 0,
        "a sync fragment round: %s %s", loco_peer_last_error(s), loco_peer_last_error(t));
  expect_error(loco_peer_round_start(s, 0, NULL), LOCO_ERR_STATE, s, "loco_peer_overlap",
               "DiLoCo's overlapped round");
  loco_peer_close(s);
  loco_peer_close(t);
  free_model(&ms);
  free_model(&mt);
  CHECK(tracker_stop(&tracker, 10) == 0, "the Streaming run's tracker failed");
}

int main(void) {
  alarm(120);                       /* a hung test ends here, not at ctest's limit */
  setvbuf(stdout, NULL, _IOLBF, 0); /* each line as it happens, in ctest's log too */
  clock_gettime(CLOCK_MONOTONIC, &g_start);
  snprintf(g_dir, sizeof g_dir, "%s", "/tmp/loco-capi-test-XXXXXX");
  if (mkdtemp(g_dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  printf("libloco %s, folder %s\n", loco_version(), g_dir);
  static const char* keys[] = {"tracker.key", "stream-tracker.key", "peer-a.key", "peer-b.key",
                               "peer-c.key",  "peer-d.key",         "peer-e.key", "peer-f.key",
                               "peer-s.key",  "peer-t.key",         "peer-x.key"};
  char hex[65]; /* the last key's: not the tracker's */
  for (size_t i = 0; i < sizeof keys / sizeof *keys; ++i) {
    char path[512];
    path_in_dir(path, sizeof path, keys[i]);
    CHECK(loco_keygen(path, hex) == LOCO_OK && strlen(hex) == 64, "keygen %s: %s", keys[i],
          loco_last_error());
  }
  char config[512], log[512];
  snprintf(config, sizeof config, "%s/configs/swarm-tiny.toml", LOCO_SOURCE_DIR);
  path_in_dir(log, sizeof log, "tracker.log");

  test_errors_before_the_tracker();
  if (start_tracker(&g_tracker, "capi-run", config, "tracker") != 0) return 1;
  printf("%.1f s: the tracker listens at %s\n", elapsed(), g_tracker.address);
  test_errors_of_an_open_peer();
  printf("%.1f s: the errors of an open peer checked\n", elapsed());
  test_join_fails_fast(hex);
  printf("%.1f s: failed joins checked\n", elapsed());
  test_interrupt();
  printf("%.1f s: interrupt checked\n", elapsed());
  test_rounds();
  printf("%.1f s: rounds checked\n", elapsed());
  test_streaming();
  printf("%.1f s: Streaming rounds checked\n", elapsed());
  const int tracker_status = tracker_stop(&g_tracker, 10);
  printf("%.1f s: the tracker stopped\n", elapsed());
  CHECK(tracker_status == 0, "the tracker ended with status %d (its log: %s)", tracker_status, log);
  printf("%d failed\n", g_failures);
  if (g_failures > 0) return 1;
  nftw(g_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS); /* kept when a check failed */
  return 0;
}
