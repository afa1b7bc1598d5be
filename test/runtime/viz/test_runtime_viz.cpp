#define BOOST_TEST_MODULE runtime_viz
// Pictures of a run (runtime/viz) without a browser or TensorBoard: the
// protobuf wire encoder and TFRecord framing against the documented
// encodings, the TensorBoard writer's files, the SVG charts and the HTML
// report's contents. (test_viz_report decodes real event files with an
// independent reader and opens a real report in headless Chromium.)
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "runtime/viz/html_report.hpp"
#include "runtime/viz/proto_wire.hpp"
#include "runtime/viz/svg_chart.hpp"
#include "runtime/viz/tensorboard.hpp"
#include "runtime/viz/tensorboard_live.hpp"
#include "runtime/viz/tfrecord.hpp"
#include "test/support/e2e_util.hpp"
#include "test/support/temp_dir.hpp"

using namespace cerebro;
using cerebro::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// Three configs over two workers: 0 and 1 trained two epochs over two
// partitions, 2 diverged in its first epoch.
RunView sample_run() {
  RunView run;
  run.experiment = "sample <&>";
  run.metric = "val_accuracy";
  int64_t seq = 1;
  double t = 0;
  for (int epoch = 0; epoch < 2; ++epoch)
    for (ConfigId c = 0; c < 2; ++c)
      for (PartitionId p = 0; p < 2; ++p) {
        UnitLogEntry e;
        e.seq = seq++, e.config = c, e.partition = p, e.epoch = epoch, e.worker = (c + p) % 2;
        e.train_loss = 1.0 - 0.1 * epoch - 0.05 * c;
        e.examples = 100;
        e.has_validation = p == 1;
        e.val_loss = 0.9 - 0.1 * epoch;
        e.val_accuracy = 0.5 + 0.1 * epoch + 0.05 * c;
        e.start_s = t, e.end_s = t + 1, e.train_s = 0.8;
        t += 0.5;
        run.log.push_back(e);
      }
  UnitLogEntry diverged;
  diverged.seq = seq, diverged.config = 2, diverged.worker = 1, diverged.status = UnitStatus::diverged;
  diverged.start_s = 0.2, diverged.end_s = 0.7;
  run.log.push_back(diverged);
  std::vector<ConfigRecord> configs{
      {0, {{"lr", 0.001}, {"hidden", {16}}, {"model", "mlp"}}, ConfigStatus::completed, ""},
      {1, {{"lr", 0.1}, {"hidden", {32, 16}}, {"model", "mlp"}}, ConfigStatus::completed, ""},
      {2, {{"lr", 1.0}, {"hidden", {16}}, {"model", "mlp"}}, ConfigStatus::diverged, "nan"}};
  run.ranked = rank_configs(configs, run.log, run.metric);
  return run;
}

}  // namespace

BOOST_AUTO_TEST_CASE(crc32c_matches_the_standard_check_value_and_tensorflow_masking) {
  BOOST_TEST(crc32c("123456789") == 0xe3069283u);
  BOOST_TEST(crc32c("") == 0u);
  // 32 zero bytes: the iSCSI test vector (RFC 3720 B.4).
  BOOST_TEST(crc32c(std::string(32, '\0')) == 0x8a9136aau);
  uint32_t crc = 0xe3069283u;
  BOOST_TEST(masked_crc32c("123456789") == ((crc >> 15 | crc << 17) + 0xa282ead8u));
}

BOOST_AUTO_TEST_CASE(a_tfrecord_frame_is_length_crc_data_crc) {
  auto frame = tfrecord_frame("abc");
  BOOST_REQUIRE(frame.size() == 8u + 4u + 3u + 4u);
  BOOST_TEST(frame.substr(0, 8) == bytes({3, 0, 0, 0, 0, 0, 0, 0}));
  auto u32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(frame[at + i]);
    return v;
  };
  BOOST_TEST(u32(8) == masked_crc32c(frame.substr(0, 8)));
  BOOST_TEST(frame.substr(12, 3) == "abc");
  BOOST_TEST(u32(15) == masked_crc32c("abc"));
}

BOOST_AUTO_TEST_CASE(the_wire_encoder_follows_the_documented_encoding) {
  // The protobuf encoding guide's examples: field 1 = 150, field 2 = "testing",
  // and a message holding field 1 = 150 as field 3.
  BOOST_TEST(proto::Message().varint(1, 150).data() == bytes({0x08, 0x96, 0x01}));
  BOOST_TEST(proto::Message().bytes(2, "testing").data() == bytes({0x12, 0x07}) + "testing");
  proto::Message inner;
  inner.varint(1, 150);
  BOOST_TEST(proto::Message().message(3, inner).data() == bytes({0x1a, 0x03, 0x08, 0x96, 0x01}));
  // int64 -1 takes ten bytes; doubles and floats are little-endian fixed width.
  BOOST_TEST(proto::Message().int64(2, -1).data() ==
             bytes({0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
  BOOST_TEST(proto::Message().float64(1, 1.0).data() == bytes({0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}));
  BOOST_TEST(proto::Message().float32(2, 1.0f).data() == bytes({0x15, 0, 0, 0x80, 0x3f}));
  BOOST_TEST(proto::Message().varint(300, 1).data() == bytes({0xe0, 0x12, 0x01}));  // a two-byte tag
  const float two[] = {1.0f, 2.0f};
  BOOST_TEST(proto::Message().packed_floats(5, two, 2).data() == bytes({0x2a, 8, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}));
}

BOOST_AUTO_TEST_CASE(a_scalar_event_is_wall_time_step_and_a_tagged_simple_value) {
  auto event = tensorboard_events::scalar(1.0, 3, "loss", 1.0f);
  // Event{wall_time 1.0 (field 1), step 3 (field 2), summary (field 5){value (1){tag (1), simple_value (2)}}}
  std::string value = bytes({0x0a, 4}) + "loss" + bytes({0x15, 0, 0, 0x80, 0x3f});
  std::string summary = bytes({0x0a, static_cast<int>(value.size())}) + value;
  BOOST_TEST(event ==
             bytes({0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x10, 3, 0x2a, static_cast<int>(summary.size())}) + summary);
  auto version = tensorboard_events::file_version(1.0);
  BOOST_TEST(version == bytes({0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x1a, 13}) + "brain.Event:2");
}

BOOST_AUTO_TEST_CASE(hparams_records_name_the_plugin_and_carry_params_and_status) {
  auto run = sample_run();
  auto experiment = tensorboard_events::hparams_experiment(10, run);
  for (auto text :
       {"_hparams_/experiment", "hparams", "lr", "hidden", "model", "val_accuracy", "train_loss", "[32,16]"})
    BOOST_TEST(experiment.find(text) != std::string::npos, text);
  const auto& diverged = run.ranked.back();
  BOOST_REQUIRE(diverged.id == 2);
  auto start = tensorboard_events::session_start(10, diverged);
  BOOST_TEST(start.find("_hparams_/session_start_info") != std::string::npos);
  BOOST_TEST(start.find("config-2") != std::string::npos);
  // SessionEndInfo{status: STATUS_FAILURE (2)}: field 1 varint 2.
  auto end = tensorboard_events::session_end(10, diverged);
  BOOST_TEST(end.find("_hparams_/session_end_info") != std::string::npos);
  BOOST_TEST(end.find(bytes({0x08, 0x02, 0x11})) != std::string::npos);  // status 2, then end_time_secs (double)
}

BOOST_AUTO_TEST_CASE(the_writer_makes_one_event_file_per_config_and_one_for_the_experiment) {
  TempDir tmp;
  auto run = sample_run();
  // An earlier tensorboard/ is replaced, not added to.
  tmp.write("tensorboard/config-9/events.out.tfevents.1.old", "stale");
  auto written = write_tensorboard_logs(tmp.path().string(), run, TensorBoardClock{1700000000, "hostA"});
  BOOST_REQUIRE_MESSAGE(written.ok(), written.error());
  BOOST_TEST(written->size() == 4u);
  BOOST_TEST(!fs::exists(tmp.path() / "tensorboard" / "config-9"));
  BOOST_TEST(!fs::exists(tmp.path() / "tensorboard.tmp"));
  for (const auto& path : *written) BOOST_TEST(fs::is_regular_file(path), path);
  BOOST_TEST(fs::exists(tmp.path() / "tensorboard" / "events.out.tfevents.1700000000.hostA"));
  for (int c = 0; c < 3; ++c) {
    auto dir = tmp.path() / "tensorboard" / ("config-" + std::to_string(c));
    BOOST_REQUIRE(fs::is_directory(dir));
    BOOST_TEST(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  }
  // Every record in a file is framed: walking the lengths lands on the end.
  for (const auto& path : *written) {
    std::string data;
    {
      std::ifstream in(path, std::ios::binary);
      data.assign(std::istreambuf_iterator<char>(in), {});
    }
    size_t at = 0, records = 0;
    while (at + 12 <= data.size()) {
      uint64_t n = 0;
      for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<unsigned char>(data[at + i]);
      at += 16 + n;
      ++records;
    }
    BOOST_TEST(at == data.size(), path);
    BOOST_TEST(records >= 2u, path);  // the file version and at least one record
  }
}

BOOST_AUTO_TEST_CASE(charts_draw_one_series_per_config_and_one_lane_per_worker) {
  svg::LineChart chart{"c", "title", "epoch", "loss", {}, true};
  chart.series.push_back({0, "a", {{0, 1.0}, {1, 0.5}}});
  chart.series.push_back({7, "b<", {{0, 2.0}}});
  auto lines = svg::line_chart(chart);
  BOOST_TEST(count(lines, "class=\"series\"") == 2u);
  BOOST_TEST(lines.find("data-config=\"7\"") != std::string::npos);
  BOOST_TEST(lines.find("b&lt;") != std::string::npos);
  BOOST_TEST(lines.find("b<") == std::string::npos);
  svg::GanttChart g{"g", "schedule", {"worker 0", "worker 1", "worker 2"}, {{0, 1, 0, 1, "u"}, {2, 3, 1, 2, "v"}},
                    0,   2};
  auto gantt = svg::gantt(g);
  BOOST_TEST(count(gantt, "class=\"lane\"") == 3u);
  BOOST_TEST(count(gantt, "class=\"unit\"") == 2u);
  BOOST_TEST(svg::escape("a&b\"'") == "a&amp;b&quot;&#39;");
  BOOST_TEST(svg::config_color(0) != svg::config_color(1));
  BOOST_TEST(svg::config_color(11) != svg::config_color(12));
  auto ticks = svg::nice_ticks(0.03, 0.97, 5);
  BOOST_TEST(ticks.front() == 0.2);
  BOOST_TEST(ticks.size() == 4u);
}

BOOST_AUTO_TEST_CASE(the_report_has_every_section_and_makes_no_request) {
  auto run = sample_run();
  auto html = render_html_report(run);
  BOOST_TEST(html.rfind("<!DOCTYPE html>", 0) == 0u);
  // Self-contained: no URL of any scheme, no external script, style sheet or image.
  BOOST_TEST(!std::regex_search(html, std::regex("(https?|ftp)://|src=|href=|@import|url\\(")));
  BOOST_TEST(html.find("sample &lt;&amp;&gt;") != std::string::npos);
  // The leaderboard: a row per config, best (config 1) first, the diverged one last without a metric.
  BOOST_TEST(count(html, "<tr class=\"leader\"") == 3u);
  BOOST_TEST(html.find("<tr class=\"leader\" data-config=\"1\"") < html.find("<tr class=\"leader\" data-config=\"0\""));
  BOOST_TEST(html.find("<tr class=\"leader\" data-config=\"0\"") < html.find("<tr class=\"leader\" data-config=\"2\""));
  // Three learning-curve charts, the parallel coordinates and the schedule.
  for (auto id : {"curve-val_accuracy", "curve-val_loss", "curve-train_loss", "parallel", "schedule"})
    BOOST_TEST(html.find(std::string("id=\"") + id + "\"") != std::string::npos, id);
  // One series per config in each of the four line-drawing charts; one lane per
  // worker and one bar per unit in the schedule.
  BOOST_TEST(count(html, "<g class=\"series\"") == 4u * 3u);
  BOOST_TEST(count(html, "<g class=\"lane\"") == 2u);
  BOOST_TEST(count(html, "<rect class=\"unit\"") == run.log.size());
  // Every hyper-parameter is an axis, and the metric.
  for (auto axis : {"lr", "hidden", "model", "val_accuracy"})
    BOOST_TEST(html.find(std::string("data-axis=\"") + axis + "\"") != std::string::npos, axis);
}

// A captioning run: its best config's test images with their captions and references, and no accuracy
// curve (the task has none); a detection run's boxes are rectangles over the picture.
BOOST_AUTO_TEST_CASE(a_captioning_report_shows_test_images_and_no_accuracy_curve) {
  auto run = sample_run();
  run.metric = "val_bleu4";
  for (auto& e : run.log)
    if (e.has_validation) {
      e.val_accuracy = 0;
      e.val_metrics = {{"bleu4", 0.1 * e.epoch}};
    }
  std::vector<ConfigRecord> configs;
  for (const auto& c : run.ranked) configs.push_back({c.id, c.params, c.status, c.error});
  run.ranked = rank_configs(configs, run.log, Metric("bleu4", true));
  const std::string picture = "data:image/png;base64,iVBORw0KGgo=";
  run.summary = {
      {"best",
       {{"examples",
         {{{"image", picture},
           {"width", 16},
           {"height", 16},
           {"caption", "a red <square>"},
           {"references", {"a red square", "a red square at the top"}}},
          {{"image", picture},
           {"width", 16},
           {"height", 16},
           {"boxes", {{{"x", 1.5}, {"y", 2}, {"width", 6}, {"height", 6}, {"label", "circle"}, {"score", 0.9}}}},
           {"truth", {{{"x", 1}, {"y", 2}, {"width", 6}, {"height", 6}, {"label", "circle"}}}}}}}}}};
  auto html = render_html_report(run);
  BOOST_TEST(html.find("The best config on test images") != std::string::npos);
  BOOST_TEST(html.find("<image href=\"" + picture + "\"") != std::string::npos);
  BOOST_TEST(html.find("<b>a red &lt;square&gt;</b>") != std::string::npos);
  BOOST_TEST(html.find("a red square at the top") != std::string::npos);
  BOOST_TEST(html.find("<rect class=\"found\" x=\"1.50\" y=\"2.00\" width=\"6.00\"") != std::string::npos);
  BOOST_TEST(html.find("<rect class=\"truth\" x=\"1.00\"") != std::string::npos);
  BOOST_TEST(html.find("circle 0.90") != std::string::npos);
  BOOST_TEST(html.find("id=\"curve-val_bleu4\"") != std::string::npos);
  BOOST_TEST(html.find("id=\"curve-val_accuracy\"") == std::string::npos);
}

// A regression run ranked by val_mse (lower is better): the report says so, draws the metric's own curve
// first, and the TensorBoard hparams name every metric of the task.
BOOST_AUTO_TEST_CASE(another_tasks_metric_gets_its_curve_direction_and_tensorboard_tag) {
  auto run = sample_run();
  run.metric = "val_mse";
  run.metric_higher_is_better = false;
  for (auto& e : run.log)
    if (e.has_validation) e.val_metrics = {{"mse", 2.0 - 0.5 * e.epoch}, {"r2", 0.25 * e.epoch}};
  std::vector<ConfigRecord> configs;
  for (const auto& c : run.ranked) configs.push_back({c.id, c.params, c.status, c.error});
  run.ranked = rank_configs(configs, run.log, Metric("mse", false));
  auto html = render_html_report(run);
  BOOST_TEST(html.find("(lower is better)") != std::string::npos);
  BOOST_TEST(html.find("id=\"curve-val_mse\"") != std::string::npos);
  BOOST_TEST(html.find("id=\"curve-val_mse\"") < html.find("id=\"curve-val_accuracy\""));
  auto experiment = tensorboard_events::hparams_experiment(10, run);
  for (auto text : {"val_mse", "val_r2", "val_loss"}) BOOST_TEST(experiment.find(text) != std::string::npos, text);
}

BOOST_AUTO_TEST_CASE(loading_a_run_names_what_is_missing) {
  TempDir tmp;
  auto missing = load_run_view(tmp.file("nope"));
  BOOST_TEST(!missing.ok());
  BOOST_TEST(missing.error().find("nope: no such run directory") != std::string::npos);
  auto not_a_run = load_run_view(tmp.path().string());
  BOOST_TEST(!not_a_run.ok());
  BOOST_TEST(not_a_run.error().find("not a run directory") != std::string::npos);
  // A store with a unit but no summary.json: a view of an unfinished run.
  {
    fs::create_directories(tmp.file("run"));
    auto store = StateStore::open(tmp.file("run/state"), true);
    BOOST_REQUIRE(store.ok());
    (*store)->put_meta("metric", "val_loss");
    (*store)->put_config(ConfigRecord{0, {{"lr", 0.1}}, ConfigStatus::running, ""});
    (*store)->put_initial_state(0, "s0");
    UnitLogEntry e;
    e.config = 0, e.worker = 3, e.has_validation = true, e.val_loss = 0.5, e.end_s = 2;
    BOOST_REQUIRE((*store)->commit_unit(e, "s1").ok());
  }
  auto view = load_run_view(tmp.file("run"));
  BOOST_REQUIRE_MESSAGE(view.ok(), view.error());
  BOOST_TEST(view->metric == "val_loss");
  BOOST_TEST(view->summary.is_null());
  BOOST_TEST(view->log.size() == 1u);
  BOOST_TEST(log_workers(view->log) == std::vector<WorkerId>{3});
  auto html = render_html_report(*view);
  BOOST_TEST(html.find("not finished") != std::string::npos);
  BOOST_TEST(html.find("(lower is better)") != std::string::npos);
  // A summary.json that is not JSON is named.
  tmp.write("run/summary.json", "{");
  auto bad = load_run_view(tmp.file("run"));
  BOOST_TEST(!bad.ok());
  BOOST_TEST(bad.error().find("summary.json: not valid JSON") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_run_directory_that_cannot_hold_the_logs_is_an_error_naming_it) {
  TempDir tmp;
  auto not_a_dir = tmp.write("plain-file", "x");
  auto written = write_tensorboard_logs(not_a_dir, sample_run(), TensorBoardClock{1700000000, "hostA"});
  BOOST_REQUIRE(!written.ok());
  BOOST_TEST(written.error().find(not_a_dir) != std::string::npos, written.error());
  BOOST_TEST((written.code() == StatusCode::io_error));
}

namespace {

UnitLogEntry live_unit(ConfigId config, PartitionId partition, int32_t epoch, double start, bool validates,
                       double accuracy) {
  UnitLogEntry e;
  e.config = config, e.partition = partition, e.epoch = epoch, e.worker = partition;
  e.train_loss = 1.0 - accuracy / 2;
  e.examples = 100;
  e.has_validation = validates;
  e.val_loss = 1.0 - accuracy;
  e.val_accuracy = accuracy;
  e.start_s = start, e.end_s = start + 1, e.train_s = 0.9;
  return e;
}

// test/scripts/check_tfevents.py (its own CRC-32C, protoc) on the logs as they are now.
nlohmann::json read_back(const std::string& run_dir, bool running) {
  auto out = cerebro::e2e::run_command(std::string("/usr/bin/python3 ") + CEREBRO_SOURCE_DIR +
                                       "/test/scripts/check_tfevents.py " + (running ? "--running " : "") + run_dir);
  BOOST_REQUIRE_MESSAGE(out.exit_code == 0, out.text);
  return nlohmann::json::parse(out.text);
}

}  // namespace

BOOST_AUTO_TEST_CASE(live_logs_grow_at_each_validation_and_read_back_mid_run) {
  TempDir tmp;
  const auto run_dir = tmp.path().string();
  // An earlier process's logs are written again from the whole unit log.
  tmp.write("tensorboard/config-9/events.out.tfevents.1.old", "stale");
  auto store = StateStore::open(tmp.file("state"), true).value();
  store->put_meta("metric", "val_accuracy");
  store->put_config({0, {{"lr", 0.001}, {"model", "mlp"}}, ConfigStatus::running, ""});
  store->put_config({1, {{"lr", 0.1}, {"model", "mlp"}}, ConfigStatus::running, ""});
  auto live = LiveTensorBoard::start(run_dir, TensorBoardClock{1700000000, "hostA"});
  BOOST_REQUIRE_MESSAGE(live.ok(), live.error());
  BOOST_TEST(!fs::exists(tmp.path() / "tensorboard" / "config-9"));

  // Config 0 ends epoch 0 (two partitions, the second validates); config 1 is halfway.
  store->commit_unit(live_unit(0, 0, 0, 0, false, 0), "s").value();
  store->commit_unit(live_unit(1, 1, 0, 0, false, 0), "s").value();
  store->commit_unit(live_unit(0, 1, 0, 1, true, 0.6), "s").value();
  BOOST_REQUIRE((*live)->update(*store).ok());
  auto mid = read_back(run_dir, true);
  BOOST_REQUIRE(mid["configs"].size() == 2u);
  BOOST_TEST(mid["configs"]["0"]["params"]["model"] == "mlp");
  BOOST_TEST(mid["configs"]["0"]["params"]["lr"].get<double>() == 0.001);
  BOOST_TEST(std::abs(mid["configs"]["0"]["scalars"]["val_accuracy"]["0"].get<double>() - 0.6) < 1e-6);
  // Example-weighted over the epoch's two units, both 1 - 0/2 and 1 - 0.6/2.
  BOOST_TEST(std::abs(mid["configs"]["0"]["scalars"]["train_loss"]["0"].get<double>() - 0.85) < 1e-6);
  BOOST_TEST(mid["configs"]["0"]["scalars"].contains("epoch_seconds"));
  BOOST_TEST(mid["configs"]["1"]["scalars"].empty(), "an epoch in progress has no scalars yet");
  BOOST_TEST(!fs::exists(tmp.path() / "tensorboard" / "events.out.tfevents.1700000000.hostA"),
             "the experiment record is written at the end");

  // Config 1 validates epoch 0; config 0 starts epoch 1. Nothing already written is written again.
  store->commit_unit(live_unit(1, 0, 0, 1, true, 0.7), "s").value();
  store->commit_unit(live_unit(0, 0, 1, 2, false, 0), "s").value();
  BOOST_REQUIRE((*live)->update(*store).ok());
  BOOST_REQUIRE((*live)->update(*store).ok());
  BOOST_TEST((*live)->last_seq() == 5);
  mid = read_back(run_dir, true);
  BOOST_TEST(std::abs(mid["configs"]["1"]["scalars"]["val_accuracy"]["0"].get<double>() - 0.7) < 1e-6);
  BOOST_TEST(mid["configs"]["0"]["scalars"]["val_accuracy"].size() == 1u);
  BOOST_TEST(mid["configs"]["0"]["scalars"]["train_loss"].size() == 1u);

  // The end: config 0 validates epoch 1 (finish catches up what no update
  // saw) and was stopped, config 1 completed. The whole check (every epoch
  // against summary.json, sessions ended) passes on the same files.
  store->commit_unit(live_unit(0, 1, 1, 3, true, 0.65), "s").value();
  store->put_config({0, {{"lr", 0.001}, {"model", "mlp"}}, ConfigStatus::stopped, ""});
  store->put_config({1, {{"lr", 0.1}, {"model", "mlp"}}, ConfigStatus::completed, ""});
  auto run = run_view_of(*store, "live");
  RunFacts facts{"live", 1, 2, 2, 2, "val_accuracy", "maximize", 4, 4};
  tmp.write("summary.json", build_summary(facts, run.ranked, run.log, nullptr).dump());
  auto files = (*live)->finish(run);
  BOOST_REQUIRE_MESSAGE(files.ok(), files.error());
  BOOST_TEST(files->size() == 3u);
  BOOST_TEST(fs::exists(tmp.path() / "tensorboard" / "events.out.tfevents.1700000000.hostA"));
  auto done = read_back(run_dir, false);
  BOOST_TEST(done["configs"]["0"]["status"] == "STATUS_SUCCESS");
  BOOST_TEST(done["configs"]["0"]["steps"] == nlohmann::json({0, 1}));
  BOOST_TEST(done["configs"]["1"]["steps"] == nlohmann::json({0}));
  BOOST_TEST(done["hparams"] == nlohmann::json({"lr", "model"}));
}
