// Unit, config and experiment statuses: each enum value round-trips through
// the one word that stored records, summary.json and status output use, and a
// stored word that is none of them is refused.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/lifecycle.hpp"
#include "runtime/base/status.hpp"

using namespace cerebro;

BOOST_AUTO_TEST_SUITE(lifecycle)

BOOST_AUTO_TEST_CASE(unit_statuses_round_trip_through_their_words) {
  const std::vector<std::pair<UnitStatus, std::string>> all = {
      {UnitStatus::ok, "ok"}, {UnitStatus::diverged, "diverged"}, {UnitStatus::failed, "failed"}};
  for (const auto& [status, word] : all) {
    BOOST_TEST(to_string(status) == word);
    BOOST_TEST((parse_unit_status(word) == status));
    BOOST_TEST((unit_status_from_json(nlohmann::json(word)).value() == status));
  }
  BOOST_TEST(!parse_unit_status("OK").has_value());
  BOOST_TEST(!parse_unit_status("running").has_value());
}

BOOST_AUTO_TEST_CASE(config_statuses_round_trip_through_their_words) {
  const std::vector<std::pair<ConfigStatus, std::string>> all = {{ConfigStatus::running, "running"},
                                                                 {ConfigStatus::completed, "completed"},
                                                                 {ConfigStatus::diverged, "diverged"},
                                                                 {ConfigStatus::failed, "failed"},
                                                                 {ConfigStatus::stopped, "stopped"}};
  for (const auto& [status, word] : all) {
    BOOST_TEST(to_string(status) == word);
    BOOST_TEST((parse_config_status(word) == status));
    BOOST_TEST((config_status_from_json(nlohmann::json(word)).value() == status));
    BOOST_TEST(config_failed(status) == (word == "diverged" || word == "failed"));
  }
  BOOST_TEST(!parse_config_status("ok").has_value());
  BOOST_TEST(!parse_config_status("").has_value());
}

BOOST_AUTO_TEST_CASE(experiment_statuses_round_trip_through_their_words) {
  const std::vector<std::pair<ExperimentStatus, std::string>> all = {{ExperimentStatus::waiting, "waiting"},
                                                                     {ExperimentStatus::running, "running"},
                                                                     {ExperimentStatus::completed, "completed"},
                                                                     {ExperimentStatus::failed, "failed"}};
  for (const auto& [status, word] : all) {
    BOOST_TEST(to_string(status) == word);
    BOOST_TEST((parse_experiment_status(word) == status));
  }
  BOOST_TEST(!parse_experiment_status("stopped").has_value());
}

BOOST_AUTO_TEST_CASE(a_stored_status_that_is_no_known_word_is_refused) {
  BOOST_TEST(unit_status_from_json(nlohmann::json("exploded")).status().is_invalid_argument());
  BOOST_TEST(unit_status_from_json(nlohmann::json(1)).status().is_invalid_argument());
  BOOST_TEST(config_status_from_json(nlohmann::json("ok")).status().is_invalid_argument());
  BOOST_TEST(config_status_from_json(nlohmann::json(nullptr)).status().is_invalid_argument());
  BOOST_TEST(unit_status_from_json(nlohmann::json("exploded")).error().find("\"exploded\"") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
