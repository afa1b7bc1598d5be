// The REPL on a terminal (a pseudo-terminal from forkpty): the prompt, tab
// completion of commands, experiment ids and config ids, the live top, the
// history kept across sessions ($XDG_STATE_HOME/cerebro/history), and the
// embedded coordinator's log lines printed above the prompt, never on it.
#define BOOST_TEST_MODULE repl_terminal
#include <boost/test/unit_test.hpp>

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "runtime/base/log_lines.hpp"
#include "test/support/e2e_util.hpp"

using namespace cerebro::e2e;

namespace {

// `cerebro repl` on the slave side of a pseudo-terminal; the test types on
// the master side and reads what the terminal shows.
class TerminalSession {
 public:
  TerminalSession(const TempDir& tmp) {
    pid_ = forkpty(&master_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      setenv("XDG_STATE_HOME", tmp.file("xdg").c_str(), 1);
      setenv("TERM", "xterm", 1);
      auto binary = cerebro_binary();
      auto state = tmp.file("state");
      execl(binary.c_str(), binary.c_str(), "repl", "--workers", "1", "--state", state.c_str(), nullptr);
      _exit(127);
    }
  }
  ~TerminalSession() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(master_);
  }
  void type(const std::string& keys) { (void)!write(master_, keys.data(), keys.size()); }
  // Reads until the text shown since the last match contains `text`
  // (terminal control sequences, e.g. libedit's cursor moves, left out).
  bool expect(const std::string& text, double seconds = 60) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      auto at = shown().find(text, consumed_);
      if (at != std::string::npos) {
        consumed_ = at + text.size();
        return true;
      }
      pollfd p{master_, POLLIN, 0};
      if (poll(&p, 1, 100) > 0) {
        char buf[4096];
        auto n = read(master_, buf, sizeof buf);
        if (n <= 0) return false;
        screen_.append(buf, static_cast<size_t>(n));
      }
    }
    return false;
  }
  int wait_exit(double seconds) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      expect("\x01", 0.1);  // drain the terminal so the child never blocks writing
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
    }
    return -2;
  }
  const std::string& screen() const { return screen_; }
  // The lines as a terminal shows them in the end: a carriage return followed
  // by "erase line" (ESC [ K) starts the line afresh, other control
  // sequences and carriage returns are left out.
  std::vector<std::string> final_lines() const {
    std::string text = screen_;
    for (auto at = text.find("\r\x1b[K"); at != std::string::npos; at = text.find("\r\x1b[K", at))
      text.replace(at, 4, "\n");
    std::vector<std::string> lines;
    std::string line;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
        i += 2;
        while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7e)) ++i;
        continue;
      }
      if (text[i] == '\n') {
        lines.push_back(line);
        line.clear();
      } else if (text[i] != '\r' && text[i] != '\a') {
        line += text[i];
      }
    }
    lines.push_back(line);
    return lines;
  }
  // The output without ESC [ ... final-byte sequences, bells and carriage returns.
  std::string shown() const {
    std::string out;
    for (size_t i = 0; i < screen_.size(); ++i) {
      if (screen_[i] == '\x1b' && i + 1 < screen_.size() && screen_[i + 1] == '[') {
        i += 2;
        while (i < screen_.size() && !(screen_[i] >= 0x40 && screen_[i] <= 0x7e)) ++i;
        continue;
      }
      if (screen_[i] == '\a' || screen_[i] == '\r') continue;  // the bell; carriage returns before cursor moves
      out += screen_[i];
    }
    return out;
  }

 private:
  pid_t pid_ = -1;
  int master_ = -1;
  std::string screen_;
  size_t consumed_ = 0;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

BOOST_AUTO_TEST_CASE(prompt_completion_and_history_across_sessions) {
  TempDir tmp;
  // So many epochs that the experiment cannot end before the pause below
  // reaches it, however fast the machine: it ends when the test stops its
  // only config. (With 5 epochs it sometimes completed first, or during the
  // pause, and top then rightly showed it not paused.)
  auto spec = tmp.write("tiny.toml", small_spec("model = [\"mlp\"]\nhidden = [[16]]\nlr = [0.002]\n", 1000, 2000, 1));
  {
    TerminalSession repl(tmp);
    BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
    // A command completed from its first letters.
    repl.type("sta\t");
    BOOST_REQUIRE_MESSAGE(repl.expect("status "), repl.screen());
    repl.type("\r");
    BOOST_REQUIRE_MESSAGE(repl.expect("agents:"), repl.screen());
    BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
    repl.type("submit " + spec + "\r");
    BOOST_REQUIRE_MESSAGE(repl.expect("submitted experiment "), repl.screen());
    BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
    // While the experiment runs (held by a pause) top is live: it redraws
    // until Enter.
    repl.type("pause\r");
    BOOST_REQUIRE_MESSAGE(repl.expect("paused: running units finish"), repl.screen());
    repl.type("top\r");
    BOOST_REQUIRE_MESSAGE(repl.expect("(paused): 1 configs"), repl.screen());
    BOOST_REQUIRE_MESSAGE(repl.expect("(live: refreshing every 2 s; press Enter to return)"), repl.screen());
    BOOST_REQUIRE_MESSAGE(repl.expect("(paused): 1 configs", 10), "top redraws: " + repl.screen());
    repl.type("\r");
    BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
    repl.type("resume\r");
    BOOST_REQUIRE_MESSAGE(repl.expect("resumed"), repl.screen());
    BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
    // Its only config stopped, the experiment ends (completed).
    repl.type("stop 0\r");
    BOOST_REQUIRE_MESSAGE(repl.expect("stopped; its last checkpoint is kept"), repl.screen());
    BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
    // An experiment id completed after "wait ".
    repl.type("wait \t");
    BOOST_REQUIRE_MESSAGE(repl.expect("small-"), repl.screen());
    repl.type("\r");
    BOOST_REQUIRE_MESSAGE(repl.expect(" completed: "), repl.screen());
    BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
    // A config id completed after "EXPERIMENT/".
    repl.type("show s\t");
    BOOST_REQUIRE_MESSAGE(repl.expect("/"), repl.screen());
    repl.type("\t\r");
    BOOST_REQUIRE_MESSAGE(repl.expect("config 0 of experiment small-"), repl.screen());
    BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
    // A mistake: an error, and the session goes on.
    repl.type("shwo 0\r");
    BOOST_REQUIRE_MESSAGE(repl.expect("error: unknown command \"shwo\""), repl.screen());
    BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
    repl.type("quit\r");
    BOOST_TEST(repl.wait_exit(20) == 0, "a terminal session exits 0 even after a mistake");
  }
  // libedit's history file writes a space as \040.
  auto history = read_file(tmp.file("xdg") + "/cerebro/history");
  for (auto at = history.find("\\040"); at != std::string::npos; at = history.find("\\040"))
    history.replace(at, 4, " ");
  BOOST_TEST_INFO(history);
  BOOST_TEST(history.find("status") != std::string::npos);
  BOOST_TEST(history.find("shwo 0") != std::string::npos);
  {
    // A new session recalls the earlier one's commands: up arrow twice is
    // "shwo 0" (quit came last).
    TerminalSession repl(tmp);
    BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
    repl.type("\x1b[A\x1b[A\r");
    BOOST_REQUIRE_MESSAGE(repl.expect("error: unknown command \"shwo\""), repl.screen());
    repl.type("quit\r");
    BOOST_TEST(repl.wait_exit(20) == 0);
  }
}

BOOST_AUTO_TEST_CASE(log_lines_go_above_the_prompt_and_status_names_the_host) {
  TempDir tmp;
  auto spec = tmp.write("tiny.toml", small_spec("model = [\"mlp\"]\nhidden = [[16]]\nlr = [0.002]\n", 1, 1000, 1));
  TerminalSession repl(tmp);
  BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
  // The embedded agent runs in this process, on this host: status names it
  // (CAF leaves an in-process node unnamed: it used to say invalid-node).
  repl.type("status\r");
  BOOST_REQUIRE_MESSAGE(repl.expect("local "), repl.screen());
  BOOST_REQUIRE_MESSAGE(repl.expect(cerebro::host_name().substr(0, 28)), repl.screen());
  BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
  BOOST_TEST(repl.screen().find("invalid-node") == std::string::npos);
  // The coordinator's lines about the experiment come while the prompt waits
  // with a half-typed command: each goes above the prompt, which is drawn
  // again below it with what was typed.
  repl.type("submit " + spec + "\r");
  BOOST_REQUIRE_MESSAGE(repl.expect("submitted experiment small-"), repl.screen());
  BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
  repl.type("he");
  BOOST_REQUIRE_MESSAGE(repl.expect(" completed"), repl.screen());
  BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> he", 10), repl.screen());
  repl.type("lp\r");
  BOOST_REQUIRE_MESSAGE(repl.expect("commands (help CMD"), repl.screen());
  BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
  // `log` shows them again, stamped with their time.
  repl.type("log\r");
  BOOST_REQUIRE_MESSAGE(repl.expect("coordinator: experiment small-"), repl.screen());
  BOOST_REQUIRE_MESSAGE(repl.expect(" completed"), repl.screen());
  BOOST_REQUIRE_MESSAGE(repl.expect("cerebro> "), repl.screen());
  repl.type("quit\r");
  BOOST_TEST(repl.wait_exit(20) == 0);
  // No log line ever shared a line with the prompt, and each came once above
  // a prompt (and once more in `log`'s output).
  int completed_lines = 0;
  for (const auto& line : repl.final_lines()) {
    BOOST_TEST(!(line.find("cerebro> ") != std::string::npos && line.find("coordinator:") != std::string::npos),
               "a log line on the prompt line: " + line);
    if (line.find("coordinator: small-") != std::string::npos && line.find(" completed") != std::string::npos)
      ++completed_lines;
  }
  BOOST_TEST(completed_lines == 2, repl.screen());
}
