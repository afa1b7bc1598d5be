// The search registry: one entry per search kind, each accepting only keys
// the spec declares as search-specific, and the spec layer applying no
// search's rules unless the registry's checks are passed in.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "runtime/spec/search_registry.hpp"
#include "runtime/spec/spec.hpp"

using namespace cerebro;

namespace {

const std::string kRest = "[data]\nsource = \"idx\"\npath = \"/d\"\n[space]\nmodel = [\"mlp\"]\n";

}  // namespace

BOOST_AUTO_TEST_SUITE(search_registry_suite)

BOOST_AUTO_TEST_CASE(every_search_kind_has_one_entry_in_kind_order) {
  BOOST_REQUIRE(search_registry().size() == search_kinds().size());
  for (size_t i = 0; i < search_kinds().size(); ++i) {
    BOOST_TEST(search_registry()[i].kind == search_kinds()[i]);
    BOOST_TEST(&search_info(search_kinds()[i]) == &search_registry()[i]);
    BOOST_TEST(!search_registry()[i].description.empty());
  }
}

BOOST_AUTO_TEST_CASE(the_entries_accept_exactly_the_search_specific_keys) {
  std::set<std::string> accepted;
  for (const auto& info : search_registry()) {
    for (const auto& key : info.keys) {
      const auto& declared = search_specific_keys();
      BOOST_TEST((std::find(declared.begin(), declared.end(), key) != declared.end()), key);
      accepted.insert(key);
    }
    for (const auto& [key, hint] : info.misplaced_key_hints) {
      BOOST_TEST((std::find(info.keys.begin(), info.keys.end(), key) == info.keys.end()), key);
    }
  }
  BOOST_TEST(accepted == std::set<std::string>(search_specific_keys().begin(), search_specific_keys().end()),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(only_grid_enumerates_and_only_fixed_epoch_searches_take_added_configs) {
  for (const auto& info : search_registry()) {
    BOOST_TEST(info.samples_space == (info.kind != SearchKind::grid), to_string(info.kind));
    BOOST_TEST(info.takes_added_configs == (info.kind == SearchKind::grid || info.kind == SearchKind::random),
               to_string(info.kind));
  }
}

BOOST_AUTO_TEST_CASE(the_spec_layer_alone_applies_no_search_rules) {
  // random needs samples, and samples does not apply to grid: rules of the
  // registry, so the bare spec parser accepts both and the full parse does not.
  const std::string random_without_samples = "[experiment]\nsearch = \"random\"\n" + kRest;
  BOOST_TEST(parse_spec_string_with(random_without_samples, "/specs", "r.toml", SearchChecks{}).ok());
  auto full = parse_spec_string(random_without_samples, "/specs", "r.toml");
  BOOST_REQUIRE(!full.ok());
  BOOST_TEST(full.error() ==
             "r.toml:1:1: [experiment] samples is required: search = \"random\" needs the number "
             "of configs to sample, e.g. samples = 8");

  const std::string grid_with_samples = "[experiment]\nsamples = 3\n" + kRest;
  BOOST_TEST(parse_spec_string_with(grid_with_samples, "/specs", "g.toml", SearchChecks{}).ok());
  auto grid = parse_spec_string(grid_with_samples, "/specs", "g.toml");
  BOOST_REQUIRE(!grid.ok());
  BOOST_TEST(grid.error() ==
             "g.toml:2:11: [experiment] samples applies only to search = \"random\", \"asha\" or \"tpe\" "
             "(a grid tries every combination)");
}

BOOST_AUTO_TEST_CASE(asha_and_hyperband_derive_epochs_from_max_epochs_in_the_registry_check) {
  auto asha =
      parse_spec_string("[experiment]\nsearch = \"asha\"\nsamples = 4\nmax_epochs = 9\n" + kRest, "/specs", "a.toml");
  BOOST_REQUIRE_MESSAGE(asha.ok(), asha.error());
  BOOST_TEST(asha->epochs == 9);
  auto bare = parse_spec_string_with("[experiment]\nsearch = \"asha\"\nsamples = 4\nmax_epochs = 9\n" + kRest, "/specs",
                                     "a.toml", SearchChecks{});
  BOOST_REQUIRE(bare.ok());
  BOOST_TEST(bare->epochs == 3);  // the default: no search rule ran
}

BOOST_AUTO_TEST_SUITE_END()
