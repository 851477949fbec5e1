// Smoke driver for a libFuzzer target, so that every fuzz target also runs in CI without clang:
// it feeds the target its seeds, then deterministic random inputs and mutations of the seeds.
//
//   fuzz-smoke-NAME [--runs N] [--seed S]     run N inputs (default 20000)
//   fuzz-smoke-NAME --write-seeds DIR         write the target's seeds as a libFuzzer corpus
//   fuzz-smoke-NAME FILE...                   replay inputs (e.g. a crash file from libFuzzer)

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_seeds.hpp"
#include "loco/core/rng.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

// Targets without seeds get this empty default.
[[gnu::weak]] std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  return {};
}

namespace {

using Bytes = std::vector<std::uint8_t>;

void run(const Bytes& input) {
  // Copy into an exactly sized heap buffer so ASan catches any read past the end.
  auto* buffer = static_cast<std::uint8_t*>(std::malloc(input.size() + 1));
  std::copy(input.begin(), input.end(), buffer);
  LLVMFuzzerTestOneInput(buffer, input.size());
  std::free(buffer);
}

Bytes random_bytes(loco::Rng& rng) {
  Bytes out(rng.below(rng.below(8) == 0 ? 65536 : 512));
  for (auto& b : out) b = static_cast<std::uint8_t>(rng.next_u64());
  return out;
}

Bytes mutate(Bytes input, loco::Rng& rng) {
  const int edits = 1 + static_cast<int>(rng.below(4));
  for (int e = 0; e < edits; ++e) {
    switch (rng.below(6)) {
      case 0:  // flip a bit
        if (!input.empty()) input[rng.below(input.size())] ^= std::uint8_t(1u << rng.below(8));
        break;
      case 1:  // truncate
        input.resize(rng.below(input.size() + 1));
        break;
      case 2:  // overwrite a byte with an extreme value
        if (!input.empty()) {
          const std::uint8_t extremes[] = {0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff};
          input[rng.below(input.size())] = extremes[rng.below(6)];
        }
        break;
      case 3:  // insert random bytes
        for (std::uint64_t i = 0, n = 1 + rng.below(16); i < n; ++i) {
          input.insert(input.begin() + static_cast<std::ptrdiff_t>(rng.below(input.size() + 1)),
                       static_cast<std::uint8_t>(rng.next_u64()));
        }
        break;
      case 4:  // overwrite four bytes (a length or count field) with a random word
        if (input.size() >= 4) {
          const std::size_t at = rng.below(input.size() - 3);
          const std::uint64_t word = rng.below(2) ? rng.next_u64() : ~std::uint64_t{0};
          for (int i = 0; i < 4; ++i) input[at + i] = static_cast<std::uint8_t>(word >> (8 * i));
        }
        break;
      default:  // append garbage
        for (std::uint64_t i = 0, n = 1 + rng.below(64); i < n; ++i)
          input.push_back(static_cast<std::uint8_t>(rng.next_u64()));
    }
  }
  return input;
}

Bytes read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path);
    std::exit(2);
  }
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

int main(int argc, char** argv) {
  long runs = 20000;
  std::uint64_t seed = 1;
  std::vector<const char*> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::strtol(argv[++i], nullptr, 10);
    } else if (arg == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--write-seeds" && i + 1 < argc) {
      const std::filesystem::path dir = argv[++i];
      std::filesystem::create_directories(dir);
      const auto seeds = loco_fuzz_seeds();
      for (std::size_t s = 0; s < seeds.size(); ++s) {
        std::ofstream(dir / ("seed-" + std::to_string(s)), std::ios::binary)
            .write(reinterpret_cast<const char*>(seeds[s].data()),
                   static_cast<std::streamsize>(seeds[s].size()));
      }
      std::printf("wrote %zu seeds to %s\n", seeds.size(), dir.c_str());
      return 0;
    } else {
      files.push_back(argv[i]);
    }
  }
  if (!files.empty()) {
    for (const char* f : files) run(read_file(f));
    std::printf("replayed %zu inputs\n", files.size());
    return 0;
  }

  const auto seeds = loco_fuzz_seeds();
  for (const auto& s : seeds) run(s);
  loco::Rng rng(seed);
  for (long i = 0; i < runs; ++i) {
    if (!seeds.empty() && rng.below(4) != 0) {
      run(mutate(seeds[rng.below(seeds.size())], rng));
    } else {
      run(random_bytes(rng));
    }
  }
  std::printf("fuzz smoke: %zu seeds and %ld generated inputs, no crash\n", seeds.size(), runs);
  return 0;
}
