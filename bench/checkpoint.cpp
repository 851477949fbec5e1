// bench/run.sh checkpoint: safetensors write (atomic, fsynced) and read (validated, digest
// checked) of a checkpoint the size of the small config's state: ~10M parameters plus two AdamW
// moments, 120 MB. Last line:
// "checkpoint: write_gb_s=... read_gb_s=... write_s=... read_s=..."

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_timer.hpp"
#include "loco/checkpoint/safetensors.hpp"
#include "loco/core/rng.hpp"

int main() {
  constexpr std::size_t kTensors = 30;               // 10 per kind: params, adam_m, adam_v
  constexpr std::size_t kFloatsPerTensor = 1 << 20;  // 4 MiB each
  loco::Rng rng(1);
  std::vector<std::vector<float>> storage(kTensors, std::vector<float>(kFloatsPerTensor));
  std::vector<loco::checkpoint::TensorRef> tensors;
  for (std::size_t t = 0; t < kTensors; ++t) {
    for (float& v : storage[t]) v = rng.normal();
    tensors.push_back({"tensor." + std::to_string(t), {1024, 1024}, storage[t]});
  }
  const auto path = std::filesystem::temp_directory_path() / "loco-bench-checkpoint.safetensors";
  const loco::checkpoint::Metadata metadata = {{"step", "1000"}};

  const double write_s = loco::bench::best_seconds(
      3, [&] { loco::checkpoint::write_safetensors(path, tensors, metadata); });
  const double read_s = loco::bench::best_seconds(3, [&] {
    const auto file = loco::checkpoint::SafetensorsFile::read(path);
    loco::bench::keep(file);
  });
  const double gb = static_cast<double>(std::filesystem::file_size(path)) / 1e9;
  std::filesystem::remove(path);
  std::printf("checkpoint of %.1f MB in %s (best of 3)\n", gb * 1e3, path.parent_path().c_str());
  std::printf("checkpoint: write_gb_s=%.2f read_gb_s=%.2f write_s=%.3f read_s=%.3f\n", gb / write_s,
              gb / read_s, write_s, read_s);
}
