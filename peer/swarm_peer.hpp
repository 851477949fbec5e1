#pragma once
// `loco-peer` (no subcommand): a volunteer's training process. It joins the run's tracker,
// fetches the run's state if the run has started, then trains: H inner steps on its data shard,
// a DiLoCo round with the group the tracker forms, again (DDP: a round every step; Streaming
// DiLoCo: a fragment round every H/P steps, on the network thread while the inner loop steps),
// until the run's steps are done or a signal asks it to leave (it finishes or abandons the step,
// tells the tracker, checkpoints). At the run's final round (train/run_end.hpp) it waits, at most
// --peer.end-wait, for the tracker to hold the final state before it leaves; a peer that starts
// after the run ended fetches the final state and trains no more.
// After each round it prints one line on stdout, for scripts and tests:
//   round R committed|skipped|replaced members M loss L state H
// R the round its shared state is at, M the group's size (0 unless committed), L the mean loss of
// the round's inner steps, H the first 16 hex digits of the state hash. At the run's end:
//   run over: final round R, state H, kept by the tracker|not kept by the tracker|unconfirmed

#include <atomic>
#include <string>
#include <vector>

#include "debug_faults.hpp"
#include "loco/cli/link_options.hpp"
#include "loco/net/listener_limits.hpp"

namespace loco::peer {

struct PeerOptions {
  // [peer]
  std::string key_file;
  std::string listen = "127.0.0.1:0";  // where other peers connect (port 0: any)
  std::string advertise;               // how others reach it, if not the listen address
  std::string upload = "100Mbit";      // declared to the tracker (ring order)
  std::string checkpoint;              // this peer's checkpoint: resume from it, write it
  std::uint64_t checkpoint_rounds = 10;
  std::uint32_t streams = 1;  // parallel TCP streams per peer pair
  int threads = 0;            // compute threads (0: the run config's)
  // What this peer's listener takes on at once; the other caps are ListenerLimits::peer_defaults
  std::size_t max_handshakes = net::ListenerLimits::peer_defaults().max_handshakes;
  std::size_t max_per_address = net::ListenerLimits::peer_defaults().max_pending_per_source;
  std::string handshake_timeout = "5s";
  std::string idle_timeout = "300s";  // links between peers: keepalives every third of it
  std::string gossip_wait = "600s";   // gossip mode: a group not done by then, alone
  // At the run's final round: how long to wait for the tracker to hold its state before leaving.
  std::string end_wait = "120s";
  std::string poison;       // test only: scale | nan
  DebugFaultOptions debug;  // test only: die at a phase, slow inner steps
  // [run]
  std::string run_id;
  std::string run_config;  // the loco-train config of the run (model, data, DiLoCo)
  // [tracker]
  std::string tracker_address;
  std::string tracker_public_key;
  std::string join_token;
  // [link]: WAN emulation of this peer's own connections
  cli::LinkOptions link;
};

// Runs until the run's steps are done or `stop` turns true. Returns the exit code; every error is
// logged with what to do about it.
int run_peer(const PeerOptions& options, const std::atomic<bool>& stop);

}  // namespace loco::peer
