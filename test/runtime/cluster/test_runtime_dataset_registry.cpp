// The coordinator's registered datasets: kept in <state>/datasets.json across a reopen, a name taken
// twice or removed when unknown is refused with nothing changed, and a damaged file is refused and left
// as it is.
#include <boost/test/unit_test.hpp>

#include <fstream>

#include "runtime/base/file_io.hpp"
#include "runtime/cluster/dataset_registry.hpp"
#include "test/support/temp_dir.hpp"

using namespace cerebro;
using cerebro::testing::TempDir;

namespace {

RegisteredDataset dataset(const std::string& name, const std::string& upload_dir = "") {
  return RegisteredDataset{
      name, {{"source", "csv"}, {"train", "/data/" + name + ".csv"}, {"label_column", "y"}}, upload_dir, 1700000000};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dataset_registry)

BOOST_AUTO_TEST_CASE(registered_datasets_survive_a_reopen_in_name_order) {
  TempDir state;
  {
    auto registry = DatasetRegistry::open(state.path().string());
    BOOST_REQUIRE(registry.ok());
    BOOST_TEST((*registry)->list().empty());
    BOOST_TEST((*registry)->add(dataset("sales")).ok());
    BOOST_TEST((*registry)->add(dataset("iris", state.file("uploads/abc"))).ok());
  }
  auto registry = DatasetRegistry::open(state.path().string());
  BOOST_REQUIRE(registry.ok());
  const auto& list = (*registry)->list();
  BOOST_REQUIRE_EQUAL(list.size(), 2u);
  BOOST_TEST(list[0].name == "iris");
  BOOST_TEST(list[1].name == "sales");
  BOOST_TEST(list[0].upload_dir == state.file("uploads/abc"));
  BOOST_TEST(list[1].registered_unix == 1700000000);
  BOOST_TEST((*registry)->tables()["sales"]["train"] == "/data/sales.csv");
  BOOST_TEST((*registry)->upload_dirs() == std::vector<std::string>({state.file("uploads/abc")}));
  BOOST_TEST(to_json(list[0])["uploaded"] == true);
}

BOOST_AUTO_TEST_CASE(a_taken_name_and_an_unknown_one_are_refused_and_change_nothing) {
  TempDir state;
  auto registry = DatasetRegistry::open(state.path().string());
  BOOST_REQUIRE(registry.ok());
  BOOST_REQUIRE((*registry)->add(dataset("sales")).ok());
  auto again = (*registry)->add(dataset("sales"));
  BOOST_TEST((again.code() == StatusCode::failed_precondition));
  BOOST_TEST(again.message().find("registered already") != std::string::npos, again.message());
  auto unknown = (*registry)->remove("sale");
  BOOST_TEST((unknown.code() == StatusCode::not_found));
  BOOST_TEST(unknown.error().find("registered: \"sales\"") != std::string::npos, unknown.error());
  auto removed = (*registry)->remove("sales");
  BOOST_REQUIRE(removed.ok());
  BOOST_TEST(removed->name == "sales");
  BOOST_TEST((*registry)->list().empty());
  auto reopened = DatasetRegistry::open(state.path().string());
  BOOST_REQUIRE(reopened.ok());
  BOOST_TEST((*reopened)->list().empty());
}

BOOST_AUTO_TEST_CASE(a_damaged_file_is_refused_and_left_as_it_is) {
  TempDir state;
  std::ofstream(state.file("datasets.json")) << "{\"datasets\": [{\"name\": 3}]}";
  auto registry = DatasetRegistry::open(state.path().string());
  BOOST_REQUIRE(!registry.ok());
  BOOST_TEST(registry.error().find("datasets.json") != std::string::npos, registry.error());
  BOOST_TEST(*read_whole_file(state.file("datasets.json")) == "{\"datasets\": [{\"name\": 3}]}");
}

BOOST_AUTO_TEST_SUITE_END()
