// `cerebro prepare`: a spec's dataset into checksummed partition shards, in
// the shared prepared-data cache (so runs on the same data start at once) or
// in a directory of its own (--out).
#include <memory>

#include <fmt/format.h>

#include "actors/experiment_runner.hpp"
#include "models/run_setup.hpp"
#include "runtime/spec/spec.hpp"
#include "datasets/prepare.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"

namespace cerebro::cli {

namespace {

struct PrepareOptions {
  std::string spec_path, out_dir;
  int partitions = 0;
};

int prepare(const PrepareOptions& o) {
  auto spec = parse_spec_file(o.spec_path);
  if (!spec.ok()) return fail(spec.error());
  auto say = [](const std::string& line) { fmt::print("{}\n", line); };
  if (o.out_dir.empty()) {
    auto cached = prepare_into_cache(*spec, o.partitions, say);
    if (!cached.ok()) return fail(cached.error());
    fmt::print("{} {} partitions ({} training examples) in the cache: {}\n", cached->prepared ? "prepared" : "found",
               cached->manifest.partitions.size(), cached->manifest.train_examples, cached->dir);
    return 0;
  }
  auto manifest = prepare_dataset(*spec, o.out_dir, o.partitions);
  if (!manifest.ok()) return fail(manifest.error());
  fmt::print("prepared {} partitions ({} training examples) in {}\n", manifest->partitions.size(),
             manifest->train_examples, o.out_dir);
  return 0;
}

CommandAction setup(CLI::App& prepare_command) {
  auto o = std::make_shared<PrepareOptions>();
  prepare_command.add_option("spec", o->spec_path, "Experiment spec (TOML)")->required();
  prepare_command.add_option("--out", o->out_dir,
                             "Output directory (must not exist or be empty); without it the data goes into the "
                             "shared cache (CEREBRO_CACHE_DIR, see `cerebro cache`)");
  prepare_command.add_option("--partitions", o->partitions, "Partitions (default: the spec's, else one per core)")
      ->check(CLI::PositiveNumber);
  return [o] { return prepare(*o); };
}

const CommandRegistrar registrar{
    {"prepare", "Prepare a spec's dataset into checksummed partition shards (the shared cache, or --out)", 60, setup}};

}  // namespace

}  // namespace cerebro::cli
