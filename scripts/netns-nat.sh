#!/usr/bin/env bash
# Home routers in network namespaces, for tests of peers behind NAT (docs/VOLUNTEER.md): a
# "public" namespace (the internet: 11.70.0.1 on a bridge) and N homes, each a router namespace
# (11.70.0.(1+i) on the public side, 192.168.(70+i).1 inside) that masquerades its home's traffic
# with nftables and forwards nothing inward, and a home namespace (192.168.(70+i).2) behind it.
# The public side has no route to any home's addresses: a home is reached only through what its
# router maps. With UPNP_HOME, that home's router also runs miniupnpd (UPnP-IGD and NAT-PMP) on
# its home side, and loops the router's own external address back to its home (NAT loopback, as
# most home routers do), so that a home peer reaches another one of its home at the address the
# mapping gave it. MAPPER says what that router offers: "both" (the default), "upnp" (UPnP-IGD
# alone) or "natpmp" (NAT-PMP/PCP alone).
# Needs root, iproute2 and nftables (and miniupnpd-nftables for UPNP_HOME).
# The public addresses are 11.70.0.0/24: a test's namespaces have no route out, so no packet for
# them leaves this machine, and miniupnpd maps only on an external address outside its list of
# reserved ranges (RFC 1918, 100.64/10, the documentation TEST-NETs, ...: getifaddr.c's
# addr_is_reserved), which Debian's 2.3.1 has no option to lift.
#
#   scripts/netns-nat.sh up PREFIX [HOMES [UPNP_HOME [MAPPER]]]  PREFIX-pub, PREFIX-rI, PREFIX-hI
#   scripts/netns-nat.sh down PREFIX                     removes them, and stops its miniupnpd
#
# PREFIX is at most 8 characters (interface names are at most 15).
set -euo pipefail

action=${1:-}
prefix=${2:-}
homes=${3:-1}
upnp_home=${4:-0}
mapper=${5:-both}
case $mapper in both | upnp | natpmp) ;; *) echo "netns-nat: MAPPER is both, upnp or natpmp" >&2; exit 2 ;; esac
if [[ -z $action || -z $prefix || ${#prefix} -gt 8 ]]; then
  sed -n '2,22p' "$0" >&2
  exit 2
fi
run_dir=/tmp/$prefix-netns-nat

down() {
  if [[ -f $run_dir/miniupnpd.pid ]]; then
    kill "$(cat "$run_dir/miniupnpd.pid")" 2>/dev/null || true
  fi
  rm -rf "$run_dir"
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
  ip -n "$pub" addr add 11.70.0.1/24 dev br0
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
    ip -n "$router" addr add "11.70.0.$((1 + i))/24" dev "$prefix-w$i"
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
    if [[ $i -eq $upnp_home ]]; then
      start_miniupnpd "$router" "$prefix-w$i" "$prefix-l$i" "$lan"
      loop_back "$router" "11.70.0.$((1 + i))" "$prefix-l$i" "$lan"
    fi
  done
}

# miniupnpd on a router: the nftables chains it fills (its defaults: table "filter", chains
# "miniupnpd", "prerouting_miniupnpd", "postrouting_miniupnpd"), its config, and the daemon.
start_miniupnpd() {
  local router=$1 wan=$2 lan_if=$3 lan=$4
  mkdir -p "$run_dir"
  ip netns exec "$router" nft -f - <<NFT
table inet filter {
  chain forward { type filter hook forward priority 0; policy accept; jump miniupnpd; }
  chain miniupnpd { }
  chain prerouting { type nat hook prerouting priority -100; policy accept; jump prerouting_miniupnpd; }
  chain postrouting { type nat hook postrouting priority 100; policy accept; jump postrouting_miniupnpd; }
  chain prerouting_miniupnpd { }
  chain postrouting_miniupnpd { }
}
NFT
  cat >"$run_dir/miniupnpd.conf" <<CONF
ext_ifname=$wan
listening_ip=$lan_if
http_port=0
enable_upnp=$([[ $mapper == natpmp ]] && echo no || echo yes)
enable_natpmp=$([[ $mapper == upnp ]] && echo no || echo yes)
secure_mode=yes
system_uptime=yes
lease_file=$run_dir/miniupnpd.leases
uuid=3d3cec3a-8cf0-11e0-98ee-001a6bd2d07d
allow 1024-65535 $lan.0/24 1024-65535
deny 0-65535 0.0.0.0/0 0-65535
CONF
  ip netns exec "$router" miniupnpd -f "$run_dir/miniupnpd.conf" -P "$run_dir/miniupnpd.pid" -d \
    >"$run_dir/miniupnpd.log" 2>&1 &
  # Ready once it listens on the home side (its last words at start).
  local ready="Listening for NAT-PMP"
  if [[ $mapper == upnp ]]; then ready="HTTP listening on port"; fi
  for _ in $(seq 100); do
    if grep -q "$ready" "$run_dir/miniupnpd.log" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "netns-nat: miniupnpd did not start:" >&2
  cat "$run_dir/miniupnpd.log" >&2
  return 1
}

# NAT loopback: what the home sends to the router's external address goes back to the home (its
# one host, $lan.2, at the same port), from the router's home address so that the reply returns
# through it. Ports nothing listens on refuse as they would from outside.
loop_back() {
  local router=$1 external=$2 lan_if=$3 lan=$4
  ip netns exec "$router" nft -f - <<NFT
table ip loopback {
  chain prerouting {
    type nat hook prerouting priority -110; policy accept;
    iifname "$lan_if" ip daddr $external tcp dport 1024-65535 dnat to $lan.2
  }
  chain postrouting {
    type nat hook postrouting priority 90; policy accept;
    iifname "$lan_if" oifname "$lan_if" ct status dnat snat to $lan.1
  }
}
NFT
}

case $action in
  up) up ;;
  down) down ;;
  *) echo "netns-nat: unknown action '$action' (up, down)" >&2; exit 2 ;;
esac
