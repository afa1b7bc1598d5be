// MopBook's per-partition index (count_needing, config_needing,
// for_each_config_needing) and PartitionSet, checked against eligible_units()
// through long random sequences of every book operation; on the same books,
// both named policies must pick only eligible units and leave a worker idle
// only when it has none.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <random>
#include <set>

#include "runtime/scheduling/mop_book.hpp"
#include "runtime/scheduling/partition_set.hpp"
#include "runtime/scheduling/scheduling_policy.hpp"
#include "runtime/base/status.hpp"
#include "test/support/contract_check.hpp"

using namespace cerebro;

namespace {

// The eligible units of idle worker w rebuilt from the index alone.
std::vector<Unit> eligible_from_index(const MopBook& book, WorkerId w) {
  std::vector<Unit> out;
  if (book.worker_busy(w)) return out;
  for (PartitionId p : book.holdings(w)) {
    book.for_each_config_needing(p, [&](ConfigId c) {
      if (!book.config_busy(c)) out.push_back(Unit{c, p, book.epoch(c)});
    });
  }
  std::sort(out.begin(), out.end(), [](const Unit& a, const Unit& b) {
    return std::tie(a.config, a.partition) < std::tie(b.config, b.partition);
  });
  return out;
}

void check_index(const MopBook& book, const std::vector<WorkerId>& workers) {
  for (PartitionId p = 0; p < book.num_partitions(); ++p) {
    std::vector<ConfigId> listed;
    book.for_each_config_needing(p, [&](ConfigId c) { listed.push_back(c); });
    std::vector<ConfigId> expected;
    for (ConfigId c : book.configs()) {
      if (book.state(c) == ConfigState::pending_epoch && book.pending_set(c).contains(p)) expected.push_back(c);
    }
    std::vector<ConfigId> sorted = listed;
    std::sort(sorted.begin(), sorted.end());
    BOOST_TEST_REQUIRE(sorted == expected, boost::test_tools::per_element());
    BOOST_TEST_REQUIRE(book.count_needing(p) == static_cast<int32_t>(listed.size()));
    for (int32_t k = 0; k < book.count_needing(p); ++k) BOOST_TEST_REQUIRE(book.config_needing(p, k) == listed[k]);
    std::vector<ConfigId> at_positions, idle;
    for (int32_t position = 0; position < static_cast<int32_t>(book.config_count()); ++position) {
      if (std::optional<ConfigId> c = book.config_needing_at(p, position)) at_positions.push_back(*c);
    }
    BOOST_TEST_REQUIRE(at_positions == listed, boost::test_tools::per_element());
    for (ConfigId c : listed) {
      if (!book.config_busy(c)) idle.push_back(c);
    }
    BOOST_TEST_REQUIRE(book.count_idle_needing(p) == static_cast<int32_t>(idle.size()));
    BOOST_TEST_REQUIRE(book.has_idle_needing(p) == !idle.empty());
    for (size_t k = 0; k < idle.size(); ++k) {
      BOOST_TEST_REQUIRE(book.idle_config_needing(p, static_cast<int32_t>(k)) == idle[k]);
    }
  }
  for (ConfigId c : book.configs()) {
    BOOST_TEST_REQUIRE(book.pending_set(c).to_vector() == book.pending_partitions(c), boost::test_tools::per_element());
    const MopBook::ConfigSummary summary = book.summary(c);
    BOOST_TEST_REQUIRE(summary.state == book.state(c));
    BOOST_TEST_REQUIRE(summary.epoch == book.epoch(c));
    BOOST_TEST_REQUIRE(summary.planned_epochs == book.planned_epochs(c));
    BOOST_TEST_REQUIRE(summary.remaining_units == book.remaining_units(c));
    BOOST_TEST_REQUIRE(summary.busy == book.config_busy(c));
    book.prefetch(c);  // a hint: changes nothing (checked on the next round)
  }
  for (WorkerId w : workers) {
    for (PartitionId p = 0; p < book.num_partitions(); ++p) {
      if (!book.has_worker(w)) continue;
      const std::vector<PartitionId>& held = book.holdings(w);
      BOOST_TEST_REQUIRE(book.holds(w, p) == std::binary_search(held.begin(), held.end(), p));
    }
  }
  book.prefetch(-123456);  // unknown: ignored
  for (WorkerId w : workers) {
    if (!book.has_worker(w)) continue;
    BOOST_TEST_REQUIRE(eligible_from_index(book, w) == book.eligible_units(w), boost::test_tools::per_element());
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(book_index)

BOOST_AUTO_TEST_CASE(partition_set_counts_iterates_and_intersects) {
  PartitionSet a(130), b(130);
  BOOST_TEST(a.empty());
  for (PartitionId p : {0, 5, 63, 64, 129}) BOOST_TEST(a.insert(p));
  BOOST_TEST(!a.insert(5));
  BOOST_TEST(a.count() == 5);
  BOOST_TEST(a.contains(129));
  BOOST_TEST(!a.contains(128));
  BOOST_TEST(a.to_vector() == (std::vector<PartitionId>{0, 5, 63, 64, 129}), boost::test_tools::per_element());
  for (PartitionId p : {5, 64, 100}) b.insert(p);
  std::vector<PartitionId> common;
  a.for_each_common(b, [&](PartitionId p) { common.push_back(p); });
  BOOST_TEST(common == (std::vector<PartitionId>{5, 64}), boost::test_tools::per_element());
  std::vector<PartitionId> until;
  BOOST_TEST(a.any_common(b, [&](PartitionId p) {
    until.push_back(p);
    return p == 5;
  }));
  BOOST_TEST(until == (std::vector<PartitionId>{5}), boost::test_tools::per_element());
  BOOST_TEST(a.erase(63));
  BOOST_TEST(!a.erase(63));
  PartitionSet both = b;
  both.insert_all(a);  // {5, 64, 100} and {0, 5, 64, 129}
  BOOST_TEST(both.count() == 5);
  BOOST_TEST(both.to_vector() == (std::vector<PartitionId>{0, 5, 64, 100, 129}), boost::test_tools::per_element());
  a.fill();
  BOOST_TEST(a.count() == 130);
  BOOST_TEST(a.to_vector().back() == 129);
  a.clear();
  BOOST_TEST(a.empty());
  BOOST_TEST(a.to_vector().empty());
}

// count_idle_needing(p) keeps per-block counts so that idle_config_needing(p, k)
// right after it scans one block; a draw after the book changed must not use
// them (configs of the first block going busy would shift every later k).
BOOST_AUTO_TEST_CASE(idle_draws_after_a_change_do_not_use_stale_counts) {
  MopBook book(2);
  for (WorkerId w = 0; w < 40; ++w) book.add_worker(w, {0});
  for (ConfigId c = 0; c < 1500; ++c) book.add_config(c, 1);
  auto idle_needing = [&](PartitionId p) {
    std::vector<ConfigId> idle;
    book.for_each_config_needing(p, [&](ConfigId c) {
      if (!book.config_busy(c)) idle.push_back(c);
    });
    return idle;
  };
  BOOST_TEST_REQUIRE(book.count_idle_needing(1) == 1500);
  BOOST_TEST(book.idle_config_needing(1, 1000) == 1000);
  for (WorkerId w = 0; w < 40; ++w) book.start(w, Unit{w * 3, 0, 0});  // busy: 0, 3, ..., 117
  std::vector<ConfigId> idle = idle_needing(1);
  BOOST_TEST_REQUIRE(idle.size() == 1460u);
  for (int32_t k : {0, 1, 500, 1000, 1459}) BOOST_TEST(book.idle_config_needing(1, k) == idle[k]);
  CEREBRO_CHECK_CONTRACT(book.idle_config_needing(1, 1460), "MopBook::idle_config_needing: partition 1: index 1460");
  BOOST_TEST(book.count_idle_needing(1) == 1460);
  book.complete(0, Unit{0, 0, 0});  // config 0 is idle again
  idle = idle_needing(1);
  for (int32_t k : {0, 1, 700, 1460}) BOOST_TEST(book.idle_config_needing(1, k) == idle[k]);
}

BOOST_AUTO_TEST_CASE(index_queries_reject_bad_arguments) {
  MopBook book(2);
  book.add_config(7, 1);
  BOOST_TEST(book.count_needing(1) == 1);
  BOOST_TEST(book.config_needing(1, 0) == 7);
  CEREBRO_CHECK_CONTRACT(book.config_needing(1, 1), "MopBook::config_needing: partition 1: index 1");
  CEREBRO_CHECK_CONTRACT(book.idle_config_needing(1, 1), "MopBook::idle_config_needing");
  CEREBRO_CHECK_CONTRACT(book.config_needing_at(1, 1), "MopBook::config_needing_at: position 1");
  BOOST_TEST(book.config_needing_at(1, 0).value_or(-1) == 7);
  CEREBRO_CHECK_CONTRACT(book.count_needing(2), "MopBook::count_needing: partition 2 outside");
  CEREBRO_CHECK_CONTRACT(book.count_needing(-1), "MopBook::count_needing: partition -1 outside");
  CEREBRO_CHECK_CONTRACT(book.pending_set(8), "MopBook::pending_set: unknown config 8");
  CEREBRO_CHECK_CONTRACT(book.worker_busy(0), "unknown worker 0");
  BOOST_TEST(book.config_count() == 1u);
}

// Ids far apart and negative go through the book's hash-map path.
BOOST_AUTO_TEST_CASE(sparse_ids_work_like_dense_ones) {
  MopBook book(2);
  book.add_worker(-5, {0, 1});
  book.add_worker(2000000000, {1});
  book.add_config(-3, 1);
  book.add_config(1 << 30, 1);
  BOOST_TEST(book.eligible_units(-5).size() == 4u);
  book.start(2000000000, Unit{-3, 1, 0});
  BOOST_TEST(book.config_busy(-3));
  BOOST_TEST(book.eligible_units(-5) == (std::vector<Unit>{{1 << 30, 0, 0}, {1 << 30, 1, 0}}),
             boost::test_tools::per_element());
  BOOST_TEST(!book.complete(2000000000, Unit{-3, 1, 0}));
  BOOST_TEST(!book.remove_worker(-5).has_value());
  BOOST_TEST(!book.has_worker(-5));
  check_index(book, {2000000000});
}

// Random sequences of every operation; after each, the index matches a
// recomputation from the other queries and eligible_units, and both policies
// choose only eligible units; randomized chooses one whenever there is one,
// critical_path too unless it leaves the work to another holder.
BOOST_AUTO_TEST_CASE(index_and_policies_follow_random_operations) {
  int64_t operations = 0, choices = 0, declines = 0, with_work = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    auto in = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    int32_t partitions = in(1, 70);  // past 64: PartitionSet spans words
    MopBook book(partitions);
    std::vector<WorkerId> workers;
    std::map<WorkerId, std::vector<PartitionId>> holds;
    int32_t num_workers = in(1, 8);
    for (WorkerId w = 0; w < num_workers; ++w) {
      for (PartitionId p = 0; p < partitions; ++p) {
        if (in(0, 2) == 0) holds[w].push_back(p);
      }
      book.add_worker(w, holds[w]);
      workers.push_back(w);
    }
    ConfigId next_config = 0;
    for (int i = in(1, 12); i > 0; --i) book.add_config(next_config++, in(1, 3), 0);
    std::vector<std::unique_ptr<SchedulingPolicy>> policies;
    for (const std::string& name : policy_names()) policies.push_back(make_policy(name, seed).value());
    // Configs and workers of different costs and speeds, so critical_path has
    // critical configs to prefer.
    auto measured = [&](WorkerId w, const Unit& u) {
      double seconds = (1 + u.config % 5) * 10.0 / (1 + w % 3);
      return SchedulingPolicy::Observation{w, u, seconds, 0, 100};
    };
    BOOST_TEST_CONTEXT("seed " << seed) {
      for (int step = 0; step < 300; ++step, ++operations) {
        int op = in(0, 9);
        WorkerId w = workers[in(0, static_cast<int>(workers.size()) - 1)];
        if (op <= 3 && book.has_worker(w) && !book.worker_busy(w)) {
          std::vector<Unit> eligible = book.eligible_units(w);
          if (!eligible.empty()) book.start(w, eligible[in(0, static_cast<int>(eligible.size()) - 1)]);
        } else if (op <= 6 && book.has_worker(w) && book.running_on(w)) {
          Unit u = *book.running_on(w);
          if (op == 6) {
            book.requeue(w, u);
          } else {
            for (auto& policy : policies) policy->observe(measured(w, u));
            if (book.complete(w, u) && in(0, 3) > 0) book.advance(u.config);
          }
        } else if (op == 7) {
          for (ConfigId c : book.configs()) {
            if (book.state(c) == ConfigState::awaiting_decision) book.advance(c);
          }
        } else if (op == 8) {
          if (book.has_worker(w)) {
            book.remove_worker(w);
          } else {
            book.add_worker(w, holds[w]);
          }
        } else {
          ConfigId c = in(0, next_config);
          if (c == next_config) {
            book.add_config(next_config++, in(1, 3));
          } else if (book.state(c) == ConfigState::pending_epoch || book.state(c) == ConfigState::awaiting_decision) {
            if (in(0, 1))
              book.stop(c);
            else
              book.fail(c);
          }
        }
        check_index(book, workers);
        for (auto& policy : policies) {
          for (WorkerId idle : workers) {
            if (!book.has_worker(idle) || book.worker_busy(idle)) continue;
            std::vector<Unit> eligible = book.eligible_units(idle);
            std::optional<Unit> u = policy->choose(idle, book);
            ++choices;
            if (!u && !eligible.empty()) {
              // Only critical_path may leave a worker idle with work, and only
              // to leave a unit to another (faster) holder of its partition.
              BOOST_TEST_REQUIRE(policy->name() == "critical_path", policy->name() << " idles worker " << idle);
              bool shared = false;
              for (WorkerId other : workers) {
                if (other == idle || !book.has_worker(other)) continue;
                for (const Unit& e : eligible) shared = shared || book.holds(other, e.partition);
              }
              BOOST_TEST_REQUIRE(shared, "critical_path idles worker " << idle << ", the only holder of its work");
              ++declines;
            }
            if (!eligible.empty()) ++with_work;
            if (u) {
              BOOST_TEST_REQUIRE((std::find(eligible.begin(), eligible.end(), *u) != eligible.end()),
                                 policy->name() << " chose ineligible " << to_string(*u));
            }
          }
        }
      }
    }
  }
  BOOST_TEST_MESSAGE(operations << " operations, " << choices << " policy choices checked; critical_path left "
                                << declines << " of " << with_work << " workers with work idle");
  BOOST_TEST(declines * 10 < with_work);  // rare
}

BOOST_AUTO_TEST_SUITE_END()
