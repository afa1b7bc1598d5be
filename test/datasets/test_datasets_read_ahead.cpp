// Read-ahead of a pass's batches (datasets/batch_read_ahead.hpp): the batches are exactly gather()'s for
// the same order, from memory and from a memory-mapped shard, whatever the limits; stopping mid-pass joins
// the reader; a bad order is refused before the reader starts.

#include <boost/test/unit_test.hpp>

#include <cstring>

#include "datasets/batch_read_ahead.hpp"
#include "datasets/shard.hpp"
#include "test/support/contract_check.hpp"
#include "test/datasets/test_datasets_util.hpp"

using namespace cerebro::datasets;
using namespace cerebro::datasets::testing;

namespace {

// n examples of shape {1, 7, 9} (odd row sizes: rows straddle pages), every value distinct.
Dataset numbered(int64_t n) {
  Dataset d;
  d.sample_shape = {1, 7, 9};
  for (int64_t i = 0; i < n * 63; ++i) d.features.push_back(0.25f * float(i) + 1.0f);
  for (int64_t i = 0; i < n; ++i) d.labels.push_back(i % 10);
  return d;
}

// Every batch the read-ahead hands out, compared byte for byte with gather() of the same positions.
void expect_batches_of_gather(const Dataset& data, const std::vector<int64_t>& order, int64_t batch_size,
                              ReadAheadLimits limits) {
  BatchReadAhead reader(data, order.data(), static_cast<int64_t>(order.size()), batch_size, limits);
  const int64_t n = static_cast<int64_t>(order.size());
  BOOST_TEST(reader.batch_count() == (n + batch_size - 1) / batch_size);
  int64_t begin = 0;
  for (int64_t b = 0; b < reader.batch_count(); ++b, begin += batch_size) {
    const GatheredBatch batch = reader.next().value();
    BOOST_REQUIRE(static_cast<bool>(batch));
    const Dataset expected = gather(data, order, begin, std::min(begin + batch_size, n));
    BOOST_TEST(batch.begin == begin);
    BOOST_REQUIRE_EQUAL(batch.rows, expected.size());
    BOOST_TEST(reinterpret_cast<uintptr_t>(batch.features.get()) % 64 == 0u);
    BOOST_TEST(
        std::memcmp(batch.features.get(), expected.features.data(), expected.features.size() * sizeof(float)) == 0,
        "batch " << b << " differs from gather()");
  }
  BOOST_TEST(!reader.next().value());  // then the end, and it stays the end
  BOOST_TEST(!reader.next().value());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(read_ahead)

BOOST_AUTO_TEST_CASE(batches_are_gathers_of_the_order_in_memory_and_mapped) {
  TempDir dir;
  const Dataset data = numbered(1000);
  auto info = write_shard(dir.file("part.bin"), data);
  BOOST_REQUIRE_MESSAGE(info.ok(), info.error());
  auto mapped = map_shard(dir.file("part.bin"), info->checksum);
  BOOST_REQUIRE_MESSAGE(mapped.ok(), mapped.error());
  BOOST_REQUIRE(mapped->is_mapped());
  const std::vector<int64_t> order = shuffled_indices(1000, 3);
  struct Case {
    const char* name;
    int64_t batch_size;
    ReadAheadLimits limits;
  };
  const Case cases[] = {
      {"defaults, a last partial batch", 64, {}},
      {"one batch ahead", 100, {1, int64_t{1} << 30, 0}},
      {"a byte limit below one batch: one at a time", 33, {8, 16, 3}},
      {"one batch for the whole pass", 1000, {}},
      {"batches of one row", 1, {2, int64_t{1} << 30, 5}},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      expect_batches_of_gather(data, order, c.batch_size, c.limits);
      expect_batches_of_gather(*mapped, order, c.batch_size, c.limits);
    }
  }
  // Part of the rows, some twice: the read-ahead follows the order it is given, whatever it is.
  const std::vector<int64_t> partial{999, 0, 5, 5, 512, 3, 998};
  expect_batches_of_gather(*mapped, partial, 3, {});
}

BOOST_AUTO_TEST_CASE(stopping_mid_pass_joins_the_reader_and_an_empty_order_ends_at_once) {
  const Dataset data = numbered(500);
  const std::vector<int64_t> order = shuffled_indices(500, 9);
  {
    BatchReadAhead reader(data, order.data(), 500, 10, {2, int64_t{1} << 30, 0});
    BOOST_TEST(static_cast<bool>(reader.next().value()));
  }  // the reader waits for room when this ends it: the destructor must wake and join it
  { BatchReadAhead never_read(data, order.data(), 500, 10); }
  BatchReadAhead empty(data, order.data(), 0, 10);
  BOOST_TEST(empty.batch_count() == 0);
  BOOST_TEST(!empty.next().value());
}

BOOST_AUTO_TEST_CASE(a_bad_order_or_batch_size_is_refused_before_reading) {
  const Dataset data = numbered(20);
  const std::vector<int64_t> outside{0, 20}, negative{-1};
  CEREBRO_CHECK_CONTRACT(BatchReadAhead(data, outside.data(), 2, 4),
                         "BatchReadAhead: index 20 is outside a dataset of 20 examples");
  CEREBRO_CHECK_CONTRACT(BatchReadAhead(data, negative.data(), 1, 4), "index -1 is outside");
  CEREBRO_CHECK_CONTRACT(BatchReadAhead(data, outside.data(), 1, 0), "BatchReadAhead: batch size 0 < 1");
}

BOOST_AUTO_TEST_SUITE_END()
