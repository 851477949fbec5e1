#pragma once
// What the dataset program tests share: a dataset the real loco-prepare makes of an English text,
// the run config of the tests' small GPT trained on it, and a copy damaged on the way.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "english_text.hpp"
#include "loco/data/dataset_manifest.hpp"
#include "peer_process.hpp"
#include "run_prepare.hpp"
#include "tracker_process.hpp"

namespace loco::test {

struct PreparedDataset {
  std::filesystem::path folder;  // the organiser's: shards, tokenizer.model, manifest.txt
  std::string hash;              // its manifest's, "" (and a test failure) when it was not made
};

// loco-prepare on 2,000 lines of english_text(): a 400-piece SentencePiece model, shards of 4,096
// tokens, in `dir`/data.
inline PreparedDataset prepare_english_dataset(const std::filesystem::path& dir) {
  std::ofstream(dir / "text.txt", std::ios::binary) << english_text(2000);
  PreparedDataset out{.folder = dir / "data", .hash = {}};
  const std::string prepared =
      run_prepare("--input " + (dir / "text.txt").string() + " --out-dir " + out.folder.string() +
                  " --tokenizer sentencepiece --tokenizer.vocab 400 --shard-tokens 4096");
  const auto at = prepared.find("manifest-hash: ");
  if (at == std::string::npos || prepared.size() < at + 15 + 64) {
    ADD_FAILURE() << "loco-prepare printed no manifest-hash:\n" << prepared;
    return out;
  }
  out.hash = prepared.substr(at + 15, 64);
  return out;
}

// Writes to `path` the run config of the tests' GPT (vocabulary 400) trained for `rounds` DiLoCo
// rounds on the dataset whose manifest hashes to `hash`; `data_lines`: the rest of its [data]
// section (where the manifest is, the mirrors). Returns the path.
inline std::string write_dataset_run_config(const std::filesystem::path& path,
                                            const std::string& hash, const std::string& data_lines,
                                            std::uint64_t rounds) {
  std::ofstream(path) << "log-level = \"info\"\n"
                         "[model]\nkind = \"gpt\"\nvocab = 400\ncontext = 32\nn-layer = 1\n"
                         "n-head = 2\nd-model = 32\n"
                         "[data]\nsource = \"dataset\"\nmanifest-hash = \""
                      << hash << "\"\n"
                      << data_lines << "[optim]\nlr = 3e-3\nmin-lr = 3e-4\nwarmup-steps = 4\n"
                      << "[train]\nsteps = " << rounds * kInnerSteps
                      << "\nbatch = 8\nseed = 1\nthreads = 1\neval-every = 0\neval-windows = 16\n"
                      << kDiLoCoStrategy;
  return path.string();
}

// The names of the manifest shards of the dataset in `data` that data shard `index` of `count`
// maps to.
inline std::vector<std::string> shards_of(const std::filesystem::path& data, std::uint32_t index,
                                          std::uint32_t count) {
  const data::DatasetManifest m = data::decode_manifest(read_text(data / "manifest.txt"));
  const data::ShardSpan span = data::train_shards_of(m, {index, count});
  std::vector<std::string> names;
  for (std::size_t k = span.first; k < span.end; ++k) names.push_back(m.train[k].name);
  return names;
}

// A mirror process that prints its base URL on its first line ("... http://HOST:PORT/ ...").
struct Mirror {
  Mirror(const std::vector<std::string>& argv, const std::filesystem::path& log)
      : process(argv, log) {
    const std::string line = process.read_line();
    const auto at = line.find("http://");
    if (at != std::string::npos) url = line.substr(at, line.find('/', at + 7) + 1 - at);
  }
  ChildProcess process;
  std::string url;
};

// Debian's python3 serving `folder` on loopback ("Serving HTTP on 127.0.0.1 port N (http://...)"):
// its command line, and the mirror.
inline std::vector<std::string> python_mirror_argv(const std::filesystem::path& folder) {
  return {"/usr/bin/python3", "-u",        "-m",          "http.server",  "0",
          "--bind",           "127.0.0.1", "--directory", folder.string()};
}
inline Mirror python_mirror(const std::filesystem::path& folder, const std::filesystem::path& log) {
  return Mirror(python_mirror_argv(folder), log);
}

// Waits (at most 60 s) until the tracker's log holds `part` `times` times.
inline bool tracker_logged(const TrackerProcess& tracker, const std::string& part,
                           std::size_t times = 1) {
  for (int i = 0; i < 1200; ++i) {
    if (test::occurrences(tracker.log(), part) >= times) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Flips a bit of `file`'s byte `at`: a copy that lost a bit on the way.
inline void flip_a_bit(const std::filesystem::path& file, std::streamoff at) {
  std::fstream f(file, std::ios::binary | std::ios::in | std::ios::out);
  f.seekg(at);
  const char c = static_cast<char>(f.get());
  f.seekp(at);
  f.put(static_cast<char>(c ^ 0x10));
}

}  // namespace loco::test
