// bench-workers: M workers in one process, one thread each, each on its own data shard, training
// together with the run config's strategy through the in-process groups (ThreadGroup for DiLoCo
// and DDP, LocalAsyncGroup for Streaming, ThreadGather for DeMo). loco-train is one worker alone;
// this is the M-worker comparison of strategies without a network.
//
// Usage: bench-workers --config configs/tiny.toml --workers 4 [--outer-disagreement-block N]
//          [--section.key VALUE ...]
// Bytes: "handed over" is what one worker gives its group over the run (its encoded updates);
// "wire" is what a worker would send on a real network with loco's collectives: a ring all-reduce
// sends 2(M−1)/M times its vector (DiLoCo, DDP, Streaming), DeMo's direct all-gather sends its
// message to each of the M − 1 others (+ 21 bytes of header each).
// Last line: "workers: kind=... workers=M steps=N val_loss=... handed_over_bytes=...
//             wire_bytes=... seconds=..."

#include <chrono>
#include <cstdio>
#include <thread>

#include "loco/cli/app.hpp"
#include "loco/cli/train_options.hpp"
#include "loco/compress/codec.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/core/log.hpp"
#include "loco/proto/all_gather.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/local_async_group.hpp"
#include "loco/train/local_gather.hpp"
#include "loco/train/local_groups.hpp"
#include "loco/train/make_strategy.hpp"
#include "loco/train/run_end.hpp"
#include "loco/train/step_loop.hpp"
#include "loco/train/strategy_kinds.hpp"

namespace {

using namespace loco;
using namespace loco::train;

// What one worker hands its group over `steps` steps of a blocking all-reduce strategy: the
// codec's message for the whole arena, once per round (DDP: a round a step; DiLoCo: one per H).
std::uint64_t all_reduce_bytes(const TrainConfig& c, std::size_t arena_floats) {
  return final_round(c) *
         compress::make_codec(c.strategy.codec_spec())->max_encoded_size(arena_floats);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench-workers: M workers of one strategy in one process"};
  cli::CommonOptions common;
  cli::add_common_options(app, common);
  TrainConfig config;
  cli::add_train_options(app, config);
  std::size_t workers = 4;
  app.add_option("--workers", workers, "workers (threads), each on its own shard")
      ->capture_default_str();
  std::size_t disagreement_block = 0;
  app.add_option("--outer-disagreement-block", disagreement_block,
                 "DiLoCo: scale each block of this many values of the mean by how much the "
                 "workers' updates disagree (an experiment, train/disagreement_scale.hpp; 0: off)")
      ->capture_default_str();
  if (auto exit_code = cli::parse(app, argc, argv)) return *exit_code;
  init_logging(common.log_level, common.log_format);
  try {
    config.validate();
    model::set_compute_threads(1);
    std::vector<TrainConfig> configs(workers, config);
    std::vector<std::unique_ptr<Corpus>> corpora;
    std::vector<std::unique_ptr<InnerLoop>> loops;
    for (std::size_t w = 0; w < workers; ++w) {
      configs[w].data.shard =
          data::ShardSpec{static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(workers)};
      corpora.push_back(std::make_unique<Corpus>(
          configs[w].data, static_cast<std::uint32_t>(config.model.gpt.vocab)));
      loops.push_back(std::make_unique<InnerLoop>(configs[w], *corpora[w]));
    }
    if (disagreement_block > 0 && config.strategy.kind != "diloco")
      throw Error(ErrorCategory::config, "--outer-disagreement-block is for DiLoCo's rounds");
    ThreadGroup group(workers, disagreement_block);
    LocalAsyncGroup async(workers, config.strategy.fragment_codec);
    ThreadGather gather(workers);
    std::vector<Digest> hashes(workers);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (std::size_t w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        InnerLoop& loop = *loops[w];
        const auto strategy =
            make_strategy(configs[w], loop, group.member(w), &async.member(w), &gather.member(w));
        strategy->begin(loop, Start::fresh);
        const auto print_validation = [&](const StepOutcome& s) {
          if (w == 0 && config.train.eval_every > 0 && s.step % config.train.eval_every == 0)
            std::fprintf(stderr, "step %llu validation loss %.4f\n",
                         static_cast<unsigned long long>(s.step), loop.evaluate());
        };
        run_steps(loop, *strategy, [&] { return loop.steps() < config.train.steps; }, nullptr,
                  {.computed = {}, .done = print_validation});
        hashes[w] = strategy->shared().hash();
      });
    }
    for (auto& t : threads) t.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (std::size_t w = 1; w < workers; ++w)
      if (hashes[w] != hashes[0]) throw Error(ErrorCategory::protocol, "workers disagree");

    const RoundGroup rounds = strategy_row(config.strategy.kind).group;
    const double m = static_cast<double>(workers);
    std::uint64_t handed = 0;
    double wire = 0;
    if (rounds == RoundGroup::all_gather) {
      handed = gather.bytes_contributed(0);
      wire = (m - 1) * static_cast<double>(handed + config.train.steps *
                                                        proto::AllGatherConfig::kHeaderBytes);
    } else {
      handed = rounds == RoundGroup::asynchronous
                   ? async.bytes_handed_over(0)
                   : all_reduce_bytes(config, loops[0]->layout()->size());
      wire = 2 * (m - 1) / m * static_cast<double>(handed);
    }
    const float val = loops[0]->evaluate();
    std::printf(
        "%s, %zu workers, %llu steps: validation loss %.4f, %llu bytes handed over and "
        "%.0f on the wire per worker, %.1f s, state %s\n",
        describe_strategy(config).c_str(), workers,
        static_cast<unsigned long long>(config.train.steps), val,
        static_cast<unsigned long long>(handed), wire, seconds,
        to_hex(hashes[0]).substr(0, 16).c_str());
    std::printf(
        "workers: kind=%s workers=%zu steps=%llu val_loss=%.4f handed_over_bytes=%llu "
        "wire_bytes=%.0f seconds=%.1f\n",
        config.strategy.kind.c_str(), workers, static_cast<unsigned long long>(config.train.steps),
        val, static_cast<unsigned long long>(handed), wire, seconds);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "bench-workers: %s\n", e.what());
    return 1;
  }
}
