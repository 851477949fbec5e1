#pragma once
// One program started by loco-swarm: its stdout and stderr go to one pipe that the parent reads
// line by line (and copies to the child's log file), it runs in a process group of its own (a
// Ctrl-C in the terminal reaches only loco-swarm, which stops the children in order), and it gets
// SIGTERM if loco-swarm dies. A child still running when the object dies is killed and reaped.
//
// Call order: read_lines() whenever fd() is readable (poll), then reap(); finished() turns true
// once the child has exited and its output is read to the end. Extra calls are harmless.

#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace loco::peer {

class ChildProcess {
 public:
  // Starts argv[0] (a path) with the rest as arguments. Throws Error(io) if it cannot.
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log_file);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::filesystem::path& log_file() const { return log_file_; }
  // The read end of the output pipe, -1 once it reached its end.
  int fd() const { return out_; }

  // The complete lines that can be read now without blocking, each also appended to the log
  // file. At the end of the output, a last unterminated line comes too.
  std::vector<std::string> read_lines();
  // Collects the exit status if the child has exited; never blocks.
  void reap();
  bool finished() const { return status_.has_value() && out_ < 0; }
  bool running() const { return !status_.has_value(); }
  // Sends `signal` if the child still runs.
  void signal(int signal);

  // The last line read: after a failure, usually the error.
  const std::string& last_line() const { return last_line_; }
  // After finished(): true for exit code 0.
  bool succeeded() const;
  // "exit code 1", "killed by signal 9 (Killed)".
  std::string exit_description() const;

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::filesystem::path log_file_;
  std::ofstream log_;
  std::string partial_;  // output after the last newline
  std::string last_line_;
  std::optional<int> status_;  // waitpid's status
};

}  // namespace loco::peer
