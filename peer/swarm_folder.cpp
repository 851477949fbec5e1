#include "swarm_folder.hpp"

#include <fmt/format.h>

#include <fstream>

#include "loco/core/error.hpp"
#include "loco/secure/identity.hpp"

namespace loco::peer {
namespace {

// A TOML basic string.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out.flush()) throw Error(ErrorCategory::io, fmt::format("cannot write {}", path.string()));
}

// Peer `index`'s key file, named relative to the folder (as the configs name it).
std::string peer_key(std::size_t index) {
  return fmt::format("peer-{}.key", index + 1);
}

// Makes the key file as `loco-peer keygen` would, if it is missing.
void ensure_key(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path))
    secure::write_key_file(path, secure::KeyPair::generate(), /*overwrite=*/false);
}

std::string tracker_config(const SwarmPlan& plan) {
  return fmt::format(
      "# The tracker of a local swarm, written by loco-swarm.\n"
      "[tracker]\n"
      "listen = \"127.0.0.1:0\"  # any free port: it prints the one it got\n"
      "key = \"tracker.key\"\n"
      "state-file = \"\"         # in memory: every loco-swarm run is a new run\n"
      "http = {}\n"
      "max-members-per-address = 0  # every peer is on this machine\n\n"
      "[run]\n"
      "id = {}\n"
      "config = {}\n"
      "min-peers = {}\n"
      "shard-count = {}          # one data shard per peer\n"
      "join-timeout = \"5s\"      # a round without a missing member forms after this; loopback "
      "fetches are quick\n\n"
      "[admission]\n"
      "policy = \"open\"\n",
      quoted(plan.status), quoted(plan.run_id), quoted(plan.run_config.string()), plan.min_peers,
      plan.peers);
}

std::string link_section(const cli::LinkOptions& link) {
  std::string text = "[link]\n";
  const auto add = [&text](const char* key, const std::string& value) {
    if (!value.empty()) text += fmt::format("{} = {}\n", key, quoted(value));
  };
  add("upload", link.upload);
  add("download", link.download);
  add("latency", link.latency);
  add("jitter", link.jitter);
  add("stream-window", link.stream_window);
  add("drop-after-bytes", link.drop_after_bytes);
  add("drop-at", link.drop_at);
  add("stall-at", link.stall_at);
  return text;
}

std::string peer_config(const SwarmPlan& plan, std::size_t index, const std::string& address,
                        const std::string& tracker_key) {
  const cli::LinkOptions& link = plan.links[index];
  return fmt::format(
      "# Peer {} of a local swarm, written by loco-swarm.\n"
      "[peer]\n"
      "key = {}\n"
      "listen = \"127.0.0.1:0\"\n"
      "upload = {}  # declared to the tracker\n\n"
      "[run]\n"
      "id = {}\n"
      "config = {}\n\n"
      "[tracker]\n"
      "address = {}\n"
      "public-key = {}\n\n"
      "{}",
      index + 1, quoted(peer_key(index)),
      quoted(link.upload == "unlimited" ? "100Mbit" : link.upload), quoted(plan.run_id),
      quoted(plan.run_config.string()), quoted(address), quoted(tracker_key), link_section(link));
}

}  // namespace

SwarmFolder make_swarm_folder(const SwarmPlan& plan) {
  std::error_code error;
  std::filesystem::create_directories(plan.folder, error);
  if (error)
    throw Error(ErrorCategory::io, fmt::format("cannot create the run folder {}: {}",
                                               plan.folder.string(), error.message()));
  SwarmFolder folder{.root = plan.folder,
                     .tracker = {plan.folder / "tracker.toml", plan.folder / "tracker.log"},
                     .peers = {}};
  ensure_key(plan.folder / "tracker.key");
  write_text(folder.tracker.config, tracker_config(plan));
  for (std::size_t i = 0; i < plan.peers; ++i) {
    ensure_key(plan.folder / peer_key(i));
    folder.peers.push_back({plan.folder / fmt::format("peer-{}.toml", i + 1),
                            plan.folder / fmt::format("peer-{}.log", i + 1)});
  }
  return folder;
}

void write_peer_configs(const SwarmPlan& plan, const SwarmFolder& folder,
                        const std::string& tracker_address, const std::string& tracker_key) {
  for (std::size_t i = 0; i < folder.peers.size(); ++i)
    write_text(folder.peers[i].config, peer_config(plan, i, tracker_address, tracker_key));
}

}  // namespace loco::peer
