#pragma once
// Home routers in network namespaces for one test (scripts/netns-nat.sh): a public namespace and
// homes behind nftables masquerades (one may run miniupnpd), made when constructed and removed when
// destroyed. Processes start in a namespace through in(); what the tracker's status page says is
// read from inside the public namespace (metrics_in). Needs root: up() is false, with the script's
// output as the reason, where the namespaces cannot be made.

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/ip/address.hpp>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tracker_metrics.hpp"

namespace loco::test {

class HomeNetwork {
 public:
  // `upnp_home` (0: none) is the home whose router also runs miniupnpd, with UPnP-IGD and
  // NAT-PMP/PCP ("both"), UPnP-IGD alone ("upnp") or NAT-PMP/PCP alone ("natpmp").
  explicit HomeNetwork(int homes, int upnp_home = 0, const std::string& mapper = "both")
      : prefix_("ln" + std::to_string(::getpid() % 1'000'000)) {
    ok_ = run("up " + prefix_ + " " + std::to_string(homes) + " " + std::to_string(upnp_home) +
                  " " + mapper,
              output_);
  }
  ~HomeNetwork() {
    std::string ignored;
    run("down " + prefix_, ignored);
  }
  HomeNetwork(const HomeNetwork&) = delete;
  HomeNetwork& operator=(const HomeNetwork&) = delete;

  bool up() const { return ok_; }
  const std::string& why() const { return output_; }
  // The argv prefix that starts a program in namespace `name` ("pub", "r1", "h1", ...).
  std::vector<std::string> in(const std::string& name) const {
    return {"/usr/sbin/ip", "netns", "exec", prefix_ + "-" + name};
  }
  // Public addresses: the public namespace's, and home i's router's.
  // A range miniupnpd does not count as reserved (scripts/netns-nat.sh): no packet leaves the
  // test's namespaces.
  static std::string public_host() { return "11.70.0.1"; }
  static std::string router_host(int home) { return "11.70.0." + std::to_string(1 + home); }
  // Home i's own address, which nobody outside it can reach.
  static std::string home_host(int home) { return "192.168." + std::to_string(70 + home) + ".2"; }

  // The port mappings miniupnpd holds on its router (the nftables chain it fills), one rule a
  // line; "" when there are none.
  std::string router_mappings(int home) const {
    std::string out;
    run_command("ip netns exec " + prefix_ + "-r" + std::to_string(home) +
                    " nft list chain inet filter prerouting_miniupnpd | grep dnat",
                out);
    return out;
  }

  // The samples of /metrics at `http_address` (HOST:PORT) as seen from namespace `name`; empty
  // when it could not be read.
  std::map<std::string, double> metrics_in(const std::string& name,
                                           const std::string& http_address) const {
    std::map<std::string, double> samples;
    // setns changes the calling thread's namespace only: a thread of its own does the request.
    std::thread reader([&] {
      const int fd = ::open(("/run/netns/" + prefix_ + "-" + name).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return;
      const bool entered = ::setns(fd, CLONE_NEWNET) == 0;
      ::close(fd);
      if (!entered) return;
      const auto colon = http_address.rfind(':');
      try {
        TestClient client(
            tcp::endpoint(asio::ip::make_address(http_address.substr(0, colon)),
                          static_cast<std::uint16_t>(std::stoi(http_address.substr(colon + 1)))));
        samples = read_metrics(client);
      } catch (const std::exception&) {
        samples.clear();
      }
    });
    reader.join();
    return samples;
  }

 private:
  // Runs the script with `args`.
  static bool run(const std::string& args, std::string& output) {
    return run_command(std::string(LOCO_SOURCE_DIR) + "/scripts/netns-nat.sh " + args, output);
  }
  // Runs `command` in a shell; its output (both streams) into `output`. True on exit code 0.
  static bool run_command(const std::string& shell_command, std::string& output) {
    const std::string command = shell_command + " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) {
      output = "cannot run " + command;
      return false;
    }
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
    const int status = ::pclose(pipe);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  std::string prefix_;
  std::string output_;
  bool ok_ = false;
};

}  // namespace loco::test
