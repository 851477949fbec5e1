#!/usr/bin/env bash
# Kernel link shaping, to compare with loco's own (net/link_shaper.hpp, docs/LINK_EMULATION.md):
# two network namespaces joined by a veth pair, the direction a -> b shaped by a tbf qdisc.
# Needs root and iproute2. This kernel has tbf and htb but not netem: the kernel path can limit
# bandwidth, not add latency, jitter or loss (loco's pacer does those).
#
#   scripts/netns-shape.sh [--rate 100mbit] [--burst 128kb]   set up (again: replaces the qdisc)
#   scripts/netns-shape.sh --measure [--bytes 67108864]       time a TCP transfer a -> b (python3)
#   scripts/netns-shape.sh --down                             tear everything down
#   --prefix NAME (default loco) names the namespaces NAME-a and NAME-b.
#
# tbf's burst must hold a whole GSO packet (64 KiB on veth and loopback), or it drops nearly
# everything; 128kb keeps tbf's own burst error on a 64 MiB transfer at 0.2%.
set -euo pipefail

prefix=loco
rate=100mbit
burst=128kb
bytes=$((64 * 1024 * 1024))
action=up
while [[ $# -gt 0 ]]; do
  case $1 in
    --rate) rate=$2; shift 2 ;;
    --burst) burst=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --down) action=down; shift ;;
    --measure) action=measure; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "netns-shape: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

ns_a=$prefix-a
ns_b=$prefix-b
addr_a=10.231.0.1
addr_b=10.231.0.2
port=5201
python=/usr/bin/python3

down() {
  ip netns del "$ns_a" 2>/dev/null || true  # deleting a namespace deletes its veth end and the pair
  ip netns del "$ns_b" 2>/dev/null || true
}

up() {
  if ! ip netns list | grep -qw "$ns_a"; then
    ip netns add "$ns_a"
    ip netns add "$ns_b"
    ip link add "$prefix-va" netns "$ns_a" type veth peer name "$prefix-vb" netns "$ns_b"
    ip -n "$ns_a" addr add "$addr_a/24" dev "$prefix-va"
    ip -n "$ns_b" addr add "$addr_b/24" dev "$prefix-vb"
    for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
    ip -n "$ns_a" link set "$prefix-va" up
    ip -n "$ns_b" link set "$prefix-vb" up
  fi
  tc -n "$ns_a" qdisc replace dev "$prefix-va" root tbf rate "$rate" burst "$burst" latency 100ms
  tc -n "$ns_a" qdisc show dev "$prefix-va"
  cat <<EOF
Shaped $ns_a ($addr_a) -> $ns_b ($addr_b) at $rate (tbf, burst $burst); $ns_b -> $ns_a is not shaped.
Run a command inside:   ip netns exec $ns_b COMMAND     (e.g. a receiver listening on $addr_b)
                        ip netns exec $ns_a COMMAND     (its traffic to $addr_b is shaped)
Measure a transfer:     $0 --measure --bytes $bytes
Shape b -> a as well:   tc -n $ns_b qdisc replace dev $prefix-vb root tbf rate RATE burst $burst latency 100ms
Tear down:              $0 --down
EOF
}

# Receiver in b times from accept to the last byte; the sender in a connects and writes.
measure() {
  ip netns list | grep -qw "$ns_a" || { echo "netns-shape: run $0 first" >&2; exit 1; }
  local rate_bytes
  rate_bytes=$(tc -n "$ns_a" -j qdisc show dev "$prefix-va" |
    "$python" -c 'import json,sys; print(json.load(sys.stdin)[0]["options"]["rate"])')
  ip netns exec "$ns_b" "$python" - "$addr_b" "$port" "$bytes" "$rate_bytes" <<'EOF' &
import socket, sys, time
addr, port, total, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
server = socket.create_server((addr, port))
conn, _ = server.accept()
start = time.monotonic()
got = 0
buf = bytearray(1 << 16)
while got < total:
    n = conn.recv_into(buf)
    if n == 0:
        sys.exit(f"netns-shape: sender closed after {got} of {total} bytes")
    got += n
took = time.monotonic() - start
ideal = total / rate
print(f"tbf: bytes={total} seconds={took:.4f} ideal_seconds={ideal:.4f} "
      f"mbit_s={total * 8 / took / 1e6:.2f} error_pct={100 * (took / ideal - 1):+.2f}")
EOF
  local receiver=$!
  ip netns exec "$ns_a" "$python" - "$addr_b" "$port" "$bytes" <<'EOF'
import socket, sys, time
addr, port, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for attempt in range(100):  # the receiver may not be listening yet
    try:
        sock = socket.create_connection((addr, port))
        break
    except ConnectionRefusedError:
        time.sleep(0.02)
else:
    sys.exit("netns-shape: the receiver never started listening")
chunk = bytes(1 << 16)
sent = 0
while sent < total:
    n = min(len(chunk), total - sent)
    sock.sendall(chunk[:n])
    sent += n
sock.close()
EOF
  wait "$receiver"
}

case $action in
  up) up ;;
  down) down ;;
  measure) measure ;;
esac
