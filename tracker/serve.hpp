#pragma once
// The tracker service as it stands: listens, authenticates every peer's connection for the run
// (the handshake of docs/PROTOCOL.md, under the tracker's pinned identity), and keeps the
// connections until they close. Membership, rounds and admission credentials are not built
// yet: any identity is let through the handshake, and a peer that sends a message is told
// nothing and disconnected.

#include <string>

namespace loco::tracker {

struct TrackerOptions {
  std::string listen = "0.0.0.0:7700";
  std::string key_file;
  std::string run_id;
};

// Runs until SIGINT or SIGTERM. Prints "listening on ADDRESS as PUBLIC-KEY" on stdout once
// ready. Returns the process exit code; a bad option or key file is logged and gives 1.
int serve(const TrackerOptions& options);

}  // namespace loco::tracker
