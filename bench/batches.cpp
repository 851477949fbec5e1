// bench/run.sh batches: the data side of a training step. Opening (mmap + validating) a 100M-token
// file, and filling GPT batches (16 × 128, one shard of 4) from it. Last line:
// "batches: validate_gtok_s=... batch_mtok_s=... batch_us=..."

#include <cstdio>
#include <filesystem>
#include <vector>

#include "bench_timer.hpp"
#include "loco/data/batch_sampler.hpp"
#include "loco/data/markov_source.hpp"
#include "loco/data/token_file.hpp"

int main() {
  constexpr std::size_t kTokens = 100'000'000;
  const loco::data::MarkovSource source({});  // the default: V=256, order 1
  const auto path = std::filesystem::temp_directory_path() / "loco-bench-tokens.bin";
  loco::data::write_token_file(path, source.generate(kTokens, 1));

  const double open_s = loco::bench::best_seconds(3, [&] {
    const loco::data::TokenFile file(path, 256);
    loco::bench::keep(file);
  });

  const loco::data::TokenFile file(path, 256);
  loco::data::BatchSampler sampler(
      file.tokens(),
      {.batch_size = 16, .context = 128, .seed = 1, .shard = {.index = 1, .count = 4}});
  loco::data::Batch batch;
  constexpr int kBatches = 20'000;
  const double batches_s = loco::bench::best_seconds(3, [&] {
    for (int i = 0; i < kBatches; ++i) sampler.next(batch);
    loco::bench::keep(batch);
  });
  std::filesystem::remove(path);

  const double batch_tokens = 16.0 * 128.0 * kBatches;
  std::printf("token file of %zu tokens: open+validate %.3f s; %d batches of 16x128: %.3f s\n",
              kTokens, open_s, kBatches, batches_s);
  std::printf("batches: validate_gtok_s=%.2f batch_mtok_s=%.1f batch_us=%.2f\n",
              kTokens / open_s / 1e9, batch_tokens / batches_s / 1e6, batches_s / kBatches * 1e6);
}
