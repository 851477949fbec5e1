#include "tracker/dataset_files.hpp"

#include <charconv>
#include <fstream>

#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/data/dataset_manifest.hpp"

namespace loco::tracker {
namespace fs = std::filesystem;

namespace {

// The file's bytes, its size capped first.
std::string read_manifest(const fs::path& path) {
  std::error_code ec;
  const std::uint64_t size = fs::file_size(path, ec);
  if (ec)
    throw Error(ErrorCategory::io, "--tracker.dataset: '" + path.string() + "': " + ec.message());
  if (size > data::kMaxManifestBytes)
    throw Error(ErrorCategory::format,
                "--tracker.dataset: '" + path.string() + "' is larger than any manifest");
  std::string text(size, '\0');
  std::ifstream in(path, std::ios::binary);
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (static_cast<std::uint64_t>(in.gcount()) != size)
    throw Error(ErrorCategory::io, "--tracker.dataset: '" + path.string() + "' could not be read");
  return text;
}

bool parse_u64(std::string_view text, std::uint64_t& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

}  // namespace

std::shared_ptr<const DatasetFiles> DatasetFiles::open(const fs::path& folder) {
  auto served = std::make_shared<DatasetFiles>();
  const fs::path manifest_path = folder / data::kManifestName;
  const std::string text = read_manifest(manifest_path);
  const data::DatasetManifest manifest = data::decode_manifest(text);
  served->manifest_hash_ = to_hex(blake2b(std::as_bytes(std::span(text))));
  served->files_[data::kManifestName] = ServedFile{manifest_path, text.size(), true};
  const auto add = [&](const data::DatasetFile& file) {
    const fs::path path = folder / file.name;
    std::error_code ec;
    const std::uint64_t size = fs::file_size(path, ec);
    if (ec)
      throw Error(ErrorCategory::io, "--tracker.dataset: '" + path.string() + "': " + ec.message());
    if (size != file.bytes)
      throw Error(ErrorCategory::format, "--tracker.dataset: '" + path.string() + "' is " +
                                             std::to_string(size) + " bytes, its manifest says " +
                                             std::to_string(file.bytes));
    served->files_[file.name] = ServedFile{path, file.bytes, false};
  };
  if (manifest.tokenizer != "bytes") add(manifest.tokenizer_model);
  for (const data::DatasetFile& file : manifest.train) add(file);
  for (const data::DatasetFile& file : manifest.validation) add(file);
  return served;
}

const ServedFile* DatasetFiles::find(std::string_view name) const {
  const auto it = files_.find(name);
  return it == files_.end() ? nullptr : &it->second;
}

RangeAsk parse_range(std::string_view header, std::uint64_t size) {
  constexpr std::string_view kUnit = "bytes=";
  const std::size_t dash = header.find('-');
  if (!header.starts_with(kUnit) || dash == std::string_view::npos) return {};
  std::uint64_t first = 0;
  if (!parse_u64(header.substr(kUnit.size(), dash - kUnit.size()), first)) return {};
  std::uint64_t end = size;
  const std::string_view last_text = header.substr(dash + 1);
  if (!last_text.empty()) {
    std::uint64_t last = 0;
    if (!parse_u64(last_text, last) || last < first) return {};
    end = last >= size ? size : last + 1;  // past the end: to the end (RFC 9110 14.1.2)
  }
  if (first >= size) return RangeAsk{RangeAsk::Kind::unsatisfiable, 0, 0};
  return RangeAsk{RangeAsk::Kind::part, first, end};
}

}  // namespace loco::tracker
