// `cerebro cache list|prune`: the shared cache of prepared datasets
// (datasets/prepared_cache.hpp) that runs, the REPL and the coordinator fill.
#include <ctime>
#include <memory>

#include <fmt/format.h>

#include "datasets/prepared_cache.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"

namespace cerebro::cli {

namespace {

struct CacheOptions {
  std::string dir;
  bool all = false;
  double unused_days = -1;
  std::vector<std::string> names;
};

std::string date_of(int64_t unix_s) {
  if (unix_s <= 0) return "-";
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &tm);
  return text;
}

void print_entry(const datasets::CacheEntry& e) {
  if (!e.problem.empty()) {
    fmt::print("{}  {:>9.1f} MB  unreadable: {}\n", e.name, e.bytes / 1e6, e.problem);
    return;
  }
  fmt::print("{}  {:>9.1f} MB  used {}  {} {} partitions, {} examples  {}\n", e.name, e.bytes / 1e6,
             date_of(e.last_used_unix), e.source, e.partitions, e.train_examples, fmt::join(e.inputs, " "));
}

int list(const CacheOptions& o) {
  datasets::PreparedCache cache(o.dir.empty() ? datasets::default_cache_dir() : o.dir);
  auto entries = cache.list();
  if (!entries.ok()) return fail(entries.error());
  int64_t total = 0;
  for (const auto& e : *entries) {
    print_entry(e);
    total += e.bytes;
  }
  fmt::print("{} entries, {:.1f} MB in {}\n", entries->size(), total / 1e6, cache.root());
  return 0;
}

int prune(const CacheOptions& o) {
  if (!o.all && o.unused_days < 0 && o.names.empty())
    return fail("cache prune: say what to remove: entry names, --unused-days N or --all");
  datasets::PreparedCache cache(o.dir.empty() ? datasets::default_cache_dir() : o.dir);
  datasets::PruneRule rule;
  rule.all = o.all;
  rule.names = o.names;
  if (o.unused_days >= 0) rule.unused_for_s = static_cast<int64_t>(o.unused_days * 86400);
  auto removed = cache.prune(rule);
  if (!removed.ok()) return fail(removed.error());
  int64_t total = 0;
  for (const auto& e : *removed) total += e.bytes;
  fmt::print("removed {} entries, {:.1f} MB from {}\n", removed->size(), total / 1e6, cache.root());
  return 0;
}

CommandAction setup(CLI::App& command) {
  auto o = std::make_shared<CacheOptions>();
  command.require_subcommand(1);
  auto dir_option = [o](CLI::App* sub) {
    sub->add_option("--dir", o->dir,
                    "The cache directory (default: CEREBRO_CACHE_DIR, else ~/.cache/cerebro/prepared)");
  };
  auto* list_command = command.add_subcommand("list", "List the prepared datasets in the cache");
  dir_option(list_command);
  auto* prune_command = command.add_subcommand(
      "prune", "Remove cache entries (and, always, unreadable ones and leftovers of interrupted preparations)");
  dir_option(prune_command);
  prune_command->add_option("names", o->names, "Entries to remove, by name (as `cerebro cache list` shows)");
  prune_command->add_flag("--all", o->all, "Remove every entry");
  prune_command->add_option("--unused-days", o->unused_days, "Remove entries not used for this many days")
      ->check(CLI::NonNegativeNumber);
  return [o, list_command] { return list_command->parsed() ? list(*o) : prune(*o); };
}

const CommandRegistrar registrar{{"cache", "List or prune the shared cache of prepared datasets", 65, setup}};

}  // namespace

}  // namespace cerebro::cli
