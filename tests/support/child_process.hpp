#pragma once
// A real program started by a test: its stdout is a pipe the test reads line by line (to wait for
// "listening on ..." rather than sleeping), its stderr goes to a file, and it is stopped with a
// signal and reaped. A child still running when the object dies is killed.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace loco::test {

// Hang guard for one awaited line after real work (training, a round) on a loaded machine.
inline constexpr int kLinePatienceMs = 120'000;

class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& stderr_file) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_file.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int error = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    out_ = pipe_fds[0];
    if (error != 0) throw std::runtime_error("cannot start " + argv[0]);
  }
  ~ChildProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The next line of stdout without its newline; "" at end of output or after `timeout_ms` (a
  // hang guard: the caller's assertion then fails; kLinePatienceMs for a line a program prints
  // after real work on a loaded machine).
  std::string read_line(int timeout_ms = 30'000) {
    std::string line;
    char c = 0;
    pollfd fd{out_, POLLIN, 0};
    while (::poll(&fd, 1, timeout_ms) == 1 && ::read(out_, &c, 1) == 1) {
      if (c == '\n') return line;
      line += c;
    }
    return "";
  }

  pid_t pid() const { return pid_; }

  // True while the process has not exited.
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == 0) return true;
    pid_ = -1;
    return false;
  }

  // Waits for the exit; the exit code, or -1 if killed by a signal.
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Sends `signal` and waits for the exit; the exit code, or -1 if killed by a signal.
  int stop(int signal) {
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
};

}  // namespace loco::test
