// Registered dataset sources: the registry's rules, the loader's checks, the
// ETL taking its examples from a loader, and spec parsing of source names.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <stdexcept>

#include "datasets/dataset_source.hpp"
#include "datasets/normalization.hpp"
#include "datasets/prepare.hpp"
#include "runtime/spec/spec.hpp"
#include "test/support/temp_dir.hpp"
#include "test/embed/test_embed_util.hpp"

using namespace cerebro;
using namespace cerebro::datasets;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

DatasetLoader returning(SourceData data) {
  return [data]() -> Result<SourceData> { return data; };
}

SourceData separable(int64_t n) {
  SourceData s;
  s.train = testing::separable_dataset(n, 4, 3, 7);
  return s;
}

// Unregisters on scope exit, so tests do not see each other's sources.
struct Registered {
  explicit Registered(std::string n, DatasetLoader loader) : name(std::move(n)) {
    auto s = register_dataset_source(name, std::move(loader));
    if (!s.ok()) throw std::runtime_error(s.message());
  }
  ~Registered() { unregister_dataset_source(name); }
  std::string name;
};

const std::string kSpace = "[space]\nmodel = [\"mlp\"]\n";

}  // namespace

BOOST_AUTO_TEST_SUITE(dataset_source)

BOOST_AUTO_TEST_CASE(registry_refuses_builtin_and_malformed_names) {
  auto idx = register_dataset_source("idx", returning(separable(10)));
  BOOST_TEST(!idx.ok());
  BOOST_TEST(contains(idx.message(), "built in"), idx.message());
  for (const char* bad : {"", "Sensor", "9lives", "with space", "a.b"}) {
    auto s = register_dataset_source(bad, returning(separable(10)));
    BOOST_TEST(!s.ok(), bad);
  }
  BOOST_TEST(!register_dataset_source("empty-loader", DatasetLoader{}).ok());
  const auto names = registered_dataset_sources();
  for (const char* name : {"idx", "Sensor", "empty-loader"})
    BOOST_TEST(std::count(names.begin(), names.end(), name) == 0, name);
}

BOOST_AUTO_TEST_CASE(register_replace_and_unregister) {
  {
    Registered feed("feed", returning(separable(10)));
    BOOST_TEST(is_known_dataset_source("feed"));
    BOOST_TEST(is_known_dataset_source("csv"));
    BOOST_TEST(registered_dataset_sources() == std::vector<std::string>{"feed"});
    BOOST_REQUIRE(register_dataset_source("feed", returning(separable(20))).ok());
    auto loaded = load_registered_source("feed");
    BOOST_REQUIRE(loaded.ok());
    BOOST_TEST(loaded->train.size() == 20);  // the replacement's data
  }
  BOOST_TEST(!is_known_dataset_source("feed"));
  BOOST_TEST(!unregister_dataset_source("feed"));
  auto missing = load_registered_source("feed");
  BOOST_TEST(contains(missing.error(), "source 'feed' is not registered"), missing.error());
}

BOOST_AUTO_TEST_CASE(loader_output_is_checked_and_errors_name_the_source) {
  auto expect = [](DatasetLoader loader, const std::string& part) {
    Registered source("checked", std::move(loader));
    auto r = load_registered_source("checked");
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(contains(r.error(), "source 'checked': "), r.error());
    BOOST_TEST(contains(r.error(), part), r.error());
  };
  expect(returning(SourceData{}), "no training examples");
  auto ragged = separable(10);
  ragged.train.features.pop_back();
  expect(returning(ragged), "expected 40");
  auto zero_dim = separable(10);
  zero_dim.train.sample_shape = {0, 4};
  expect(returning(zero_dim), "not positive");
  auto other_test = separable(10);
  other_test.test = testing::separable_dataset(5, 2, 3, 1);
  expect(returning(other_test), "test examples have shape [2]");
  expect([]() -> Result<SourceData> { return Status::unavailable("warehouse offline"); }, "warehouse offline");
  expect([]() -> Result<SourceData> { throw std::runtime_error("boom"); }, "the loader threw: boom");
}

BOOST_AUTO_TEST_CASE(prepare_takes_the_examples_from_the_loader) {
  cerebro::testing::TempDir dir;
  auto data = separable(100);
  data.class_names = {"idle", "walk", "run"};
  Registered feed("feed", returning(data));
  PrepareOptions o;
  o.source = "feed";
  o.partitions = 3;
  o.validation_fraction = 0.2;
  o.test_fraction = 0.1;
  auto manifest = prepare(o, dir.file("out"));
  BOOST_REQUIRE_MESSAGE(manifest.ok(), manifest.error());
  BOOST_TEST(manifest->source == "feed");
  BOOST_TEST(manifest->inputs == std::vector<std::string>{"source:feed"});
  BOOST_TEST(manifest->class_names == data.class_names);
  BOOST_TEST(manifest->num_classes == 3);
  BOOST_TEST(manifest->test.count == 10);      // carved off: no test set given
  BOOST_TEST(manifest->train_examples == 72);  // 90 left, 18 to validation
  auto loaded = load_prepared(dir.file("out"));
  BOOST_REQUIRE_MESSAGE(loaded.ok(), loaded.error());
  BOOST_TEST(loaded->partitions.size() == 3u);
}

BOOST_AUTO_TEST_CASE(prepare_uses_the_loaders_test_set_and_reports_loader_errors) {
  cerebro::testing::TempDir dir;
  auto data = separable(60);
  data.test = testing::separable_dataset(15, 4, 3, 9);
  Registered feed("feed", returning(data));
  PrepareOptions o;
  o.source = "feed";
  o.partitions = 2;
  auto manifest = prepare(o, dir.file("out"));
  BOOST_REQUIRE_MESSAGE(manifest.ok(), manifest.error());
  BOOST_TEST(manifest->test.count == 15);

  Registered broken("broken", []() -> Result<SourceData> { return Status::not_found("no rows today"); });
  o.source = "broken";
  auto failed = prepare(o, dir.file("failed"));
  BOOST_TEST(contains(failed.error(), "source 'broken': no rows today"), failed.error());
  o.source = "nowhere";
  auto unknown = prepare(o, dir.file("unknown"));
  BOOST_TEST(contains(unknown.error(), "expected idx, csv, images, coco, text or a registered source (broken, feed)"),
             unknown.error());
}

BOOST_AUTO_TEST_CASE(spec_accepts_registered_sources_only) {
  auto parse = [](const std::string& data) { return parse_spec_string("[data]\n" + data + kSpace, "", "s.toml"); };
  auto unknown = parse("source = \"feed\"\n");
  BOOST_TEST(
      contains(unknown.error(), "source must be \"idx\", \"csv\", \"images\", \"coco\" or \"text\", got \"feed\""),
      unknown.error());

  Registered feed("feed", returning(separable(10)));
  auto spec = parse("source = \"feed\"\nlimit = 50\ntest_fraction = 0.2\n");
  BOOST_REQUIRE_MESSAGE(spec.ok(), spec.error());
  BOOST_TEST(spec->data.source == "feed");
  BOOST_TEST((effective_normalization(spec->data) == NormalizationMode::per_feature));
  auto with_files = parse("source = \"feed\"\npath = \"/data\"\nlabel_column = \"y\"\n");
  BOOST_TEST(contains(with_files.error(), "[data] path applies only to source = \"idx\""), with_files.error());
  BOOST_TEST(contains(with_files.error(), "[data] label_column applies only to source = \"csv\""), with_files.error());
  auto other = parse("source = \"feeds\"\n");
  BOOST_TEST(contains(other.error(), "got \"feeds\""), other.error());
  BOOST_TEST(contains(other.error(), "\"feed\""), other.error());
}

BOOST_AUTO_TEST_SUITE_END()
