#include "loco/train/trainer.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>

#include "loco/core/hash.hpp"
#include "loco/data/batch_sampler.hpp"
#include "loco/model/gpt.hpp"
#include "loco/model/mlp.hpp"
#include "loco/train/corpus.hpp"
#include "loco/train/train_state_file.hpp"

namespace loco::train {
namespace {

using Clock = std::chrono::steady_clock;

std::unique_ptr<model::Model> make_model(const TrainConfig& config) {
  const model::GptConfig& g = config.model.gpt;
  if (config.model.kind == "mlp") {
    return std::make_unique<model::Mlp>(
        model::MlpConfig{g.vocab, config.model.mlp_embed, config.model.mlp_hidden, g.context},
        config.train.batch);
  }
  return std::make_unique<model::Gpt>(g, config.train.batch);
}

model::TokenBatch view(const data::Batch& b) {
  return model::TokenBatch{b.inputs, b.targets, b.batch_size, b.context};
}

// Mean loss over the first eval_batches batches of the validation tokens (always the same ones,
// so successive values are comparable).
float evaluate(model::Model& model, const Arena& params, const Corpus& corpus,
               const TrainConfig& config) {
  data::BatchSampler sampler(
      corpus.validation(),
      data::SamplerConfig{config.train.batch, static_cast<std::uint32_t>(config.model.gpt.context),
                          config.train.seed, data::ShardSpec{0, 1}});
  data::Batch batch;
  double total = 0;
  for (std::uint32_t i = 0; i < config.train.eval_batches; ++i) {
    sampler.next(batch);
    total += model.forward(params, view(batch));
  }
  return static_cast<float>(total / config.train.eval_batches);
}

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}h{:02}m", s / 3600, s / 60 % 60)
                   : fmt::format("{}m{:02}s", s / 60, s % 60);
}

std::string versus_floor(double loss, const std::optional<double>& floor) {
  if (!floor) return "";
  return fmt::format(" (floor {:.4f}, {:+.1f}%)", *floor, 100.0 * (loss / *floor - 1.0));
}

}  // namespace

TrainSummary run_training(const TrainConfig& config, const std::atomic<bool>* stop) {
  config.validate();
  model::set_compute_threads(config.train.threads);
  const std::uint32_t vocab = static_cast<std::uint32_t>(config.model.gpt.vocab);
  const std::uint32_t context = static_cast<std::uint32_t>(config.model.gpt.context);

  // 1. Data: this process's shard of the training tokens.
  const Corpus corpus(config.data, vocab);
  data::BatchSampler sampler(
      corpus.train(),
      data::SamplerConfig{config.train.batch, context, config.train.seed, config.data.shard});

  // 2. Model, parameters, optimizer, schedule.
  const auto model = make_model(config);
  Arena params(model->layout()), grads(model->layout());
  model->init(params, config.train.seed);
  optim::AdamW optimizer(model->layout(), config.adamw);
  optim::LrSchedule schedule = config.lr;
  schedule.total_steps = config.train.steps;

  // 3. Resume: parameters, moments, step and data cursor, all bit-exact.
  TrainSummary summary;
  summary.parameters = model->layout()->parameter_count();
  summary.entropy_floor = corpus.entropy_floor();
  const std::string identity = config.identity();
  std::uint64_t step = 0;
  if (!config.train.resume.empty()) {
    const RunPosition at = load_train_state(config.train.resume, params, optimizer, identity);
    sampler.restore(at.cursor);
    step = at.step;
    spdlog::info("resumed from {} at step {}", config.train.resume, step);
  }
  summary.start_step = step;
  const std::uint64_t last_step = config.train.stop_at > 0
                                      ? std::min(config.train.stop_at, config.train.steps)
                                      : config.train.steps;
  auto checkpoint = [&] {
    if (config.train.checkpoint.empty()) return;
    save_train_state(config.train.checkpoint, params, optimizer, RunPosition{step, sampler.save()},
                     identity);
    summary.checkpoint = config.train.checkpoint;
    spdlog::info("checkpoint: {} (step {})", config.train.checkpoint, step);
  };
  spdlog::info("training a {} of {} parameters for steps {}..{} on {} training tokens, {} threads",
               config.model.kind, summary.parameters, step, last_step,
               sampler.range().end - sampler.range().begin, config.train.threads);

  // 4. The loop.
  const double tokens_per_step = static_cast<double>(config.train.batch) * context;
  data::Batch batch;
  const auto start = Clock::now();
  auto interval_start = start;
  double interval_loss = 0;
  std::uint64_t interval_steps = 0;
  while (step < last_step && !(stop != nullptr && stop->load())) {
    sampler.next(batch);
    const float loss = model->forward(params, view(batch));
    model->backward(params, grads);
    const float lr = schedule.at(step);
    const float grad_norm = optimizer.step(params, grads, lr);
    ++step;
    interval_loss += loss;
    ++interval_steps;

    if (step % config.train.log_every == 0 || step == last_step) {
      const auto now = Clock::now();
      const double interval_s = std::chrono::duration<double>(now - interval_start).count();
      const double elapsed_s = std::chrono::duration<double>(now - start).count();
      summary.train_loss = static_cast<float>(interval_loss / interval_steps);
      const double eta_s =
          elapsed_s / static_cast<double>(step - summary.start_step) * (last_step - step);
      spdlog::info(
          "step {:>6}/{} | loss {:.4f}{} | lr {:.2e} | grad norm {:.3f} | {:.0f} tok/s | "
          "ETA {}",
          step, config.train.steps, summary.train_loss,
          versus_floor(summary.train_loss, summary.entropy_floor), lr, grad_norm,
          tokens_per_step * interval_steps / interval_s, format_duration(eta_s));
      interval_start = now;
      interval_loss = 0;
      interval_steps = 0;
    }
    if (config.train.eval_every > 0 && step % config.train.eval_every == 0 && step != last_step) {
      const float val = evaluate(*model, params, corpus, config);
      spdlog::info("step {:>6} | validation loss {:.4f}{}", step, val,
                   versus_floor(val, summary.entropy_floor));
    }
    if (config.train.checkpoint_every > 0 && step % config.train.checkpoint_every == 0 &&
        step != last_step) {
      checkpoint();
    }
  }

  // 5. At exit: validation loss and a checkpoint of where the run stopped.
  summary.end_step = step;
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (step > summary.start_step) {
    summary.tokens_per_second =
        tokens_per_step * static_cast<double>(step - summary.start_step) / summary.seconds;
  }
  summary.val_loss = evaluate(*model, params, corpus, config);
  spdlog::info("step {:>6} | validation loss {:.4f}{}", step, *summary.val_loss,
               versus_floor(*summary.val_loss, summary.entropy_floor));
  checkpoint();
  summary.params_blake2b = to_hex(blake2b(params));
  return summary;
}

}  // namespace loco::train
