#include "loco/host/peer_shards.hpp"

#include <fmt/format.h>

#include <fstream>
#include <thread>

#include "loco/core/error.hpp"

namespace loco::host {
namespace fs = std::filesystem;

namespace {

// One member as a source: a train shard a piece at a time over the mesh.
class PeerSource final : public fetch::FileSource {
 public:
  PeerSource(std::shared_ptr<swarm::ShardLink> link, proto::PeerKey key)
      : link_(std::move(link)), key_(key), name_("peer " + secure::short_id(key)) {}

  const std::string& name() const override { return name_; }

  void get(std::size_t index, const data::DatasetFile& file, fetch::Want want,
           const fetch::BodySink& sink) override {
    for (std::uint64_t at = want.offset; at < want.total;) {
      const proto::ShardRequest request{.file = static_cast<std::uint32_t>(index),
                                        .offset = at,
                                        .length = static_cast<std::uint32_t>(
                                            std::min<std::uint64_t>(kPieceBytes, want.total - at))};
      const swarm::PieceOutcome piece = first_piece(request, at == want.offset);
      if (!piece.error.empty())
        throw Error(
            piece.error.starts_with("refused") ? ErrorCategory::protocol : ErrorCategory::network,
            fmt::format("{}: {}: {}", name_, file.name, piece.error));
      sink(at, {reinterpret_cast<const char*>(piece.bytes.data()), piece.bytes.size()});
      at += piece.bytes.size();
    }
  }

 private:
  // The first piece of a fetch is asked again when the link failed before any answer: a newcomer's
  // first request may reach a member that has not had the view that lists it yet.
  swarm::PieceOutcome first_piece(const proto::ShardRequest& request, bool first) {
    for (int attempt = 0;; ++attempt) {
      swarm::PieceOutcome piece = link_->fetch(key_, request, kPieceTimeout);
      if (!first || attempt == 2 || !piece.error.starts_with("the link ended")) return piece;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }

  std::shared_ptr<swarm::ShardLink> link_;
  proto::PeerKey key_;
  std::string name_;
};

}  // namespace

std::shared_ptr<const swarm::ShardStore> cache_store(const fetch::ShardFeed& feed) {
  const fs::path folder = feed.folder();
  const std::vector<data::DatasetFile> train = feed.manifest().train;
  auto store = std::make_shared<swarm::ShardStore>();
  store->held = [folder, train](std::uint32_t file) -> std::optional<std::uint64_t> {
    if (file >= train.size()) return std::nullopt;
    std::error_code ec;
    const std::uint64_t size = fs::file_size(folder / train[file].name, ec);
    if (ec || size != train[file].bytes) return std::nullopt;
    return size;
  };
  store->read = [folder, train](std::uint32_t file, std::uint64_t offset, std::uint32_t length) {
    const fs::path path = folder / train.at(file).name;
    std::ifstream in(path, std::ios::binary);
    std::vector<std::byte> bytes(length);
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(length));
    if (!in || in.gcount() != static_cast<std::streamsize>(length))
      throw Error(ErrorCategory::io, path.string() + ": cannot read the bytes asked for");
    return bytes;
  };
  return store;
}

fetch::PeerSources peer_sources(std::shared_ptr<swarm::ShardLink> link,
                                const data::DatasetManifest& manifest) {
  return [link = std::move(link), manifest](std::size_t index) {
    // Right after the join the view may not be in yet: waited for, a few seconds at most.
    swarm::ShardPeers peers = link->peers(std::chrono::seconds(5));
    for (int i = 0; i < 10 && !peers.viewed; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      peers = link->peers(std::chrono::seconds(5));
    }
    const auto covers = [&](const proto::Member& m) {
      if (m.shard >= peers.shard_count) return false;
      const data::ShardSpan span = data::train_shards_of(manifest, {m.shard, peers.shard_count});
      return span.first <= index && index < span.end;
    };
    std::vector<const proto::Member*> order;
    for (const bool likely : {true, false})
      for (const proto::Member& m : peers.members)
        if (covers(m) == likely && order.size() < kPeersAsked) order.push_back(&m);
    std::vector<std::shared_ptr<fetch::FileSource>> sources;
    for (const proto::Member* m : order)
      sources.push_back(std::make_shared<PeerSource>(link, m->key));
    return sources;
  };
}

std::unique_ptr<swarm::SwarmThread> sharing_thread(swarm::SwarmConfig config,
                                                   const secure::KeyPair& identity,
                                                   fetch::ShardFeed* feed) {
  if (feed != nullptr) config.shards = cache_store(*feed);
  auto thread = std::make_unique<swarm::SwarmThread>(std::move(config), identity);
  if (feed != nullptr) feed->set_peer_sources(peer_sources(thread->shard_link(), feed->manifest()));
  return thread;
}

}  // namespace loco::host
