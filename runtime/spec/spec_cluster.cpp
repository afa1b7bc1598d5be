// [cluster]: workers, scheduling, retries, replication and gangs
// (runtime/spec/spec_section.hpp).
#include "runtime/spec/spec_section.hpp"

namespace cerebro::spec_detail {

void parse_cluster(Section s, ClusterSpec& cluster) {
  s.check_unknown({"workers", "threads_per_worker", "max_unit_retries", "scheduler", "replication", "heartbeat_timeout",
                   "memory_mb", "model_memory_mb", "parallelism", "max_gang"});
  s.read_int("workers", cluster.workers, 0, INT_MAX);
  s.read_int("threads_per_worker", cluster.threads_per_worker, 1, INT_MAX);
  s.read_int("max_unit_retries", cluster.max_unit_retries, 0, INT_MAX);
  s.read_int("replication", cluster.replication, 0, 1024);
  s.read_number("heartbeat_timeout", cluster.heartbeat_timeout, "a number of seconds in [1, 3600]",
                [](double v) { return v >= 1 && v <= 3600; });
  s.read_kind("scheduler", cluster.scheduler, scheduler_names(), parse_scheduler_kind);
  s.read_int("memory_mb", cluster.memory_mb, 0, int64_t{1} << 40);
  s.read_int("model_memory_mb", cluster.model_memory_mb, 0, int64_t{1} << 40);
  // Data-parallel gangs and pipeline stages (docs/CLUSTER.md).
  s.read_kind("parallelism", cluster.parallelism, parallelism_names(), parse_parallelism);
  s.read_int("max_gang", cluster.max_gang, 0, 1 << 20);
  if (cluster.max_gang == 1) s.report("max_gang", "must be 0 (as many as hold partitions) or >= 2, got 1");
}

}  // namespace cerebro::spec_detail
