#pragma once
// Child processes (multi-process tests, cluster benchmark): each is killed (SIGKILL) and reaped
// when its handle goes out of scope, so a failing test leaves nothing running.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace cerebro::e2e {

class ChildProcess {
 public:
  // Runs argv[0] with argv, stdout and stderr appended to log_path, with
  // the extra environment variables `env` ("NAME=value").
  ChildProcess(std::vector<std::string> argv, std::string log_path, std::vector<std::string> env = {})
      : log_path_(std::move(log_path)) {
    pid_ = fork();
    if (pid_ == 0) {
      for (auto& e : env) putenv(e.data());
      int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
  }
  ~ChildProcess() { kill_now(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  void kill_now() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  // Sends `sig` (e.g. SIGSTOP to make the process hang).
  // -1 once the process was reaped.
  pid_t pid() const { return pid_; }
  void send_signal(int sig) const {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // Waits up to `seconds` for the process to exit; returns its exit code,
  // 128 + the signal that killed it, or -1 if it is still running.
  int wait_exit(double seconds) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1;
  }
  std::string log() const {
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Waits until the log contains `text`; returns false after `seconds`.
  bool wait_for_log(const std::string& text, double seconds) const {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      if (log().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

// A port that was free a moment ago on 127.0.0.1, drawn at random below the
// kernel's ephemeral range (ip_local_port_range). A port from bind(0) is an
// ephemeral one, and the kernel hands the same port to the next process that
// binds 0 or connects (Gloo's sockets, a TCPStore, any client): a coordinator
// started on it a moment later found it taken ("cannot listen"; a CI run
// failed so, with gang runs measuring their allreduce beside it). Below the
// range only another explicit choice can take it.
inline int free_port() {
  auto bindable = [](int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    close(fd);
    return ok ? static_cast<int>(ntohs(addr.sin_port)) : -1;
  };
  int ephemeral_low = 32768;
  if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range) range >> ephemeral_low;
  const int low = 20000;
  if (ephemeral_low > low + 1000) {
    std::mt19937 draw(std::random_device{}());
    std::uniform_int_distribution<int> port(low, ephemeral_low - 1);
    for (int attempt = 0; attempt < 200; ++attempt)
      if (int p = bindable(port(draw)); p > 0) return p;
  }
  return bindable(0);
}

}  // namespace cerebro::e2e
