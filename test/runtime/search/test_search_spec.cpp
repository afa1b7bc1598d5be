// The [experiment] keys of asha, hyperband and pbt: parsing, defaults,
// errors naming key and place, and the configs and procedures built from them.
#include <boost/test/unit_test.hpp>

#include <initializer_list>
#include <string>

#include "runtime/search/asha.hpp"
#include "runtime/search/factory.hpp"
#include "runtime/search/hyperband.hpp"
#include "runtime/search/pbt.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/spec/spec.hpp"

using namespace cerebro;

namespace {

const std::string kData = "[data]\nsource = \"idx\"\npath = \"/d\"\n";
const std::string kSpace =
    "[space]\nmodel = [\"mlp\", \"cnn\"]\nlr = { dist = \"loguniform\", low = 1e-4, high = 1e-1 }\n"
    "batch_size = [64, 256]\n";

ExperimentSpec parse(const std::string& experiment, const std::string& space = kSpace) {
  auto result = parse_spec_string("[experiment]\n" + experiment + kData + space, "/specs", "search.toml");
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  return std::move(result).value();
}

void expect_error(const std::string& experiment, std::initializer_list<std::string> parts,
                  const std::string& space = kSpace) {
  auto result = parse_spec_string("[experiment]\n" + experiment + kData + space, "/specs", "search.toml");
  BOOST_REQUIRE_MESSAGE(!result.ok(), "expected a parse error for:\n" + experiment);
  for (const auto& part : parts) {
    BOOST_TEST(result.error().find(part) != std::string::npos,
               "message \"" << result.error() << "\" should contain \"" << part << "\"");
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(search_spec)

BOOST_AUTO_TEST_CASE(asha_keys_parse_and_build_the_procedure) {
  auto spec = parse("search = \"asha\"\nsamples = 27\nmax_epochs = 9\neta = 3\nmin_epochs = 1\n");
  BOOST_TEST(spec.search == SearchKind::asha);
  BOOST_TEST(spec.samples == 27);
  BOOST_TEST(spec.max_epochs == 9);
  BOOST_TEST(spec.epochs == 9);  // every config is planned for R epochs
  auto configs = configs_for(spec).value();
  BOOST_TEST(configs.size() == 27u);
  auto procedure = make_search_procedure(spec, configs).value();
  BOOST_TEST(procedure->name() == "asha");
  BOOST_TEST((dynamic_cast<AshaProcedure&>(*procedure).rungs() == std::vector<int32_t>{1, 3}));
  BOOST_TEST(spec_to_json(spec)["max_epochs"] == 9);
  BOOST_TEST(parse("search = \"asha\"\nsamples = 4\nmax_epochs = 9\n").eta == 3);  // the default
}

BOOST_AUTO_TEST_CASE(hyperband_derives_its_configs_from_the_brackets) {
  auto spec = parse("search = \"hyperband\"\nmax_epochs = 81\neta = 3\n");
  BOOST_TEST(spec.epochs == 81);
  auto configs = configs_for(spec).value();
  BOOST_TEST(configs.size() == 143u);  // 81 + 34 + 15 + 8 + 5
  BOOST_TEST(configs.back().id == 142);
  auto procedure = make_search_procedure(spec, configs).value();
  BOOST_TEST(procedure->name() == "hyperband");
  BOOST_TEST(dynamic_cast<HyperbandProcedure&>(*procedure).bracket_of(81) == 1u);
  auto two = parse("search = \"hyperband\"\nmax_epochs = 81\nbrackets = 2\n");
  BOOST_TEST(configs_for(two).value().size() == 115u);
  configs.pop_back();
  BOOST_TEST(make_search_procedure(spec, configs).error() ==
             "[experiment] search = \"hyperband\" needs 143 configs for max_epochs 81 and eta 3, got 142");
}

BOOST_AUTO_TEST_CASE(pbt_keys_parse_with_their_defaults) {
  auto spec = parse("search = \"pbt\"\npopulation = 8\nepochs = 6\n");
  BOOST_TEST(spec.population == 8);
  BOOST_TEST(spec.ready == 1);
  BOOST_TEST(spec.exploit_fraction == 0.25);
  BOOST_TEST((spec.perturb == std::vector<double>{0.8, 1.2}));
  BOOST_TEST(spec.perturb_keys.empty());
  BOOST_TEST(configs_for(spec).value().size() == 8u);
  auto procedure = make_search_procedure(spec, configs_for(spec).value()).value();
  BOOST_TEST(procedure->name() == "pbt");
  auto custom = parse(
      "search = \"pbt\"\npopulation = 4\nepochs = 10\nready = 2\nexploit_fraction = 0.5\n"
      "perturb = [0.5, 1, 2]\nperturb_keys = [\"lr\", \"batch_size\"]\n");
  BOOST_TEST(custom.ready == 2);
  BOOST_TEST(custom.exploit_fraction == 0.5);
  BOOST_TEST((custom.perturb == std::vector<double>{0.5, 1.0, 2.0}));
  BOOST_TEST((custom.perturb_keys == std::vector<std::string>{"lr", "batch_size"}));
  BOOST_TEST(make_search_procedure(custom, configs_for(custom).value()).ok());
  BOOST_TEST(make_search_procedure(parse("search = \"grid\"\n", "[space]\nmodel = [\"mlp\"]\n"), {}).value()->name() ==
             "fixed");
}

BOOST_AUTO_TEST_CASE(required_keys_and_keys_of_other_searches) {
  expect_error("search = \"asha\"\nmax_epochs = 9\n",
               {"search.toml:1:1: [experiment] samples is required", "samples = 27"});
  expect_error("search = \"asha\"\nsamples = 9\n", {"[experiment] max_epochs is required", "max_epochs = 9"});
  expect_error("search = \"hyperband\"\n", {"[experiment] max_epochs is required", "max_epochs = 81"});
  expect_error("search = \"pbt\"\n", {"[experiment] population is required", "population = 8"});
  expect_error("search = \"hyperband\"\nmax_epochs = 9\nsamples = 5\n",
               {"search.toml:4:11: [experiment] samples applies only to search = \"random\", \"asha\" or \"tpe\"",
                "hyperband derives the number of configs"});
  expect_error("search = \"asha\"\nsamples = 4\nmax_epochs = 9\nepochs = 3\n",
               {"search.toml:5:10: [experiment] epochs does not apply to search = \"asha\"", "give max_epochs"});
  expect_error("eta = 3\n", {"[experiment] eta applies only to search = \"asha\", \"hyperband\" or \"tpe\""},
               "[space]\nmodel = [\"mlp\"]\n");
  expect_error("search = \"random\"\nsamples = 3\nperturb = [0.8]\n",
               {"[experiment] perturb applies only to search = \"pbt\""});
  expect_error("search = \"asha\"\nsamples = 4\nmax_epochs = 9\nbrackets = 2\n",
               {"brackets applies only to search = \"hyperband\""});
  expect_error("search = \"hyperband\"\nmax_epochs = 9\nmin_epochs = 2\n",
               {"min_epochs applies only to search = \"asha\""});
  expect_error("search = \"pbt\"\npopulation = 4\nsamples = 4\n", {"(pbt samples `population` configs)"});
  expect_error("search = \"asha\"\nsamples = 4\nmax_epochs = 9\npopulation = 4\n",
               {"population applies only to search = \"pbt\""});
}

BOOST_AUTO_TEST_CASE(values_out_of_range) {
  const std::string asha = "search = \"asha\"\nsamples = 4\n";
  expect_error(asha + "max_epochs = 0\n",
               {"search.toml:4:14: [experiment] max_epochs must be an integer >= 1, got integer 0"});
  expect_error(asha + "max_epochs = 9\neta = 1\n", {"[experiment] eta must be an integer >= 2, got integer 1"});
  expect_error(asha + "max_epochs = 9\neta = 2.5\n", {"eta must be an integer >= 2, got float 2.5"});
  expect_error(asha + "max_epochs = 9\nmin_epochs = 10\n",
               {"[experiment] min_epochs must be <= max_epochs (9), got 10"});
  expect_error(
      "search = \"hyperband\"\nmax_epochs = 81\nbrackets = 6\n",
      {"search.toml:4:12: [experiment] brackets must be <= 5: max_epochs 81 and eta 3 give 5 brackets, got 6"});
  expect_error("search = \"hyperband\"\nmax_epochs = 1000000\neta = 2\n",
               {"[experiment] max_epochs 1000000 with eta 2 makes hyperband start", "more than 100000"});
  const std::string pbt = "search = \"pbt\"\npopulation = 4\nepochs = 4\n";
  expect_error("search = \"pbt\"\npopulation = 1\n", {"population must be an integer >= 2"});
  expect_error(pbt + "ready = 4\n", {"search.toml:5:9: [experiment] ready must be less than epochs (4)"});
  expect_error("search = \"pbt\"\npopulation = 4\nepochs = 1\n",
               {"[experiment] epochs must be more than ready (1) for search = \"pbt\""});
  expect_error(pbt + "exploit_fraction = 0.6\n", {"exploit_fraction must be a number in (0, 0.5], got float 0.6"});
  expect_error(pbt + "exploit_fraction = 0\n", {"exploit_fraction must be a number in (0, 0.5], got integer 0"});
  expect_error(pbt + "perturb = [0.8, 0]\n", {"perturb must be a non-empty list of numbers > 0, got array [0.8,0]"});
  expect_error(pbt + "perturb = []\n", {"perturb must be a non-empty list of numbers > 0"});
  expect_error(pbt + "perturb = 1.2\n", {"perturb must be a non-empty list of numbers > 0, got float 1.2"});
  expect_error(pbt + "perturb_keys = \"lr\"\n", {"perturb_keys must be a non-empty list of hyper-parameter names"});
}

BOOST_AUTO_TEST_CASE(pbt_checks_what_it_perturbs_against_the_space) {
  const std::string pbt = "search = \"pbt\"\npopulation = 4\nepochs = 4\n";
  expect_error(
      pbt + "perturb_keys = [\"lrr\"]\n",
      {"search.toml:5:16: [experiment] perturb_keys names 'lrr', which is not in [space] (did you mean 'lr'?)"});
  expect_error(pbt + "perturb_keys = [\"model\"]\n", {"perturb_keys names 'model', which is not numeric in [space]"});
  expect_error(pbt, {"search.toml:1:1: [experiment] search = \"pbt\" has nothing to perturb"},
               "[space]\nmodel = [\"mlp\"]\nbatch_size = [64, 128]\n");
  // A broken [space] is reported alone, not again as "nothing to perturb".
  auto broken = parse_spec_string("[experiment]\n" + pbt + kData + "[space]\nlr = []\n", "/specs", "search.toml");
  BOOST_TEST(broken.error().find("nothing to perturb") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(distributions_are_allowed_for_every_sampling_search) {
  for (const std::string& experiment :
       {std::string("search = \"asha\"\nsamples = 4\nmax_epochs = 3\n"),
        std::string("search = \"hyperband\"\nmax_epochs = 3\n"), std::string("search = \"pbt\"\npopulation = 3\n")}) {
    auto spec = parse(experiment);
    auto configs = configs_for(spec).value();
    for (const auto& c : configs) BOOST_TEST(c.params["lr"].is_number_float());
  }
  expect_error("search = \"grid\"\n", {"[space] lr is a distribution"});
  BOOST_TEST(search_names().size() == 6u);
  expect_error("search = \"bohb\"\n",
               {"search must be \"grid\", \"random\", \"asha\", \"hyperband\", \"pbt\" or \"tpe\""});
}

BOOST_AUTO_TEST_SUITE_END()
