/*
 * loco's C API (C11): a training script of any framework takes part in a loco run as a peer.
 * The trainer owns its model, its inner optimizer and its data; loco owns the rest of a DiLoCo
 * (or Streaming DiLoCo, or SparseLoCo) peer: joining the run (key, tracker, admission), the shared
 * state (θ at the last round and the outer momentum, fp32, by tensor name), the round (Δ against θ,
 * compression, the group's all-reduce, the outer Nesterov step), the state hash every member agrees
 * on, serving the state to newcomers and fetching it as one, leaving. docs/PYTORCH.md walks through
 * it.
 *
 *   loco_peer* peer;
 *   if (loco_peer_open("peer.toml", &peer) != LOCO_OK) { puts(loco_last_error()); ... }
 *   for each tensor i of the run's model (loco_peer_tensor_count, loco_peer_tensor_info):
 *     loco_peer_bind(peer, name, shape, rank, my_buffer_for(name));
 *   (resuming: loco_peer_load(peer, "loco.ckpt");)
 *   loco_peer_join(peer, 60.0, &joined);   // θ of the run written into the buffers
 *   loop: H inner steps on the buffers (shard joined.shard_index of joined.shard_count), then
 *     loco_peer_round(peer, loss, &result);  // the buffers now hold the new θ
 *   loco_peer_leave(peer, "done"); loco_peer_close(peer);
 *
 * The config file is a loco-peer config (configs/peer.toml): [peer] key, listen, upload...,
 * [run] id and config (the run's loco-train config: model, data, [strategy] kind = "diloco",
 * codec...), [tracker] address, public-key, join-token, [link]. Keys are checked strictly, as
 * loco-peer checks them. Not supported in this version, and refused by name: a strategy other than
 * "diloco", "streaming" (Streaming DiLoCo: loco_peer_fragment_*) or "sparseloco" (SparseLoCo,
 * below), gossip rounds, peer.checkpoint (loco_peer_save and loco_peer_load instead).
 *
 * Tensors: the run's config fixes the model's tensors (names, shapes, order: nanoGPT's state-dict
 * names for the GPT; an external model's genesis file's, loco_write_genesis below), because the
 * shared state, its hash and the tracker's admission depend on them. The trainer binds one buffer
 * of its own to each: fp32 (or bf16, loco_peer_bind_bf16), row-major, contiguous, the model's
 * shape. A buffer stays the trainer's; it must stay valid from loco_peer_bind until
 * loco_peer_close, and loco reads or writes it only inside loco_peer_join and loco_peer_round. The
 * starting weights come from the run (its genesis, or its current state fetched from the members),
 * never from the trainer's own initialisation.
 *
 * Errors: every call returns a loco_status; nothing aborts on bad input, and no C++ exception
 * crosses this API. The message of the last failed call is loco_last_error() on the calling
 * thread, and loco_peer_last_error(peer) for calls on a handle.
 *
 * Threads: a handle is used by one thread at a time (calls on one handle must not overlap); each
 * handle is independent. Only loco_peer_interrupt may be called from any thread, and from a
 * signal handler, while another call on the handle runs. Strings returned stay valid until the
 * next call on the same thread (loco_last_error) or handle (the others), or loco_peer_close.
 * Internally a peer runs one network thread of its own, which never calls back into the caller.
 *
 * Logs: loco logs to stderr at the config's log-level (loco_peer_open sets up spdlog's default
 * logger of the process, as loco-peer does).
 */
#ifndef LOCO_LOCO_H
#define LOCO_LOCO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define LOCO_API __attribute__((visibility("default")))
#else
#define LOCO_API
#endif

typedef enum loco_status {
  LOCO_OK = 0,
  LOCO_ERR_INVALID_ARGUMENT = 1, /* a null pointer, an unknown tensor, a shape that differs */
  LOCO_ERR_CONFIG = 2,           /* the config is wrong, or the tracker refused this peer */
  LOCO_ERR_IO = 3,               /* a file or socket could not be used */
  LOCO_ERR_FORMAT = 4,           /* a file or message is malformed (a bad key file) */
  LOCO_ERR_CRYPTO = 5,           /* authentication failed (the tracker's key is not the pinned) */
  LOCO_ERR_PROTOCOL = 6,         /* the tracker or a peer broke the protocol */
  LOCO_ERR_NETWORK = 7,          /* the tracker did not answer in time, a connection failed */
  LOCO_ERR_RESOURCE = 8,         /* a limit was reached (memory, a size cap) */
  LOCO_ERR_STATE = 9,            /* a call out of order: round before join, after leave... */
  LOCO_ERR_INTERRUPTED = 10,     /* loco_peer_interrupt stopped the call */
  LOCO_ERR_INTERNAL = 11,        /* a bug in loco: the message says what, please report it */
  LOCO_ERR_NOT_READY = 12        /* loco_peer_fragment_land without waiting: not landed yet */
} loco_status;

typedef enum loco_round_kind {
  LOCO_ROUND_COMMITTED = 0, /* the group agreed: the buffers hold the new θ */
  LOCO_ROUND_SKIPPED = 1,   /* no round (too few members, failures): the buffers are untouched */
  LOCO_ROUND_REPLACED = 2   /* this peer was out of sync: the buffers hold the run's θ */
} loco_round_kind;

#define LOCO_HASH_BYTES 32

typedef struct loco_join_info {
  int fetched;          /* 1: the run was past its genesis and its state was fetched */
  uint64_t round;       /* the round the shared state is at */
  uint32_t shard_index; /* the data shard the tracker gave this peer, of shard_count */
  uint32_t shard_count;
  uint64_t step; /* the inner step the run's state stands for (round × H; Streaming: the
                    step after which that round landed): the trainer's count goes on from it */
} loco_join_info;

/* Where a round's time went, in seconds (loco's own work; the trainer's steps are not in it). */
typedef struct loco_round_times {
  double gather_s;     /* the bound buffers copied into loco's θ_local */
  double delta_s;      /* Δ = θ − θ_local and its norm */
  double exchange_s;   /* Δ encoded with the run's codec, the group's all-reduce, the commit */
  double hash_s;       /* θ' and v' computed from the mean and hashed (each attempt's) */
  double outer_s;      /* the outer Nesterov step applied to θ and v */
  double write_back_s; /* the new θ copied into the bound buffers (0 when skipped) */
} loco_round_times;

typedef struct loco_round_result {
  loco_round_kind kind;
  uint64_t round;                      /* the round the shared state is at after this one */
  size_t members;                      /* the group's size (0 unless committed) */
  uint8_t state_hash[LOCO_HASH_BYTES]; /* of the shared state: the same on every member */
  loco_round_times times;              /* of this round */
  uint64_t bytes_sent;                 /* by this peer on all its links since it joined */
  uint64_t bytes_received;
  uint64_t step; /* the inner step the shared state stands for (as loco_join_info.step): after a
                    replaced round the trainer's count goes on from it */
} loco_round_result;

typedef struct loco_peer loco_peer;

/* The library's version, e.g. "0.1.0". */
LOCO_API const char* loco_version(void);
/* The message of the last call that failed on this thread ("" if none). */
LOCO_API const char* loco_last_error(void);
/* A short name of a status, e.g. "LOCO_ERR_CONFIG". */
LOCO_API const char* loco_status_name(loco_status status);

/* Writes a new identity key file at `path` (as `loco-peer keygen --out path`; mode 0600); refuses
 * to overwrite one. `public_key_hex`, if not null, receives its public key: 64 hex digits and a
 * terminating zero. */
LOCO_API loco_status loco_keygen(const char* path, char public_key_hex[65]);

/* Reads the peer config file, the run config it names and the key file; nothing is sent yet.
 * On success *out is a new handle; on failure *out is null (loco_last_error() says why). */
LOCO_API loco_status loco_peer_open(const char* config_path, loco_peer** out);
/* Leaves the run if still in it, stops the network thread, frees the handle. Null is allowed.
 * Blocks up to 2 s while the leave message and the links' close frames go out. */
LOCO_API void loco_peer_close(loco_peer* peer);
/* The message of the last call on `peer` that failed ("" if none). */
LOCO_API const char* loco_peer_last_error(const loco_peer* peer);

/* The run's model: how many tensors, and tensor `index`'s name and shape (`*shape` points to
 * `*rank` sizes, valid until loco_peer_close). */
LOCO_API loco_status loco_peer_tensor_count(const loco_peer* peer, size_t* count);
LOCO_API loco_status loco_peer_tensor_info(const loco_peer* peer, size_t index, const char** name,
                                           const size_t** shape, size_t* rank);
/* The run's inner steps per round (its [strategy] diloco-h), for trainers that follow the run. */
LOCO_API loco_status loco_peer_inner_steps(const loco_peer* peer, uint64_t* steps);
/* The run's [strategy] kind: "diloco", "streaming" or "sparseloco" (valid until loco_peer_close).
 */
LOCO_API loco_status loco_peer_strategy(const loco_peer* peer, const char** kind);

/* Binds the trainer's buffer `data` (fp32, row-major, contiguous, `rank` sizes in `shape`) to the
 * run's tensor `name`. Before join only. LOCO_ERR_INVALID_ARGUMENT names the problem: no such
 * tensor, another shape (both shown), bound twice. */
LOCO_API loco_status loco_peer_bind(loco_peer* peer, const char* name, const size_t* shape,
                                    size_t rank, float* data);

/* The same for a bf16 buffer (`data`: bfloat16 values, the upper halves of fp32s, as PyTorch's
 * torch.bfloat16 holds them). loco reads it into its fp32 state exactly and writes θ back rounded
 * to nearest even; no copy beyond the fp32 buffer's. The shared state stays fp32: a bf16 peer's Δ
 * also carries θ's rounding to bf16 (at most 2^-9 of each weight), which the next round's mean
 * takes in like any member's Δ. */
LOCO_API loco_status loco_peer_bind_bf16(loco_peer* peer, const char* name, const size_t* shape,
                                         size_t rank, uint16_t* data);

/* Connects to the tracker and joins the run; every tensor must be bound. Fetches the run's state
 * when the run is past its genesis, and writes θ into the bound buffers. Blocks until joined, or
 * until it is clear that it cannot join, each cause with its own status (docs/PYTORCH.md, "Errors
 * and threads"):
 *   LOCO_ERR_CONFIG   the tracker refused this peer (another model or settings, not admitted),
 *                     its reason in the message; or it ended the handshake 3 times in a row
 *                     without a word, as a tracker of another run does ([run] id)
 *   LOCO_ERR_CRYPTO   the machine at the address holds another key than [tracker] public-key (a
 *                     wrong key, or a man in the middle): at once
 *   LOCO_ERR_NETWORK  no connection could be made 4 times in a row (about 4 s: nothing listens
 *                     at [tracker] address), or no answer within `timeout_s` seconds
 * `info` may be null. After a failed join the handle is good only for loco_peer_close
 * (LOCO_ERR_STATE). */
LOCO_API loco_status loco_peer_join(loco_peer* peer, double timeout_s, loco_join_info* info);

/* The trainer's data, in a run whose [data] is a dataset the peer fetches (peer.data-cache set,
 * the run's data.mirrors; docs/VOLUNTEER.md): after loco_peer_join, waits at most `timeout_s` until
 * the train shards of the data shard the tracker gave this peer are fetched and checked against
 * the run's manifest, and sets *count to how many there are; loco_peer_data_path(peer, k) names
 * shard k (in order). Each holds uint16 little-endian tokens (docs/FORMATS.md); the data cache's
 * cap keeps them while the handle is open. Nothing else of the dataset's train split is fetched.
 *   LOCO_ERR_CONFIG   the peer fetches no dataset
 *   LOCO_ERR_STATE    before loco_peer_join
 *   LOCO_ERR_NETWORK  not in within `timeout_s` (the message says why: each source's failure)
 *   LOCO_ERR_RESOURCE the data cache's cap cannot hold them */
LOCO_API loco_status loco_peer_data_files(loco_peer* peer, double timeout_s, size_t* count);
/* The path of train shard k (k < loco_peer_data_files' count), or NULL for another k. Valid until
 * the next loco_peer_data_files or loco_peer_close. */
LOCO_API const char* loco_peer_data_path(const loco_peer* peer, size_t k);

typedef struct loco_data_shard {
  uint32_t index; /* the data shard the tracker gives this peer now, of count */
  uint32_t count;
  uint64_t changes; /* how many times it changed since loco_peer_join */
} loco_data_shard;

/* The data shard the tracker gives this peer now, after loco_peer_join. The join gave the first
 * (loco_join_info); a join again, which the peer makes on its own after an eviction (its process
 * was silent past the run's eviction timeout) or a tracker restart, may give another, seen as a
 * round waits. A trainer calls this after each round: when `changes` grew, its shard is another,
 * and in a run whose dataset the peer fetches, the new shard's train shards are being fetched
 * from that call on; loco_peer_data_files (which waits for them) then names them. The old
 * shard's files stay in the cache until the shard changes again.
 *   LOCO_ERR_INVALID_ARGUMENT  `shard` is null
 *   LOCO_ERR_STATE             before loco_peer_join, or after loco_peer_leave */
LOCO_API loco_status loco_peer_data_shard(loco_peer* peer, loco_data_shard* shard);

/* One DiLoCo round from the bound buffers as they are now: Δ = θ − buffers, averaged with the
 * round's group, the outer step, and the new θ written back into the buffers (unless skipped).
 * Blocks until the round lands, however long the group takes (loco_peer_interrupt ends the wait:
 * the round is then skipped). `loss`: the trainer's mean loss since the last round, shown on
 * the tracker's status page (NAN if none). `result` may be null.
 * SparseLoCo (the run config's [strategy] kind = "sparseloco": sparseloco-chunk, -topk, -bits,
 * -beta, -outer-lr, -clip, -zstd; docs/STRATEGIES.md): the same call, every H inner steps. Δ goes
 * into this peer's error-feedback accumulator e ← β·e + Δ, the chunk-wise top-k of e (2 to 8 bits a
 * value) is all-gathered with the group, and θ moves by outer-lr × the clipped mean of the
 * members' sparse updates; what was sent leaves e once the round commits. The buffers get θ after
 * every round, a skipped one too (its Δ stays in e; the next Δ is measured from θ). times:
 * exchange_s covers Δ, the top-k, the all-gather and the hash; delta_s, hash_s and outer_s are 0.
 * Its rounds do not overlap (loco_peer_overlap is refused). */
LOCO_API loco_status loco_peer_round(loco_peer* peer, float loss, loco_round_result* result);

/* Overlapped rounds: the trainer trains on while its round is hashed and committed.
 * loco_peer_overlap, before join, makes this peer's rounds overlapped (loco_peer_round is then
 * refused: LOCO_ERR_STATE). loco_peer_round_start begins a round from the bound buffers (Δ, the
 * group's all-reduce) and returns once the group's mean is in: the buffers then hold θ', the state
 * the round leads to (the same bits every member computes), and the trainer may train on from
 * them while loco hashes θ' and v' on its network thread and the group commits. `*started` = 0:
 * the round ended without a mean (loco_peer_round_land says how, at once). loco_peer_round_ready
 * sets `*ready` = 1 when loco_peer_round_land would not wait: the merge may be applied.
 * loco_peer_round_land waits for the outcome and lands it: committed, the state becomes θ' and the
 * buffers are left alone (the trainer's steps since go into the next Δ); replaced, the buffers get
 * the run's θ (those steps are lost); skipped, the state stays (the next Δ carries the outer step
 * again). Land a round before starting the next. `result->times`: exchange_s covers the start's
 * Δ, all-reduce and θ' and the land's wait, hash_s and outer_s are 0 (the network thread's).
 * loco_peer_interrupt ends either call as it ends loco_peer_round. */
LOCO_API loco_status loco_peer_overlap(loco_peer* peer);
LOCO_API loco_status loco_peer_round_start(loco_peer* peer, float loss, int* started);
LOCO_API loco_status loco_peer_round_ready(const loco_peer* peer, int* ready);
LOCO_API loco_status loco_peer_round_land(loco_peer* peer, loco_round_result* result);

/* Streaming DiLoCo: the run config's [strategy] kind = "streaming" (fragments, tau, alpha, layout,
 * fragment-codec, eager) cuts the model's tensors into P fragments of whole layers, as
 * loco-peer does, and each round averages one fragment's Δ while the trainer trains on. The run's
 * schedule, the same on every peer: fragment rounds start after inner steps t_p = ⌊H·(p+1)/P⌋ of
 * every H, and land τ steps later; the fragment of round r is (r − 1) mod P (a skipped round's
 * fragment goes again at the next start). After each inner step `step` (counted from
 * loco_join_info.step, or a replaced round's result.step), the trainer asks
 * loco_peer_fragment_due and does what it says until it says LOCO_DUE_NOTHING:
 *   LOCO_DUE_START: loco_peer_fragment_start hands Δ of the next fragment's tensors over (read
 *     from their buffers now) and returns at once; the group averages it while the trainer steps;
 *   LOCO_DUE_LAND: loco_peer_fragment_land lands it: committed, the fragment's buffers become
 *     α·buffer + (1−α)·θ_p (θ_p the new shared values; buffers as the trainer left them);
 *     replaced, every buffer gets the run's θ; skipped, nothing changes.
 * loco_peer_fragment_ready says when the land would not wait (the merge may be applied);
 * loco_peer_fragment_land with wait = 0 returns LOCO_ERR_NOT_READY instead of waiting. loco reads
 * and writes the fragment's buffers only inside start and land. loco_peer_round on a Streaming
 * peer is one fragment round, started and landed at once. loco_peer_overlap is DiLoCo's only.
 * Eager updates (eager = "overlapped" or "delayed", one fragment): a round stays in flight until
 * the next start, where LOCO_DUE_LAND comes first (its mean steps θ and v; nothing is written into
 * the buffers) and LOCO_DUE_START then sends the next round and writes the merge (of θ, or of the
 * eager proxy) into the buffers, as loco-peer does; loco_peer_round is refused.
 * Every fragment call on a peer of another strategy is LOCO_ERR_STATE. */
typedef struct loco_streaming_info {
  size_t fragments;     /* P */
  uint64_t inner_steps; /* H */
  uint64_t tau;         /* τ: the inner steps a fragment round overlaps */
  float alpha;          /* α of the merge */
  int eager;            /* 1 with eager updates: LOCO_DUE_START writes the merge into the buffers */
} loco_streaming_info;

typedef enum loco_due { LOCO_DUE_NOTHING = 0, LOCO_DUE_START = 1, LOCO_DUE_LAND = 2 } loco_due;

/* The run's Streaming settings; LOCO_ERR_STATE when the run is not a Streaming run. */
LOCO_API loco_status loco_peer_streaming(const loco_peer* peer, loco_streaming_info* info);
/* Fragment `fragment`'s tensors: how many, and the name of its `index`-th (in the model's order;
 * valid until loco_peer_close). LOCO_ERR_INVALID_ARGUMENT past the fragments or its tensors. */
LOCO_API loco_status loco_peer_fragment_tensor_count(const loco_peer* peer, size_t fragment,
                                                     size_t* count);
LOCO_API loco_status loco_peer_fragment_tensor(const loco_peer* peer, size_t fragment, size_t index,
                                               const char** name);
/* The fragment tensor `name` belongs to; LOCO_ERR_INVALID_ARGUMENT for a name the model lacks. */
LOCO_API loco_status loco_peer_fragment_of(const loco_peer* peer, const char* name,
                                           size_t* fragment);
/* The fragment the next round covers (the started round's, while one is started). */
LOCO_API loco_status loco_peer_fragment_next(const loco_peer* peer, size_t* fragment);
/* What the trainer does after inner step `step` (above). */
LOCO_API loco_status loco_peer_fragment_due(const loco_peer* peer, uint64_t step, loco_due* due);
/* Starts the next fragment's round from its tensors' buffers; `step`: the trainer's inner step
 * (the round is due to land τ steps later). `fragment` (may be null) receives its index.
 * LOCO_ERR_STATE while a round is started (land it first), before join, after leave. */
LOCO_API loco_status loco_peer_fragment_start(loco_peer* peer, uint64_t step, float loss,
                                              size_t* fragment);
/* `*ready` = 1 when a started round's outcome is in: loco_peer_fragment_land would not wait. */
LOCO_API loco_status loco_peer_fragment_ready(const loco_peer* peer, int* ready);
/* Lands the started round (above), waiting for it unless `wait` is 0 (then LOCO_ERR_NOT_READY,
 * nothing changed, while it is not ready). LOCO_ERR_STATE when no round is started.
 * `result->times`: gather_s the fragment's buffers read at start and land, delta_s its Δ,
 * exchange_s the land's wait for the group and the outer step and merge, write_back_s. */
LOCO_API loco_status loco_peer_fragment_land(loco_peer* peer, int wait, loco_round_result* result);

/* The shared state's hash (LOCO_HASH_BYTES) and round, as of the last join or round. */
LOCO_API loco_status loco_peer_state_hash(const loco_peer* peer, uint8_t hash[LOCO_HASH_BYTES],
                                          uint64_t* round);

/* Checkpoint of loco's part: the shared state (θ at the last round and the outer momentum, by
 * tensor name, fp32; SparseLoCo: θ and this peer's error-feedback accumulator e, so that a resume
 * sends what it would have sent) and its round, written to `path` atomically as a safetensors
 * file with a digest (docs/PYTORCH.md, "Checkpoints"). After join (also after leave). The trainer
 * saves its own model and optimizer beside it. LOCO_ERR_IO when the file cannot be written. */
LOCO_API loco_status loco_peer_save(loco_peer* peer, const char* path);
/* Reads a file loco_peer_save wrote, before join: the peer joins with that state, which the run
 * takes when it is still at it (loco_join_info.fetched = 0, .round = the file's) and replaces by
 * the run's current state otherwise (fetched = 1; SparseLoCo's e then starts again from 0).
 * LOCO_ERR_IO: the file cannot be read; LOCO_ERR_FORMAT: it is damaged, truncated or not loco's
 * (its sizes are checked before anything is allocated); LOCO_ERR_CONFIG: another run config wrote
 * it (the option named). A failed load leaves the peer as it was. */
LOCO_API loco_status loco_peer_load(loco_peer* peer, const char* path);

/* Tells the tracker this peer leaves; rounds are refused afterwards. */
LOCO_API loco_status loco_peer_leave(loco_peer* peer, const char* reason);

/* Makes the blocking call in progress on `peer` (join, round) return soon: join with
 * LOCO_ERR_INTERRUPTED, a round skipped. Later blocking calls return at once the same way. Any
 * thread, or a signal handler. */
LOCO_API void loco_peer_interrupt(loco_peer* peer);

/* The genesis of a run of the trainer's own model (docs/PYTORCH.md, "Your own model"): a run config
 * of [model] kind = "external" names a genesis file, a safetensors file of the model's tensors
 * (names, shapes, order) and their initial values, by its BLAKE2b-256, which every peer and the
 * tracker check. loco_write_genesis writes that file from the trainer's tensors, in the order
 * given (loco keeps it: the state's layout and the fragments of Streaming DiLoCo follow it),
 * deterministically (the same tensors give the same bytes), atomically. A bf16 tensor is written
 * as its exact fp32 values. `blake2b_hex` (may be null) receives the file's hash, 64 hex digits
 * and a terminating zero; `config_lines` (may be null) the lines to put in the run config
 * ([model] kind, genesis, genesis-blake2b), valid until the next call on this thread.
 * LOCO_ERR_INVALID_ARGUMENT names the tensor: a null name, shape or data, a dimension of 0, a
 * rank over 8, a name repeated or with a control character, no tensor or more than 65,536;
 * LOCO_ERR_IO: the file cannot be written. */
typedef enum loco_dtype { LOCO_DTYPE_F32 = 0, LOCO_DTYPE_BF16 = 1 } loco_dtype;

typedef struct loco_tensor {
  const char* name;
  const size_t* shape; /* `rank` sizes (null when rank is 0: a scalar) */
  size_t rank;
  loco_dtype dtype;
  const void* data; /* row-major, contiguous: floats, or bf16s as uint16_t */
} loco_tensor;

LOCO_API loco_status loco_write_genesis(const char* path, const loco_tensor* tensors, size_t count,
                                        char blake2b_hex[65], const char** config_lines);

#ifdef __cplusplus
}
#endif

#endif /* LOCO_LOCO_H */
