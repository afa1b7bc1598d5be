// An idle actor system leaves the cores to training: CAF's scheduler threads
// (CAF 0.17 names them "caf.multiplexer") sleep until a message arrives and
// wake by themselves only rarely (actors/system_config.cpp), and a message
// sent to an idle system is still handled.
#define BOOST_TEST_MODULE actor_system_quiet
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "actors/system_config.hpp"

using namespace cerebro;
namespace fs = std::filesystem;

namespace {

// Voluntary context switches (sleeps) of this process's threads named `name`, by thread id.
std::map<std::string, long> sleeps_of_threads_named(const std::string& name) {
  std::map<std::string, long> out;
  for (const auto& task : fs::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string thread_name;
    std::getline(comm, thread_name);
    if (thread_name != name) continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) out[task.path().filename()] = std::stol(line.substr(24));
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(idle_scheduler_threads_wake_rarely_and_still_answer) {
  cerebro_system_config config(system_role::embedded);
  caf::actor_system system(config);
  auto echo = system.spawn([]() -> caf::behavior { return {[](int x) { return x + 1; }}; });
  caf::scoped_actor self{system};
  auto ask = [&] {
    int answer = 0;
    self->request(echo, std::chrono::seconds(10), 41).receive([&](int x) { answer = x; }, [](caf::error&) {});
    return answer;
  };
  BOOST_REQUIRE_EQUAL(ask(), 42);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past the threads' brief polling
  auto before = sleeps_of_threads_named("caf.multiplexer");
  BOOST_REQUIRE_EQUAL(before.size(), 2u);  // scheduler.max-threads
  std::this_thread::sleep_for(std::chrono::seconds(2));
  auto after = sleeps_of_threads_named("caf.multiplexer");
  for (const auto& [tid, sleeps] : after) {
    // Waking every 100 ms makes about 20 in 2 s; every 10 ms, about 200.
    BOOST_TEST(sleeps - before[tid] < 60,
               "scheduler thread " << tid << " woke " << sleeps - before[tid] << " times in 2 s of idleness");
  }
  BOOST_CHECK_EQUAL(ask(), 42);  // the idle system still answers
}
