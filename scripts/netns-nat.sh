#!/usr/bin/env bash
# Home routers in network namespaces, for tests of peers behind NAT (docs/VOLUNTEER.md): a
# "public" namespace (the internet: 198.51.100.1 on a bridge) and N homes, each a router namespace
# (198.51.100.(1+i) on the public side, 192.168.(70+i).1 inside) that masquerades its home's traffic
# with nftables and forwards nothing inward, and a home namespace (192.168.(70+i).2) behind it.
# The public side has no route to any home's addresses: a home is reached only through what its
# router maps. Needs root, iproute2 and nftables.
#
#   scripts/netns-nat.sh up PREFIX [HOMES]   namespaces PREFIX-pub, PREFIX-rI, PREFIX-hI (I=1..HOMES)
#   scripts/netns-nat.sh down PREFIX         removes them (and what runs in them is cut off)
#
# PREFIX is at most 8 characters (interface names are at most 15).
set -euo pipefail

action=${1:-}
prefix=${2:-}
homes=${3:-1}
if [[ -z $action || -z $prefix || ${#prefix} -gt 8 ]]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi

down() {
  for ns in $(ip netns list | awk '{print $1}' | grep "^$prefix-" || true); do
    ip netns del "$ns" 2>/dev/null || true
  done
}

up() {
  down
  local pub=$prefix-pub
  ip netns add "$pub"
  ip -n "$pub" link set lo up
  ip -n "$pub" link add br0 type bridge
  ip -n "$pub" addr add 198.51.100.1/24 dev br0
  ip -n "$pub" link set br0 up
  for ((i = 1; i <= homes; i++)); do
    local router=$prefix-r$i home=$prefix-h$i lan=192.168.$((70 + i))
    ip netns add "$router"
    ip netns add "$home"
    ip -n "$router" link set lo up
    ip -n "$home" link set lo up
    # The router's public side, on the public bridge.
    ip link add "$prefix-w$i" netns "$router" type veth peer name "p$i" netns "$pub"
    ip -n "$pub" link set "p$i" master br0 up
    ip -n "$router" addr add "198.51.100.$((1 + i))/24" dev "$prefix-w$i"
    ip -n "$router" link set "$prefix-w$i" up
    # The home's side.
    ip link add "$prefix-l$i" netns "$router" type veth peer name eth0 netns "$home"
    ip -n "$router" addr add "$lan.1/24" dev "$prefix-l$i"
    ip -n "$router" link set "$prefix-l$i" up
    ip -n "$home" addr add "$lan.2/24" dev eth0
    ip -n "$home" link set eth0 up
    ip -n "$home" route add default via "$lan.1"
    ip netns exec "$router" sysctl -q -w net.ipv4.ip_forward=1
    # Out: masqueraded. In: only replies to what the home opened (and what a mapping adds).
    ip netns exec "$router" nft -f - <<NFT
table ip home {
  chain postrouting {
    type nat hook postrouting priority 100; policy accept;
    oifname "$prefix-w$i" masquerade
  }
  chain forward {
    type filter hook forward priority 0; policy drop;
    iifname "$prefix-l$i" accept
    ct state established,related accept
    ct status dnat accept
  }
}
NFT
  done
}

case $action in
  up) up ;;
  down) down ;;
  *) echo "netns-nat: unknown action '$action' (up, down)" >&2; exit 2 ;;
esac
