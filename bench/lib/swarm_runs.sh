# Sourced by the swarm benchmarks (bench/wan-diloco-vs-ddp.sh, bench/strategies.sh): one swarm of
# real loco-peer processes and a loco-tracker on loopback, each peer's link shaped by loco's
# emulation, and the figures of a run.
# Needs: $root, $out (the run folder), $peers, $steps; swarm_setup first.

swarm_pids=()
swarm_cleanup() { for p in "${swarm_pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap swarm_cleanup EXIT

# swarm_setup: builds the programs, empties $out, makes the tracker's and the peers' keys.
swarm_setup() {
  "$root/scripts/build.sh" "$root/build/release" Release -- loco-tracker loco-peer >&2
  bin=$root/build/release/bin
  rm -rf "$out"
  mkdir -p "$out"
  "$bin/loco-tracker" keygen --out "$out/tracker.key" >/dev/null
  for i in $(seq 1 "$peers"); do "$bin/loco-peer" keygen --out "$out/peer$i.key" >/dev/null; done
}

# swarm_config NAME STRATEGY: $out/NAME.toml, configs/swarm-tiny.toml with $steps steps, a progress
# line every 10, 4M training tokens (one 1M-token shard per peer: none reads a window twice) and
# STRATEGY (printf %b escapes) as its [strategy] section.
swarm_config() {
  sed -e "s/^steps = .*/steps = $steps/" -e "s/^log-every = .*/log-every = 10/" \
    -e "s/^markov-train-tokens = .*/markov-train-tokens = 4000000/" -e '/^\[strategy\]/,$d' \
    "$root/configs/swarm-tiny.toml" >"$out/$1.toml"
  printf '[strategy]\n%b' "$2" >>"$out/$1.toml"
}

# swarm_tracker NAME CONFIG: starts loco-tracker for run NAME (its output in $out/NAME.tracker.*),
# with the options in $tracker_options too (split on spaces), $shard_count shards (default: one a
# peer) and a round of at least $min_peers members (default: every peer), and sets tracker_pid,
# tracker_address and tracker_key from its first line.
swarm_tracker() {
  local name=$1 config=$2 extra=()
  read -r -a extra <<<"${tracker_options:-}"
  "$bin/loco-tracker" --tracker.key "$out/tracker.key" --tracker.listen 127.0.0.1:0 \
    --tracker.http 127.0.0.1:0 --tracker.state-file "$out/$name.tracker-state" --run.id "$name" \
    --run.config "$config" --run.min-peers "${min_peers:-$peers}" --run.shard-count "${shard_count:-$peers}" --admission.policy open \
    "${extra[@]}" >"$out/$name.tracker.out" 2>"$out/$name.tracker.log" &
  tracker_pid=$!
  swarm_pids+=("$tracker_pid")
  local line=""
  for _ in $(seq 1 100); do
    line=$(head -n 1 "$out/$name.tracker.out" 2>/dev/null || true)  # not there yet: wait
    [[ -n $line ]] && break
    sleep 0.1
  done
  tracker_address=${line#listening on }
  tracker_address=${tracker_address%% as *}
  tracker_key=${line##* as }
}

# swarm_run NAME CONFIG UPLOAD LATENCY [LAST_PEER_OPTIONS]: trains run CONFIG, every peer with
# $PEER_OPTIONS if set (e.g. "--debug.step-delay 100": steps as long as a larger model's), the last
# one with LAST_PEER_OPTIONS too (split on spaces, e.g. "--debug.step-delay 40"); leaves
# $out/NAME.summary (the peers' summary lines), $out/NAME.rounds (the rounds peer 1 holds at the
# end), $out/NAME.wall and $out/NAME.curve (peer 1's progress: step, training loss, MB sent by it).
swarm_run() {
  local name=$1 config=$2 upload=$3 latency=$4 last_options=${5:-}
  swarm_tracker "$name" "$config"
  local tracker=$tracker_pid address=$tracker_address key=$tracker_key
  local started=$(date +%s.%N) peer_pids=()
  for i in $(seq 1 "$peers"); do
    local extra=() last=()
    [[ -n ${PEER_OPTIONS:-} ]] && read -r -a extra <<<"$PEER_OPTIONS"
    [[ $i == "$peers" && -n $last_options ]] && read -r -a last <<<"$last_options" && extra+=("${last[@]}")
    "$bin/loco-peer" --peer.key "$out/peer$i.key" --run.id "$name" --run.config "$config" \
      --tracker.address "$address" --tracker.public-key "$key" --peer.upload "$upload" \
      --link.upload "$upload" --link.latency "$latency" "${extra[@]}" \
      >"$out/$name.peer$i.out" 2>"$out/$name.peer$i.log" &
    peer_pids+=($!)
    swarm_pids+=($!)
  done
  for p in "${peer_pids[@]}"; do wait "$p"; done
  local ended=$(date +%s.%N)
  kill "$tracker" && wait "$tracker" || true
  grep -h '^peer .*: seconds=' "$out/$name".peer*.out >"$out/$name.summary"
  sed -n 's/^peer .*: round \([0-9]*\),.*/\1/p' "$out/$name.peer1.out" >"$out/$name.rounds"
  echo "$started $ended" >"$out/$name.wall"
  sed -n 's/.*step *\([0-9]*\)\/[0-9]* | loss \([0-9.]*\) .*| sent \([0-9.]*\) MB.*/\1 \2 \3/p' \
    "$out/$name.peer1.log" >"$out/$name.curve"
}

# swarm_figures NAME [EMULATED_S]: "val_loss sent_bytes wall_s util states" over the run's peers
# (sent_bytes: all peers together; util: the mean share of a peer's wall time in inner steps,
# EMULATED_S seconds of --debug.step-delay per peer counted as inner steps).
swarm_figures() {
  awk -v wall="$(awk '{print $2 - $1}' "$out/$1.wall")" -v emulated="${2:-0}" '
    { for (i = 3; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
      loss += v["val_loss"]; sent += v["sent_bytes"]
      util += (v["compute_s"] + emulated) / v["seconds"]
      states[v["state"]] = 1; ++n }
    END { s = 0; for (k in states) ++s
          printf "%.4f %d %.1f %.3f %d\n", loss / n, sent, wall, util / n, s }' "$out/$1.summary"
}
