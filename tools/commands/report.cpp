// `cerebro report RUN_DIR [--out FILE]`: one self-contained HTML page about a
// run (leaderboard, learning curves, parallel coordinates, the MOP schedule),
// drawn from its state store and summary.json (runtime/viz/html_report.hpp).
// With --tensorboard it also writes the run's TensorBoard logs again (a run
// finished before they existed has none).
#include <sys/stat.h>

#include <ctime>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "runtime/base/file_io.hpp"
#include "runtime/base/log_lines.hpp"
#include "runtime/viz/html_report.hpp"
#include "runtime/viz/run_view.hpp"
#include "runtime/viz/tensorboard.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"

namespace fs = std::filesystem;

namespace cerebro::cli {

namespace {

struct ReportOptions {
  std::string run_dir;
  std::string out;  // default: RUN_DIR/report.html
  bool tensorboard = false;
};

int report(const ReportOptions& named) {
  auto resolved = resolve_run_dir(named.run_dir);
  if (!resolved.ok()) return fail(resolved.error());
  ReportOptions o = named;
  o.run_dir = *resolved;
  auto run = load_run_view(o.run_dir);
  if (!run.ok()) return fail(run.error());
  auto out = o.out.empty() ? (fs::path(o.run_dir) / "report.html").string() : o.out;
  if (auto st = write_file_atomically(out, render_html_report(*run)); !st.ok()) return fail(st.message());
  fmt::print("report: {} ({} configs, {} units)\n", out, run->ranked.size(), run->log.size());
  if (o.tensorboard) {
    // The log's second 0 placed so that its last unit ended when the run
    // finished (summary.json's time), else when its store last changed.
    struct stat info {};
    auto summary = (fs::path(o.run_dir) / "summary.json").string();
    auto state = (fs::path(o.run_dir) / "state").string();
    double end_unix_s = stat(summary.c_str(), &info) == 0 || stat(state.c_str(), &info) == 0
                            ? static_cast<double>(info.st_mtime)
                            : static_cast<double>(std::time(nullptr));
    TensorBoardClock clock{end_unix_s - log_span(run->log).second, host_name()};
    auto written = write_tensorboard_logs(o.run_dir, *run, clock);
    if (!written.ok()) return fail(written.error());
    fmt::print("tensorboard: {} event files in {}\n", written->size(), (fs::path(o.run_dir) / "tensorboard").string());
  }
  return 0;
}

CommandAction setup(CLI::App& command) {
  auto o = std::make_shared<ReportOptions>();
  command.add_option("run_dir", o->run_dir, "Run directory")->required();
  command.add_option("--out", o->out, "The HTML file to write (default: RUN_DIR/report.html)");
  command.add_flag("--tensorboard", o->tensorboard,
                   "Also (re)write RUN_DIR/tensorboard/ (runs write it when they finish)");
  return [o] { return report(*o); };
}

const CommandRegistrar registrar{
    {"report", "Write a self-contained HTML report of a run: leaderboard, curves, hyper-parameters, schedule", 75,
     setup}};

}  // namespace

}  // namespace cerebro::cli
