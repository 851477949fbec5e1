// bench/run.sh hash: BLAKE2b throughput over a 256 MiB arena, next to memcpy of the same buffer.
// Last line: "hash: blake2b_gb_s=... memcpy_gb_s=... blake2b_vs_memcpy=..."

#include "loco/core/hash.hpp"

#include <cstdio>
#include <cstring>
#include <vector>

#include "bench_timer.hpp"
#include "loco/core/arena.hpp"
#include "loco/core/rng.hpp"

int main() {
  constexpr std::size_t kFloats = std::size_t{64} << 20;  // 256 MiB
  auto layout =
      std::make_shared<const loco::ArenaLayout>(std::vector<loco::TensorSpec>{{"w", {kFloats}}});
  loco::Arena arena(layout);
  loco::Rng rng(1);
  for (float& v : arena.tensor(0)) v = rng.uniform();
  std::vector<float> copy(kFloats);

  const double gb = static_cast<double>(kFloats * sizeof(float)) / 1e9;
  loco::Digest digest{};
  const double hash_s = loco::bench::best_seconds(3, [&] { digest = loco::blake2b(arena); });
  const double copy_s = loco::bench::best_seconds(3, [&] {
    std::memcpy(copy.data(), arena.data().data(), kFloats * sizeof(float));
    loco::bench::keep(copy);
  });
  std::printf("blake2b of %.0f MiB: %.3f s, digest %s\n", gb * 1e9 / (1 << 20), hash_s,
              loco::to_hex(digest).substr(0, 16).c_str());
  std::printf("hash: blake2b_gb_s=%.2f memcpy_gb_s=%.2f blake2b_vs_memcpy=%.3f\n", gb / hash_s,
              gb / copy_s, copy_s / hash_s);
}
