// CSV loading: integer and string labels, quoting, CRLF, and every error naming file, line and column.

#include <boost/test/unit_test.hpp>

#include "datasets/csv.hpp"
#include "test/datasets/test_datasets_util.hpp"

using namespace cerebro::datasets;
using namespace cerebro::datasets::testing;

BOOST_AUTO_TEST_SUITE(csv)

BOOST_AUTO_TEST_CASE(integer_labels_with_crlf_and_quotes) {
  TempDir dir;
  write_text(dir.file("t.csv"), "a,label,\"b, quoted\"\r\n1,0,2\r\n\r\n 3.5 ,2,\"-4\"\r\n1e2,1,+0.25\r\n");
  std::vector<std::string> names = {"stale"};
  auto data = load_csv(dir.file("t.csv"), "label", &names);
  BOOST_TEST_REQUIRE(data.ok(), data.error());
  BOOST_TEST(data->size() == 3);
  BOOST_TEST(data->sample_shape == (std::vector<int64_t>{2}), boost::test_tools::per_element());
  BOOST_TEST(data->features == (std::vector<float>{1, 2, 3.5f, -4, 100, 0.25f}), boost::test_tools::per_element());
  BOOST_TEST(data->labels == (std::vector<int64_t>{0, 2, 1}), boost::test_tools::per_element());
  BOOST_TEST(names.empty());  // integer labels have no names
}

BOOST_AUTO_TEST_CASE(string_labels_become_sorted_classes) {
  TempDir dir;
  write_text(dir.file("iris.csv"),
             "x,species\n1,virginica\n2,setosa\n3,\"versi, color\"\n4,setosa\n5,-1\n");  // -1 is not an index
  std::vector<std::string> names;
  auto data = load_csv(dir.file("iris.csv"), "species", &names);
  BOOST_TEST_REQUIRE(data.ok(), data.error());
  BOOST_TEST(names == (std::vector<std::string>{"-1", "setosa", "versi, color", "virginica"}),
             boost::test_tools::per_element());
  BOOST_TEST(data->labels == (std::vector<int64_t>{3, 1, 2, 1, 0}), boost::test_tools::per_element());
  auto without_names = load_csv(dir.file("iris.csv"), "species", nullptr);
  BOOST_TEST_REQUIRE(without_names.ok(), without_names.error());
  BOOST_TEST(without_names->labels == data->labels, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(missing_label_column_lists_columns) {
  TempDir dir;
  write_text(dir.file("t.csv"), "a,b,target\n1,2,0\n");
  auto data = load_csv(dir.file("t.csv"), "label", nullptr);
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), dir.file("t.csv")), data.error());
  BOOST_TEST(contains(data.error(), "label column 'label' not found"), data.error());
  // The header's names are counted, not shown: the spec may have named a file that is no CSV of the user's.
  BOOST_TEST(contains(data.error(), "among the header's 3 columns"), data.error());
  BOOST_TEST(!contains(data.error(), "target"), data.error());
}

BOOST_AUTO_TEST_CASE(non_numeric_cell_names_line_and_column_not_the_value) {
  TempDir dir;
  write_text(dir.file("t.csv"), "width,height,label\n1,2,0\n3,tall,1\n");
  auto data = load_csv(dir.file("t.csv"), "label", nullptr);
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), dir.file("t.csv") + ": line 3, column 2: not a number"), data.error());
  BOOST_TEST(!contains(data.error(), "tall"), data.error());
  BOOST_TEST(!contains(data.error(), "height"), data.error());

  write_text(dir.file("e.csv"), "w,label\n,0\n");
  data = load_csv(dir.file("e.csv"), "label", nullptr);
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), "line 2, column 1: not a number"), data.error());
}

BOOST_AUTO_TEST_CASE(ragged_row) {
  TempDir dir;
  write_text(dir.file("t.csv"), "a,b,label\n1,2,0\n1,2,3,4\n");
  auto data = load_csv(dir.file("t.csv"), "label", nullptr);
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), dir.file("t.csv") + ": line 3: expected 3 cells as in the header, found 4"),
             data.error());
}

BOOST_AUTO_TEST_CASE(empty_headerless_missing_and_dataless_files) {
  TempDir dir;
  write_text(dir.file("empty.csv"), "");
  auto data = load_csv(dir.file("empty.csv"), "label", nullptr);
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), "empty.csv: file is empty"), data.error());

  write_text(dir.file("numbers.csv"), "1,2,3\n4,5,6\n");
  data = load_csv(dir.file("numbers.csv"), "label", nullptr);
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), "numbers.csv: no header row"), data.error());

  write_text(dir.file("blank-first.csv"), "\na,label\n1,0\n");
  data = load_csv(dir.file("blank-first.csv"), "label", nullptr);
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), "no header row"), data.error());

  write_text(dir.file("header-only.csv"), "a,label\r\n");
  data = load_csv(dir.file("header-only.csv"), "label", nullptr);
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), "header-only.csv: no data rows"), data.error());

  data = load_csv(dir.file("absent.csv"), "label", nullptr);
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), dir.file("absent.csv")), data.error());

  write_text(dir.file("quote.csv"), "a,label\n\"1,0\n");
  data = load_csv(dir.file("quote.csv"), "label", nullptr);
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), "line 2: unterminated quoted field"), data.error());
}

BOOST_AUTO_TEST_SUITE_END()
