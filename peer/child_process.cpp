#include "child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "loco/core/error.hpp"

namespace loco::peer {
namespace {

// In the forked child, before exec: only async-signal-safe calls.
[[noreturn]] void exec_child(char* const* args, int out, pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
  ::setpgid(0, 0);
  const int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) ::dup2(null, STDIN_FILENO);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(out, STDERR_FILENO);
  ::execv(args[0], args);
  const char* reason = std::strerror(errno);
  constexpr const char kPrefix[] = "cannot start the program: ";
  [[maybe_unused]] auto a = ::write(STDERR_FILENO, kPrefix, sizeof kPrefix - 1);
  [[maybe_unused]] auto b = ::write(STDERR_FILENO, reason, std::strlen(reason));
  [[maybe_unused]] auto c = ::write(STDERR_FILENO, "\n", 1);
  ::_exit(127);
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::filesystem::path& log_file)
    : log_file_(log_file), log_(log_file, std::ios::trunc) {
  if (!log_)
    throw Error(ErrorCategory::io, fmt::format("cannot write the log file {}", log_file.string()));
  int fds[2];
  // Close-on-exec: a later child must not hold an earlier child's pipe open.
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error(ErrorCategory::io, fmt::format("pipe: {}", std::strerror(errno)));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) exec_child(args.data(), fds[1], parent);
  ::close(fds[1]);
  if (pid_ < 0) {
    ::close(fds[0]);
    throw Error(ErrorCategory::io,
                fmt::format("cannot start {}: {}", argv[0], std::strerror(errno)));
  }
  out_ = fds[0];
  ::fcntl(out_, F_SETFL, ::fcntl(out_, F_GETFL) | O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_ >= 0) ::close(out_);
}

std::vector<std::string> ChildProcess::read_lines() {
  std::vector<std::string> lines;
  char buffer[4096];
  while (out_ >= 0) {
    const ssize_t n = ::read(out_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {  // the end, or an error that ends it as well
      ::close(out_);
      out_ = -1;
      if (!partial_.empty()) lines.push_back(std::move(partial_));
      partial_.clear();
      break;
    }
    partial_.append(buffer, static_cast<std::size_t>(n));
    for (auto newline = partial_.find('\n'); newline != std::string::npos;
         newline = partial_.find('\n')) {
      lines.push_back(partial_.substr(0, newline));
      partial_.erase(0, newline + 1);
    }
  }
  for (const auto& line : lines) log_ << line << '\n';
  log_.flush();
  if (!lines.empty()) last_line_ = lines.back();
  return lines;
}

void ChildProcess::reap() {
  if (!running()) return;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
}

void ChildProcess::signal(int signal) {
  if (running()) ::kill(pid_, signal);
}

bool ChildProcess::succeeded() const {
  return status_ && WIFEXITED(*status_) && WEXITSTATUS(*status_) == 0;
}

std::string ChildProcess::exit_description() const {
  if (!status_) return "still running";
  if (WIFEXITED(*status_)) return fmt::format("exit code {}", WEXITSTATUS(*status_));
  if (WIFSIGNALED(*status_))
    return fmt::format("killed by signal {} ({})", WTERMSIG(*status_),
                       ::strsignal(WTERMSIG(*status_)));
  return "stopped";
}

}  // namespace loco::peer
