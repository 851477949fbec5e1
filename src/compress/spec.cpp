#include "loco/compress/spec.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "loco/core/error.hpp"

namespace loco::compress {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

[[noreturn]] void config_error(std::string_view spec, const std::string& what) {
  throw Error(ErrorCategory::config, "codec spec '" + std::string(spec) + "': " + what);
}

}  // namespace

std::vector<StageSpec> parse_codec_spec(std::string_view text) {
  std::vector<StageSpec> stages;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t plus = std::min(text.find('+', start), text.size());
    const std::string_view part = text.substr(start, plus - start);
    const std::size_t colon = part.find(':');
    StageSpec stage{std::string(part.substr(0, colon)), {}};
    if (stage.name.empty()) {
      config_error(text, "stage " + std::to_string(stages.size() + 1) +
                             " has no codec name (write e.g. 'int8:block=256' or 'int8+zstd')");
    }
    if (colon != std::string_view::npos) {
      const std::string_view list = part.substr(colon + 1);
      std::size_t p = 0;
      while (p <= list.size()) {
        const std::size_t comma = std::min(list.find(',', p), list.size());
        const std::string_view item = list.substr(p, comma - p);
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
          config_error(text, "parameter '" + std::string(item) + "' of '" + stage.name +
                                 "' is not key=value");
        }
        std::string key(item.substr(0, eq));
        for (const auto& [k, v] : stage.params) {
          if (k == key) config_error(text, "parameter '" + key + "' is given twice");
        }
        stage.params.emplace_back(std::move(key), std::string(item.substr(eq + 1)));
        p = comma + 1;
      }
    }
    stages.push_back(std::move(stage));
    start = plus + 1;
  }
  return stages;
}

const std::string* StageParams::find(const std::string& key) {
  known_.push_back(key);
  for (const auto& [k, v] : stage_.params) {
    if (k == key) return &v;
  }
  return nullptr;
}

void StageParams::fail(const std::string& key, const std::string& value,
                       const std::string& expected) const {
  throw Error(ErrorCategory::config, "codec '" + stage_.name + "': " + key + "=" + value +
                                         " is invalid; expected " + expected);
}

std::uint64_t StageParams::get_uint(const std::string& key, std::uint64_t fallback,
                                    std::uint64_t min, std::uint64_t max) {
  const std::string* text = find(key);
  if (!text) return fallback;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  const std::string range =
      "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (ec != std::errc{} || end != text->data() + text->size() || value < min || value > max) {
    fail(key, *text, range);
  }
  return value;
}

float StageParams::get_float(const std::string& key, float fallback, float min, float max) {
  const std::string* text = find(key);
  if (!text) return fallback;
  char* end = nullptr;
  const float value = std::strtof(text->c_str(), &end);
  if (end != text->c_str() + text->size() || !std::isfinite(value) || value < min || value > max) {
    fail(key, *text, "a number in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return value;
}

std::string StageParams::get_choice(const std::string& key, const std::string& fallback,
                                    const std::vector<std::string>& choices) {
  const std::string* text = find(key);
  if (!text) return fallback;
  if (std::find(choices.begin(), choices.end(), *text) == choices.end()) {
    fail(key, *text, "one of " + join(choices));
  }
  return *text;
}

void StageParams::finish() const {
  for (const auto& [k, v] : stage_.params) {
    if (std::find(known_.begin(), known_.end(), k) == known_.end()) {
      throw Error(ErrorCategory::config,
                  "codec '" + stage_.name + "' has no parameter '" + k +
                      "'; valid ones: " + (known_.empty() ? std::string("none") : join(known_)));
    }
  }
}

}  // namespace loco::compress
