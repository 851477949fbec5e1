#pragma once
// The dataset the tracker's HTTP server serves (--tracker.dataset DIR, docs/TRACKER.md): GET or
// HEAD of /dataset/<name> for the folder's manifest.txt and the files that manifest names, nothing
// else (a name is looked up among the manifest's, so no other path of the disk can be asked for),
// with a Range so that a download resumes. Peers check every byte against the manifest whatever
// serves it; the tracker is one of the run's mirrors (its data.mirrors).

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace loco::tracker {

struct ServedFile {
  std::filesystem::path path;
  std::uint64_t bytes = 0;
  bool text = false;  // the manifest: text/plain
};

class DatasetFiles {
 public:
  // Reads `folder`/manifest.txt (size-capped, decoded strictly) and checks that each file it names
  // is there at its size (not its hash: peers check that). Throws Error(format) for a malformed
  // manifest or a file of the wrong size, Error(io) for a missing one, naming it.
  static std::shared_ptr<const DatasetFiles> open(const std::filesystem::path& folder);

  // The file served as `name`, or null when the manifest does not name it.
  const ServedFile* find(std::string_view name) const;
  const std::string& manifest_hash() const { return manifest_hash_; }
  std::size_t size() const { return files_.size(); }

 private:
  std::map<std::string, ServedFile, std::less<>> files_;
  std::string manifest_hash_;
};

// What a Range header asks of a file of `size` bytes. Only one range "bytes=<first>-[<last>]" is
// served; any other form (several ranges, suffixes, garbage) is ignored and the whole file sent,
// as RFC 9110 allows. `first` past the end is unsatisfiable (416).
struct RangeAsk {
  enum class Kind { whole, part, unsatisfiable } kind = Kind::whole;
  std::uint64_t first = 0;
  std::uint64_t end = 0;  // one past the last byte
};
RangeAsk parse_range(std::string_view header, std::uint64_t size);

}  // namespace loco::tracker
