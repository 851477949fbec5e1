#include "closest_option.hpp"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <utility>
#include <vector>

namespace loco::cli {
namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

struct Renamed {
  std::string_view old_name, new_name, conversion;
};
constexpr Renamed kRenamed[] = {
    {"train.eval-batches", "train.eval-windows", "windows, not batches: eval-batches × batch"},
};

}  // namespace

std::string renamed_option(const CLI::App& app, const std::string& name) {
  for (const Renamed& r : kRenamed) {
    if (name != r.old_name) continue;
    for (const CLI::Option* option : app.get_options()) {
      if (option->get_single_name() == r.new_name)
        return "'" + std::string(r.new_name) + "' (" + std::string(r.conversion) + ")";
    }
  }
  return "";
}

std::string closest_option(const CLI::App& app, const std::string& name) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(3, name.size() / 3) + 1;
  for (const CLI::Option* option : app.get_options()) {
    const std::string candidate = option->get_single_name();
    const std::size_t d = edit_distance(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace loco::cli
