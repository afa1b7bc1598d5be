// tools/crash_handler: a crashing cerebro names its signal and prints a stack
// trace whose frames carry source file and line.
#define BOOST_TEST_MODULE crash_handler
#include <boost/test/unit_test.hpp>

#include <regex>

#include "test/support/e2e_util.hpp"

using namespace cerebro::e2e;

BOOST_AUTO_TEST_CASE(a_crash_prints_a_trace_with_source_files_and_lines) {
  // The fault rule raises SIGSEGV right after the handler is installed; the
  // shell reports how the process ended.
  auto out =
      run_command("{ CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test CEREBRO_FAULTS=fatal_signal=crash_handler_installed " +
                  cerebro_binary() + " show /nonexistent; echo \"exit status $?\"; }");
  BOOST_TEST_INFO(out.text);
  BOOST_TEST(out.text.find("cerebro: fatal signal: Segmentation fault") != std::string::npos);
  // 128 + SIGSEGV: the process died of the signal, after the report.
  BOOST_TEST(out.text.find("exit status 139") != std::string::npos);
  // The project's frames up to the crash, with their source files and lines
  // (backward-cpp prints `Source "<file>", line <n>, in <function>`). The
  // fault hook's own frame is a tail call into raise(): not on the stack.
  BOOST_TEST(std::regex_search(out.text, std::regex(R"(crash_handler\.cpp", line [0-9]+)")));
  BOOST_TEST(std::regex_search(out.text, std::regex(R"(cerebro\.cpp", line [0-9]+, in main)")));
}

BOOST_AUTO_TEST_CASE(without_a_crash_nothing_is_printed) {
  auto out = run_command("{ " + cerebro_binary() + " show /nonexistent; echo \"exit status $?\"; }");
  BOOST_TEST_INFO(out.text);
  BOOST_TEST(out.text.find("fatal signal") == std::string::npos);
  BOOST_TEST(out.text.find("exit status 1") != std::string::npos);
}
