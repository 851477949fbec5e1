// bench-train_step: trains loco's GPT on random tokens and reports tokens/s, achieved GFLOP/s
// and an Eigen sgemm peak measured in the same run. bench/train-vs-torch.sh runs it next to the
// PyTorch reference (bench/train_torch.py) on the same model and optimiser.
//
// Usage: bench-train_step [--steps N] [--threads T] [--layers L] [--d-model C] [--heads H]
//                         [--context T] [--batch B] [--vocab V] [--dump DIR]
// --dump DIR writes one batch, the initial parameters and their gradient (raw little-endian
// arrays plus a manifest) for bench/train_torch.py --check.
// Last line: "train_step: tok_s=... gflop_s=... sgemm_peak_gflop_s=... peak_fraction=... loss=..."

#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "bench_timer.hpp"
#include "loco/core/arena_maps.hpp"
#include "loco/core/rng.hpp"
#include "loco/model/gpt.hpp"
#include "loco/optim/adamw.hpp"

namespace {

struct Options {
  int steps = 20, threads = 2;
  std::size_t layers = 4, d_model = 128, heads = 4, context = 128, batch = 16, vocab = 256;
  std::string dump;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char* value = argv[i + 1];
    auto size = [&] { return static_cast<std::size_t>(std::strtoull(value, nullptr, 10)); };
    if (key == "--steps")
      o.steps = std::atoi(value);
    else if (key == "--threads")
      o.threads = std::atoi(value);
    else if (key == "--layers")
      o.layers = size();
    else if (key == "--d-model")
      o.d_model = size();
    else if (key == "--heads")
      o.heads = size();
    else if (key == "--context")
      o.context = size();
    else if (key == "--batch")
      o.batch = size();
    else if (key == "--vocab")
      o.vocab = size();
    else if (key == "--dump")
      o.dump = value;
    else {
      std::fprintf(stderr, "bench-train_step: unknown option %s\n", key.c_str());
      std::exit(2);
    }
  }
  return o;
}

// Best-of-5 GFLOP/s of a 512×512 · 512×2048 float product (the size class of the model's).
double sgemm_peak_gflop_s() {
  loco::RowMatrixXf a = loco::RowMatrixXf::Random(2048, 512);
  loco::RowMatrixXf b = loco::RowMatrixXf::Random(512, 512);
  loco::RowMatrixXf c(2048, 512);
  const double s = loco::bench::best_seconds(5, [&] {
    c.noalias() = a * b;
    loco::bench::keep(c);
  });
  return 2.0 * 2048 * 512 * 512 / s / 1e9;
}

void write_raw(const std::string& path, const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

void dump(const std::string& dir, const loco::model::Gpt& gpt, const loco::Arena& params,
          const loco::Arena& grads, const std::vector<std::int32_t>& inputs,
          const std::vector<std::int32_t>& targets, float loss) {
  std::ofstream manifest(dir + "/manifest.txt");
  manifest.precision(9);
  const auto& cfg = gpt.config();
  manifest << "config " << cfg.vocab << ' ' << cfg.context << ' ' << cfg.n_layer << ' '
           << cfg.n_head << ' ' << cfg.d_model << '\n';
  manifest << "batch " << inputs.size() / cfg.context << ' ' << cfg.context << '\n';
  manifest << "loss " << loss << '\n';
  for (const auto& t : gpt.layout()->tensors()) {
    manifest << "tensor " << t.name << ' ' << t.offset << ' ' << t.numel << '\n';
  }
  write_raw(dir + "/params.bin", params.data().data(), params.data().size_bytes());
  write_raw(dir + "/grads.bin", grads.data().data(), grads.data().size_bytes());
  write_raw(dir + "/inputs.bin", inputs.data(), inputs.size() * sizeof(std::int32_t));
  write_raw(dir + "/targets.bin", targets.data(), targets.size() * sizeof(std::int32_t));
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  loco::model::set_compute_threads(o.threads);
  const loco::model::GptConfig cfg{o.vocab, o.context, o.layers, o.heads, o.d_model};
  loco::model::Gpt gpt(cfg, o.batch);
  loco::Arena params(gpt.layout()), grads(gpt.layout());
  gpt.init(params, 1337);
  loco::optim::AdamW opt(gpt.layout(), loco::optim::AdamWConfig{});

  const std::size_t n = o.batch * o.context;
  std::vector<std::int32_t> inputs(n), targets(n);
  loco::Rng rng(7);
  auto next_batch = [&] {
    for (std::size_t i = 0; i < n; ++i) {
      inputs[i] = static_cast<std::int32_t>(rng.below(o.vocab));
      targets[i] = static_cast<std::int32_t>(rng.below(o.vocab));
    }
    return loco::model::TokenBatch{inputs, targets, o.batch, o.context};
  };
  float loss = 0;
  auto step = [&] {
    loss = gpt.forward(params, next_batch());
    gpt.backward(params, grads);
    opt.step(params, grads, 3e-4f);
  };
  if (!o.dump.empty()) {
    const auto batch = next_batch();
    const float initial = gpt.forward(params, batch);
    gpt.backward(params, grads);
    dump(o.dump, gpt, params, grads, inputs, targets, initial);
    std::printf("dumped one batch, parameters and gradients to %s (loss %.6f)\n", o.dump.c_str(),
                initial);
    return 0;
  }

  step();  // warm-up: page in the activations
  // Best of three timed runs of o.steps steps each (the machine is shared).
  const double seconds = loco::bench::best_seconds(3, [&] {
    for (int i = 0; i < o.steps; ++i) step();
  });
  const double tok_s = static_cast<double>(n) * o.steps / seconds;
  const double gflop_s = tok_s * gpt.flops_per_token() / 1e9;
  const double peak = sgemm_peak_gflop_s();
  std::printf("loco GPT %zuL d%zu h%zu ctx%zu batch %zu vocab %zu, %zu params, %d threads\n",
              o.layers, o.d_model, o.heads, o.context, o.batch, o.vocab,
              gpt.layout()->parameter_count(), o.threads);
  std::printf(
      "train_step: tok_s=%.0f gflop_s=%.1f sgemm_peak_gflop_s=%.1f peak_fraction=%.3f "
      "loss=%.4f\n",
      tok_s, gflop_s, peak, gflop_s / peak, loss);
}
