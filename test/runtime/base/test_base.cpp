// runtime/base: Status and its codes, the one checksum, the one file reader
// and atomic writer, the one timestamp format.
#define BOOST_TEST_MODULE base
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/base/checksum.hpp"
#include "runtime/base/contract.hpp"
#include "runtime/base/enum_names.hpp"
#include "runtime/base/fault_injection.hpp"
#include "runtime/base/file_io.hpp"
#include "runtime/base/status.hpp"
#include "runtime/base/time_format.hpp"
#include "test/support/contract_check.hpp"
#include "test/support/temp_dir.hpp"

using namespace cerebro;
using cerebro::testing::TempDir;
namespace fs = std::filesystem;

namespace cerebro {
// For Boost.Test's messages on a failed comparison.
std::ostream& operator<<(std::ostream& out, StatusCode code) { return out << to_string(code); }
}  // namespace cerebro

BOOST_AUTO_TEST_CASE(a_status_carries_its_code_and_message) {
  BOOST_TEST(Status().ok());
  BOOST_TEST(Status().code() == StatusCode::ok);
  BOOST_TEST(Status().message().empty());
  auto corrupt = Status::corruption("part-0001.bin: checksum mismatch");
  BOOST_TEST(!corrupt.ok());
  BOOST_TEST(corrupt.is_corruption());
  BOOST_TEST(!corrupt.is_io_error());
  BOOST_TEST(corrupt.message() == "part-0001.bin: checksum mismatch");
  BOOST_TEST(Status::io_error("x").is_io_error());
  BOOST_TEST(Status::not_found("x").is_not_found());
  BOOST_TEST(Status::invalid_argument("x").is_invalid_argument());
  BOOST_TEST(Status::failed_precondition("x").is_failed_precondition());
  BOOST_TEST(Status::unavailable("x").is_unavailable());
  BOOST_TEST(Status::internal("x").is_internal());
  BOOST_TEST(Status::of(StatusCode::io_error, "x").is_io_error());
  BOOST_TEST(Status::of(StatusCode::ok, "ignored").ok());
  BOOST_TEST(std::string(to_string(StatusCode::corruption)) == "corruption");
  BOOST_TEST(std::string(to_string(StatusCode::failed_precondition)) == "failed_precondition");
}

BOOST_AUTO_TEST_CASE(context_keeps_the_code) {
  auto s = Status::corruption("checksum mismatch").with_context("config 3");
  BOOST_TEST(s.is_corruption());
  BOOST_TEST(s.message() == "config 3: checksum mismatch");
  BOOST_TEST(Status().with_context("config 3").ok());
}

BOOST_AUTO_TEST_CASE(a_result_exposes_the_code) {
  Result<int> value = 4;
  BOOST_TEST(value.ok());
  BOOST_TEST(value.code() == StatusCode::ok);
  Result<int> failed = Status::not_found("no config 9");
  BOOST_TEST(!failed.ok());
  BOOST_TEST(failed.code() == StatusCode::not_found);
  BOOST_TEST(failed.error() == "no config 9");
  Result<int> misuse = Status::ok_status();
  BOOST_TEST(misuse.code() == StatusCode::internal);
  // Reading the value of a failed Result is the caller's bug: it aborts, naming the failure.
  CEREBRO_CHECK_CONTRACT((void)std::move(failed).value(), "accessed the value of a failed Result: no config 9");
  CEREBRO_CHECK_CONTRACT((void)*failed, "Result::value");
  // A boundary turns the failure into its exception with the code kept.
  Error error(failed.status());
  BOOST_TEST(error.code() == StatusCode::not_found);
  BOOST_TEST(std::string(error.what()) == "no config 9");
}

BOOST_AUTO_TEST_CASE(checksums_match_zlib_crc32_in_the_stored_format) {
  // The reference value of CRC-32 (the check value of the gzip polynomial):
  // stores and shards written before this helper existed must still verify.
  BOOST_TEST(checksum_of("123456789") == "crc32:cbf43926");
  BOOST_TEST(checksum_of("") == "crc32:00000000");
  BOOST_TEST(checksum_of(std::string("a\0b", 3)) != checksum_of("ab"));
  Crc32 pieces;
  pieces.update("1234", 4).update(std::string_view("56789"));
  BOOST_TEST(pieces.text() == "crc32:cbf43926");
  BOOST_TEST(pieces.value() == 0xcbf43926u);
}

BOOST_AUTO_TEST_CASE(whole_file_reads_name_the_path_and_the_kind_of_failure) {
  TempDir tmp;
  auto path = tmp.write("data.bin", std::string("bytes\0more", 10));
  auto read = read_whole_file(path);
  BOOST_REQUIRE(read.ok());
  BOOST_TEST(*read == std::string("bytes\0more", 10));
  auto missing = read_whole_file(tmp.file("absent"));
  BOOST_TEST(missing.status().is_not_found());
  BOOST_TEST(missing.error().find(tmp.file("absent")) != std::string::npos);
  BOOST_TEST(read_whole_file(tmp.path().string()).status().is_invalid_argument());
  if (::geteuid() != 0) {  // root reads files whatever their mode
    ::chmod(path.c_str(), 0);
    BOOST_TEST(read_whole_file(path).status().is_io_error());
  }
}

BOOST_AUTO_TEST_CASE(atomic_writes_replace_the_file_and_leave_no_temporary) {
  TempDir tmp;
  auto path = tmp.file("summary.json");
  BOOST_REQUIRE(write_file_atomically(path, "first\n").ok());
  BOOST_REQUIRE(write_file_atomically(path, "second\n").ok());
  BOOST_TEST(*read_whole_file(path) == "second\n");
  BOOST_TEST(!fs::exists(path + ".tmp"));
  auto nowhere = write_file_atomically(tmp.file("no/such/dir/file"), "x");
  BOOST_TEST(nowhere.is_io_error());
  {
    AtomicFileWriter abandoned(tmp.file("abandoned"));
    BOOST_REQUIRE(abandoned.open().ok());
    BOOST_REQUIRE(abandoned.write("x", 1).ok());
  }
  BOOST_TEST(!fs::exists(tmp.file("abandoned")));
  BOOST_TEST(!fs::exists(tmp.file("abandoned.tmp")));
}

BOOST_AUTO_TEST_CASE(timestamps_are_compact_local_time) {
  const char* old = std::getenv("TZ");
  std::string saved = old ? old : "";
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  BOOST_TEST(compact_local_timestamp(1700000000) == "20231114-221320");
  ::setenv("TZ", "UTC-2", 1);  // POSIX: two hours east of UTC
  ::tzset();
  BOOST_TEST(compact_local_timestamp(1700000000) == "20231115-001320");
  if (old)
    ::setenv("TZ", saved.c_str(), 1);
  else
    ::unsetenv("TZ");
  ::tzset();
  BOOST_TEST(compact_local_timestamp_now().size() == 15u);
}

BOOST_AUTO_TEST_CASE(a_contract_violation_aborts_with_its_message) {
  CEREBRO_CHECK_CONTRACT(contract_violation("MopBook::start", "worker 3 is busy"), "MopBook::start: worker 3 is busy");
  // A call that keeps its contract does not abort.
  auto kept = testing::run_expecting_abort([] {});
  BOOST_CHECK(!kept.aborted);
  BOOST_CHECK(kept.message.empty());
}

namespace {
enum class Shade { light, dark, unnamed };
constexpr std::array<EnumName<Shade>, 2> kShadeNames = {{{Shade::light, "light"}, {Shade::dark, "dark"}}};
struct ShadeInfo {
  Shade kind;
  std::string name;
};
}  // namespace

BOOST_AUTO_TEST_CASE(an_enum_table_is_read_both_ways) {
  BOOST_TEST(enum_name(kShadeNames, Shade::dark) == "dark");
  BOOST_TEST(enum_name(kShadeNames, Shade::unnamed) == "unknown", "a value the table lacks gets the fallback");
  BOOST_TEST(enum_name(kShadeNames, Shade::unnamed, "?") == "?");
  BOOST_TEST((enum_named<Shade>(kShadeNames, "light") == Shade::light));
  BOOST_TEST(!enum_named<Shade>(kShadeNames, "Light").has_value(), "names are exact");
  BOOST_TEST(!enum_named<Shade>(kShadeNames, "").has_value());
  BOOST_TEST(enum_names(kShadeNames) == (std::vector<std::string>{"light", "dark"}), boost::test_tools::per_element());
  BOOST_TEST(enum_alternatives(kShadeNames) == "light or dark");
  // A registry of info structs reads the same way.
  const std::vector<ShadeInfo> registry = {{Shade::light, "pale"}, {Shade::dark, "deep"}, {Shade::unnamed, "grey"}};
  BOOST_TEST(enum_name(registry, Shade::unnamed) == "grey");
  BOOST_TEST((enum_named<Shade>(registry, "deep") == Shade::dark));
  BOOST_TEST(enum_alternatives(registry) == "pale, deep or grey");
}

BOOST_AUTO_TEST_CASE(fault_rules_are_read_by_name_and_argument_count) {
  BOOST_TEST(FaultInjection::parse("crash=after_commit:2;fail_unit=1:0:1;slow_worker=0:3").ok());
  BOOST_TEST(FaultInjection::parse("throw=in_unit").ok());
  for (const char* bad : {"crash=a:1:2", "fail_unit=1:0", "explode=1", "slow_worker=0:0.5", "damage_state="}) {
    auto parsed = FaultInjection::parse(bad);
    BOOST_TEST_INFO(bad);
    BOOST_TEST(!parsed.ok());
    BOOST_TEST(parsed.status().message().find("is not one of") != std::string::npos);
  }
  auto parsed = FaultInjection::parse("damage_state=x");
  BOOST_TEST(parsed.status().message().find("non-numeric") != std::string::npos);
}
