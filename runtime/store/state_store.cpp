#include "runtime/store/state_store.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <string_view>

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

namespace cerebro {

namespace {

// Key layout (ordered so prefix scans walk in id/sequence order):
//   meta/<key>            free-form run metadata
//   config/<%08d id>      ConfigRecord as JSON
//   init/<%08d id>        initial state: checksum line + bytes
//   state/<%08d id>/<%012d seq>  state after unit seq: checksum line + bytes
//   log/<%012d seq>       UnitLogEntry as JSON
//   epochstate/<%08d id>/<%08d epoch>  state at an epoch's end (kept for PBT)
//   decision/<%012d n>    a search procedure's decision as JSON
std::string config_key(ConfigId c) { return fmt::format("config/{:08d}", c); }
std::string init_key(ConfigId c) { return fmt::format("init/{:08d}", c); }
std::string state_prefix(ConfigId c) { return fmt::format("state/{:08d}/", c); }
std::string state_key(ConfigId c, int64_t seq) { return fmt::format("state/{:08d}/{:012d}", c, seq); }
std::string log_key(int64_t seq) { return fmt::format("log/{:012d}", seq); }
std::string epoch_state_key(ConfigId c, int32_t epoch) { return fmt::format("epochstate/{:08d}/{:08d}", c, epoch); }
std::string decision_key(int64_t n) { return fmt::format("decision/{:012d}", n); }

// A RocksDB failure as a Status of the matching code: a missing key is
// not_found, RocksDB's own checksum failures corruption, the rest io_error
// (the data may be fine; reading or writing it failed).
Status from_rocksdb(const rocksdb::Status& s, const std::string& what) {
  auto message = fmt::format("{}: {}", what, s.ToString());
  if (s.IsNotFound()) return Status::not_found(std::move(message));
  if (s.IsCorruption()) return Status::corruption(std::move(message));
  if (s.IsInvalidArgument()) return Status::invalid_argument(std::move(message));
  return Status::io_error(std::move(message));
}

bool starts_with(const rocksdb::Slice& s, const std::string& prefix) {
  return s.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), s.data());
}

std::string framed(const std::string& state) { return checksum_of(state) + "\n" + state; }

// Verifies "checksum\nstate" where it lies (a RocksDB slice or a string)
// and copies the state out once, only when it is intact.
Result<std::string> unframed(std::string_view value, const std::string& what) {
  auto nl = value.find('\n');
  if (nl == std::string_view::npos) return Status::corruption(what + ": stored state has no checksum line");
  auto state = value.substr(nl + 1);
  auto expected = value.substr(0, nl);
  auto actual = checksum_of(state);
  if (expected != actual)
    return Status::corruption(
        fmt::format("{}: stored state checksum {} does not match its content ({})", what, expected, actual));
  return std::string(state);
}

std::string_view view_of(const rocksdb::Slice& s) { return {s.data(), s.size()}; }

// Calls f(key, value) for every key with the prefix, in order; fails with
// io_error when RocksDB could not read them all.
template <class F>
Status scan(rocksdb::DB* db, const std::string& prefix, F&& f) {
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(prefix); it->Valid() && starts_with(it->key(), prefix); it->Next()) f(it->key(), it->value());
  if (!it->status().ok()) return from_rocksdb(it->status(), "reading " + prefix + " from the state store");
  return Status::ok_status();
}

}  // namespace

std::string trained_as(const UnitLogEntry& e) {
  if (!e.pipeline_workers.empty())
    return fmt::format("pipeline over {} stages (workers {})", e.pipeline_workers.size(),
                       fmt::join(e.pipeline_workers, ", "));
  if (e.gang > 0) return fmt::format("gang of {}", e.gang_size);
  return "alone";
}

nlohmann::json to_json(const UnitLogEntry& e) {
  nlohmann::json j = {{"seq", e.seq},
                      {"config", e.config},
                      {"partition", e.partition},
                      {"epoch", e.epoch},
                      {"worker", e.worker},
                      {"status", to_string(e.status)},
                      {"seed", e.seed},
                      {"train_loss", e.train_loss},
                      {"examples", e.examples},
                      {"has_validation", e.has_validation},
                      {"val_loss", e.val_loss},
                      {"val_accuracy", e.val_accuracy},
                      {"val_metrics", e.val_metrics},
                      {"start_s", e.start_s},
                      {"end_s", e.end_s},
                      {"train_s", e.train_s},
                      {"validate_s", e.validate_s},
                      {"restore_s", e.restore_s},
                      {"save_s", e.save_s},
                      {"state_checksum", e.state_checksum},
                      {"state_bytes", e.state_bytes},
                      {"rolled_back", e.rolled_back}};
  if (e.result_s >= 0) j["result_s"] = e.result_s;  // Older logs have none
  if (e.gang > 0) {                                 // only gang entries carry the keys: logs of MOP runs read as before
    j["gang"] = e.gang;
    j["gang_size"] = e.gang_size;
  }
  if (!e.pipeline_workers.empty()) {  // Pipeline units only
    j["pipeline_workers"] = e.pipeline_workers;
    j["trained_as"] = trained_as(e);
  }
  return j;
}

Result<UnitLogEntry> unit_log_entry_from_json(const nlohmann::json& j) {
  UnitLogEntry e;
  // nlohmann's accessors throw for a missing key or a value of the wrong type.
  try {
    auto status = unit_status_from_json(j.at("status"));
    if (!status.ok()) return status.status();
    e.status = *status;
    j.at("seq").get_to(e.seq);
    j.at("config").get_to(e.config);
    j.at("partition").get_to(e.partition);
    j.at("epoch").get_to(e.epoch);
    j.at("worker").get_to(e.worker);
    j.at("seed").get_to(e.seed);
    j.at("train_loss").get_to(e.train_loss);
    j.at("examples").get_to(e.examples);
    j.at("has_validation").get_to(e.has_validation);
    j.at("val_loss").get_to(e.val_loss);
    j.at("val_accuracy").get_to(e.val_accuracy);
    if (auto it = j.find("val_metrics"); it != j.end()) it->get_to(e.val_metrics);
    j.at("start_s").get_to(e.start_s);
    j.at("end_s").get_to(e.end_s);
    e.result_s = j.value("result_s", -1.0);  // older logs: none (worker_end_s() is end_s)
    j.at("train_s").get_to(e.train_s);
    j.at("validate_s").get_to(e.validate_s);
    j.at("restore_s").get_to(e.restore_s);
    j.at("save_s").get_to(e.save_s);
    j.at("state_checksum").get_to(e.state_checksum);
    e.gang = j.value("gang", int64_t{0});
    e.gang_size = j.value("gang_size", 0);
    e.pipeline_workers = j.value("pipeline_workers", std::vector<WorkerId>());
    e.state_bytes = j.value("state_bytes", int64_t{0});
    e.rolled_back = j.value("rolled_back", false);
  } catch (const nlohmann::json::exception& bad) {
    return Status::invalid_argument(fmt::format("a unit log entry {}: {}", j.dump(), bad.what()));
  }
  return e;
}

namespace {

// A stored record's bytes as JSON: discarded (is_discarded()) when they are not JSON.
nlohmann::json parsed(const rocksdb::Slice& v) { return nlohmann::json::parse(v.ToString(), nullptr, false); }

Result<UnitLogEntry> log_entry_of(const rocksdb::Slice& k, const rocksdb::Slice& v) {
  auto j = parsed(v);
  if (j.is_discarded()) return Status::invalid_argument(fmt::format("{}: not JSON", k.ToString()));
  auto e = unit_log_entry_from_json(j);
  if (!e.ok()) return e.status().with_context(k.ToString());
  return e;
}

Result<ConfigRecord> config_record_of(const rocksdb::Slice& k, const rocksdb::Slice& v) {
  auto j = parsed(v);
  if (j.is_discarded()) return Status::invalid_argument(fmt::format("{}: not JSON", k.ToString()));
  ConfigRecord r;
  try {
    auto status = config_status_from_json(j.at("status"));
    if (!status.ok()) return status.status().with_context(k.ToString());
    r = ConfigRecord{j.at("id").get<ConfigId>(), j.at("params"), *status, j.at("error").get<std::string>()};
  } catch (const nlohmann::json::exception& bad) {  // a missing key or a value of the wrong type
    return Status::invalid_argument(fmt::format("{}: {}", k.ToString(), bad.what()));
  }
  return r;
}

// The sequence number a log/ or state/ key ends with.
Result<int64_t> seq_of(const rocksdb::Slice& k) {
  const std::string key = k.ToString();
  const std::string digits = key.substr(key.rfind('/') + 1);
  char* end = nullptr;
  errno = 0;
  const long long seq = std::strtoll(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0' || errno != 0 || seq < 0)
    return Status::invalid_argument(fmt::format("{}: the key does not end with a sequence number", key));
  return static_cast<int64_t>(seq);
}

// A record load_records() accepted at open.
template <class T>
T checked(Result<T> record, const char* reader) {
  if (!record.ok()) contract_violation(std::string("StateStore::") + reader, record.error());
  return std::move(record).value();
}

}  // namespace

std::vector<EpochMetrics> epoch_metrics(const std::vector<UnitLogEntry>& log, ConfigId config) {
  std::map<int32_t, EpochMetrics> by_epoch;
  std::map<int32_t, int64_t> examples;
  for (const auto& e : log) {
    if (e.config != config) continue;
    auto& m = by_epoch[e.epoch];
    m.epoch = e.epoch;
    m.train_loss += e.train_loss * static_cast<double>(e.examples);
    examples[e.epoch] += e.examples;
    m.seconds += e.train_s + e.validate_s;
    if (e.has_validation) {
      m.val_loss = e.val_loss;
      m.val_accuracy = e.val_accuracy;
      m.val_metrics = e.val_metrics;
    }
  }
  std::vector<EpochMetrics> out;
  for (auto& [epoch, m] : by_epoch) {
    if (examples[epoch] > 0) m.train_loss /= static_cast<double>(examples[epoch]);
    out.push_back(m);
  }
  return out;
}

// open() reads every unit-log entry, config record and decision once: a
// store written by another build, or damaged, fails to open and names the
// record. The readers below then take the records as well formed, and one
// that is not is a bug of this file (only this class writes them).
Status StateStore::load_records() {
  Status bad;
  auto note = [&bad](const Status& s) {
    if (bad.ok() && !s.ok()) bad = s;
  };
  std::vector<UnitLogEntry> log;
  for (auto read : {scan(db_, "log/",
                         [&](const rocksdb::Slice&k, const rocksdb::Slice&v) {
                           auto e = log_entry_of(k, v);
                           note(e.status());
                           if (e.ok()) log.push_back(std::move(e).value());
                         }),
                    scan(db_, "config/",
                         [&](const rocksdb::Slice&k, const rocksdb::Slice&v) {
                           auto r = config_record_of(k, v);
                           note(r.status());
                           if (r.ok()) configs_[r->id] = std::move(r).value();
                         }),
                    scan(db_, "decision/", [&](const rocksdb::Slice&k, const rocksdb::Slice&v) {
                      if (parsed(v).is_discarded()) note(Status::invalid_argument(k.ToString() + ": not JSON"));
                    })}) {
    if (!read.ok()) return read;
  }
  for (auto& e : log) (e.rolled_back ? rolled_back_ : *committed_).push_back(std::move(e));
  return bad;
}

void StateStore::remember_committed(const std::vector<UnitLogEntry>& entries) {
  std::lock_guard<std::mutex> lock(records_mutex_);
  // Under the lock no reader can take a new share, so a sole owner may append in place.
  if (committed_.use_count() > 1) committed_ = std::make_shared<std::vector<UnitLogEntry>>(*committed_);
  committed_->insert(committed_->end(), entries.begin(), entries.end());
}

Result<std::unique_ptr<StateStore>> StateStore::open(const std::string& dir, bool create) {
  rocksdb::Options options;
  options.create_if_missing = create;
  options.keep_log_file_num = 2;
  rocksdb::DB* db = nullptr;
  auto s = rocksdb::DB::Open(options, dir, &db);
  if (!s.ok()) return from_rocksdb(s, fmt::format("{}: cannot open the state store", dir));
  std::unique_ptr<StateStore> store(new StateStore(db));
  auto context = fmt::format("{}: the state store", dir);
  if (auto loaded = store->load_records(); !loaded.ok()) return loaded.with_context(context);
  // Sequence numbers of rolled-back entries and of states copied in (PBT)
  // are taken too. A wrong next sequence number would overwrite history, so
  // a read error here fails the open.
  Status bad_key;
  for (const char* prefix : {"log/", "state/"}) {
    auto read = scan(db, prefix, [&](const rocksdb::Slice& k, const rocksdb::Slice&) {
      auto seq = seq_of(k);
      if (!seq.ok())
        bad_key = seq.status();
      else
        store->next_seq_ = std::max<int64_t>(store->next_seq_, *seq + 1);
    });
    if (!read.ok()) return read;
    if (!bad_key.ok()) return bad_key.with_context(context);
  }
  store->next_decision_ = static_cast<int64_t>(store->decisions().size()) + 1;
  return store;
}

Result<std::unique_ptr<StateStore>> StateStore::open_read_only(const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = false;
  rocksdb::DB* db = nullptr;
  auto s = rocksdb::DB::OpenForReadOnly(options, dir, &db);
  if (!s.ok()) return from_rocksdb(s, fmt::format("{}: cannot open the state store to read", dir));
  std::unique_ptr<StateStore> store(new StateStore(db));
  if (auto loaded = store->load_records(); !loaded.ok())
    return loaded.with_context(fmt::format("{}: the state store", dir));
  store->next_decision_ = static_cast<int64_t>(store->decisions().size()) + 1;
  return store;
}

StateStore::StateStore(rocksdb::DB* db) : db_(db) {}
StateStore::~StateStore() { delete db_; }

Status StateStore::write_batch_synced(void* batch) {
  rocksdb::WriteOptions options;
  options.sync = true;
  auto s = db_->Write(options, static_cast<rocksdb::WriteBatch*>(batch));
  return s.ok() ? Status::ok_status() : from_rocksdb(s, "state store write failed");
}

Status StateStore::put_meta(const std::string& key, const std::string& value) {
  rocksdb::WriteBatch batch;
  batch.Put("meta/" + key, value);
  return write_batch_synced(&batch);
}

std::optional<std::string> StateStore::get_meta(const std::string& key) const {
  std::string value;
  if (!db_->Get(rocksdb::ReadOptions(), "meta/" + key, &value).ok()) return std::nullopt;
  return value;
}

Status StateStore::put_config(const ConfigRecord& r) {
  nlohmann::json j{{"id", r.id}, {"params", r.params}, {"status", to_string(r.status)}, {"error", r.error}};
  rocksdb::WriteBatch batch;
  batch.Put(config_key(r.id), j.dump());
  auto s = write_batch_synced(&batch);
  if (s.ok()) {
    std::lock_guard<std::mutex> lock(records_mutex_);
    configs_[r.id] = r;
  }
  return s;
}

std::vector<ConfigRecord> StateStore::configs() const {
  std::lock_guard<std::mutex> lock(records_mutex_);
  std::vector<ConfigRecord> out;
  out.reserve(configs_.size());
  for (const auto& [id, record] : configs_) out.push_back(record);
  return out;
}

Status StateStore::put_initial_state(ConfigId config, const std::string& state) {
  rocksdb::WriteBatch batch;
  batch.Put(init_key(config), framed(state));
  return write_batch_synced(&batch);
}

Result<std::string> StateStore::initial_state(ConfigId config) const {
  std::string value;
  auto s = db_->Get(rocksdb::ReadOptions(), init_key(config), &value);
  if (s.IsNotFound()) return Status::not_found(fmt::format("config {} has no initial state in the store", config));
  if (!s.ok()) return from_rocksdb(s, fmt::format("config {} initial state", config));
  return unframed(value, fmt::format("config {} initial state", config));
}

Result<UnitLogEntry> StateStore::commit_unit(UnitLogEntry entry, const std::string& state, bool damage_for_test) {
  auto stored = commit_units({UnitCommit{std::move(entry), &state, damage_for_test}});
  if (!stored.ok()) return stored.status();
  return std::move(stored->front());
}

Result<std::vector<UnitLogEntry>> StateStore::commit_units(const std::vector<UnitCommit>& units) {
  std::vector<UnitLogEntry> entries;
  entries.reserve(units.size());
  rocksdb::WriteBatch batch;
  // Per config, the state keys in order: the stored ones, then this batch's.
  std::map<ConfigId, std::vector<std::string>> states;
  int64_t seq = next_seq_;
  for (const auto& unit : units) {
    const std::string& state = *unit.state;
    UnitLogEntry entry = unit.entry;
    entry.seq = seq++;
    entry.state_checksum = checksum_of(state);
    entry.state_bytes = static_cast<int64_t>(state.size());
    auto key = state_key(entry.config, entry.seq);
    // The stored value is "checksum\nstate": written from its parts, so a
    // state is copied into the batch once, not first into a framed string.
    rocksdb::Slice key_part(key);
    rocksdb::Slice value_parts[3] = {entry.state_checksum, "\n", state};
    std::string damaged;
    if (unit.damage_for_test && !state.empty()) {
      damaged = entry.state_checksum + "\n" + state;
      damaged.back() ^= 0x5a;
      value_parts[0] = damaged;
      value_parts[1] = value_parts[2] = rocksdb::Slice();
    }
    batch.Put(rocksdb::SliceParts(&key_part, 1), rocksdb::SliceParts(value_parts, 3));
    batch.Put(log_key(entry.seq), to_json(entry).dump());
    if (keep_epoch_states_ && entry.has_validation) {
      auto epoch_key = epoch_state_key(entry.config, entry.epoch);
      rocksdb::Slice epoch_key_part(epoch_key);
      rocksdb::Slice intact_parts[3] = {entry.state_checksum, "\n", state};
      batch.Put(rocksdb::SliceParts(&epoch_key_part, 1), rocksdb::SliceParts(intact_parts, 3));
    }
    auto [listed, first_of_config] = states.try_emplace(entry.config);
    if (first_of_config) {
      auto scanned = scan(db_, state_prefix(entry.config), [&](const rocksdb::Slice& k, const rocksdb::Slice&) {
        listed->second.push_back(k.ToString());
      });
      if (!scanned.ok()) return scanned;
    }
    listed->second.push_back(std::move(key));
    entries.push_back(std::move(entry));
  }
  // Keep the newest state of each config and the one before it, its
  // fallback; older ones go in the same batch (after their Put, if written here).
  for (const auto& [config, keys] : states)
    for (size_t i = 0; i + 2 < keys.size(); ++i) batch.Delete(keys[i]);
  auto s = write_batch_synced(&batch);
  if (!s.ok()) return s;
  next_seq_ = seq;
  remember_committed(entries);
  return entries;
}

Result<std::vector<UnitLogEntry>> StateStore::commit_gang(std::vector<UnitLogEntry> entries, const std::string& state) {
  if (entries.size() < 2) {
    return Status::invalid_argument(fmt::format("a gang commits at least 2 units, got {}", entries.size()));
  }
  const UnitLogEntry& first = entries.front();
  for (const UnitLogEntry& e : entries) {
    if (e.config != first.config || e.epoch != first.epoch) {
      return Status::invalid_argument(
          fmt::format("a gang's units are of one config and epoch: config {} epoch {} "
                      "and config {} epoch {}",
                      first.config, first.epoch, e.config, e.epoch));
    }
  }
  rocksdb::WriteBatch batch;
  std::string checksum = checksum_of(state);
  int64_t seq = next_seq_;
  for (UnitLogEntry& e : entries) {
    e.seq = seq++;
    e.gang = next_seq_;
    e.gang_size = static_cast<int32_t>(entries.size());
    e.state_checksum = checksum;
    e.state_bytes = static_cast<int64_t>(state.size());
    batch.Put(log_key(e.seq), to_json(e).dump());
    if (keep_epoch_states_ && e.has_validation) batch.Put(epoch_state_key(e.config, e.epoch), checksum + "\n" + state);
  }
  ConfigId config = first.config;
  batch.Put(state_key(config, entries.back().seq), checksum + "\n" + state);
  std::vector<std::string> older;
  auto listed = scan(db_, state_prefix(config),
                     [&](const rocksdb::Slice& k, const rocksdb::Slice&) { older.push_back(k.ToString()); });
  if (!listed.ok()) return listed;
  for (size_t i = 0; i + 1 < older.size(); ++i) batch.Delete(older[i]);
  auto s = write_batch_synced(&batch);
  if (!s.ok()) return s;
  next_seq_ = seq;
  remember_committed(entries);
  return entries;
}

Result<std::string> StateStore::latest_state(ConfigId config) const {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  auto prefix = state_prefix(config);
  it->SeekForPrev(prefix + "~");  // '~' sorts after every digit
  if (it->Valid() && starts_with(it->key(), prefix))
    return unframed(view_of(it->value()), fmt::format("config {} state {}", config, it->key().ToString()));
  // An I/O error ends the seek as if there were no state: never fall back to
  // the initial state on it.
  if (!it->status().ok()) return from_rocksdb(it->status(), fmt::format("config {}: reading its newest state", config));
  return initial_state(config);
}

Status StateStore::copy_epoch_state(ConfigId from, int32_t from_epoch, ConfigId to, const nlohmann::json& params) {
  std::string value;
  auto got = db_->Get(rocksdb::ReadOptions(), epoch_state_key(from, from_epoch), &value);
  if (got.IsNotFound())
    return Status::not_found(fmt::format("no state of config {} at the end of epoch {}", from, from_epoch));
  if (!got.ok()) return from_rocksdb(got, fmt::format("config {} epoch {} state", from, from_epoch));
  auto state = unframed(value, fmt::format("config {} epoch {} state", from, from_epoch));
  if (!state.ok()) return state.status();
  rocksdb::WriteBatch batch;
  batch.Put(state_key(to, next_seq_), value);
  std::optional<ConfigRecord> changed;
  for (auto record : configs())
    if (record.id == to) {
      record.params = params;
      batch.Put(config_key(to), nlohmann::json{{"id", record.id},
                                               {"params", record.params},
                                               {"status", to_string(record.status)},
                                               {"error", record.error}}
                                    .dump());
      changed = std::move(record);
    }
  auto s = write_batch_synced(&batch);
  if (!s.ok()) return s;
  ++next_seq_;
  if (changed) {
    std::lock_guard<std::mutex> lock(records_mutex_);
    configs_[to] = std::move(*changed);
  }
  return s;
}

Status StateStore::put_decision(const nlohmann::json& decision) {
  rocksdb::WriteBatch batch;
  batch.Put(decision_key(next_decision_), decision.dump());
  auto s = write_batch_synced(&batch);
  if (s.ok()) ++next_decision_;
  return s;
}

std::vector<nlohmann::json> StateStore::decisions() const {
  std::vector<nlohmann::json> out;
  scan(db_, "decision/", [&](const rocksdb::Slice& k, const rocksdb::Slice& v) {
    auto decision = parsed(v);
    if (decision.is_discarded()) contract_violation("StateStore::decisions", k.ToString() + ": not JSON");
    out.push_back(std::move(decision));
  });
  return out;
}

std::vector<UnitLogEntry> StateStore::unit_log() const {
  std::lock_guard<std::mutex> lock(records_mutex_);
  return *committed_;
}

std::shared_ptr<const std::vector<UnitLogEntry>> StateStore::unit_log_shared() const {
  std::lock_guard<std::mutex> lock(records_mutex_);
  return committed_;
}

std::vector<UnitLogEntry> StateStore::unit_log_after(int64_t seq) const {
  std::lock_guard<std::mutex> lock(records_mutex_);
  auto first = std::upper_bound(committed_->begin(), committed_->end(), seq,
                                [](int64_t s, const UnitLogEntry& e) { return s < e.seq; });
  return {first, committed_->end()};
}

std::vector<UnitLogEntry> StateStore::rolled_back_units() const {
  std::lock_guard<std::mutex> lock(records_mutex_);
  return rolled_back_;
}

Result<StateStore::Recovery> StateStore::recover_latest_state(ConfigId config) {
  std::vector<std::pair<std::string, std::string>> states;  // key, value; oldest first
  // Only states that fail their checksum are given up: a state that cannot
  // be read now may be intact, so an I/O error rolls nothing back.
  auto read = scan(db_, state_prefix(config), [&](const rocksdb::Slice& k, const rocksdb::Slice& v) {
    states.emplace_back(k.ToString(), v.ToString());
  });
  if (!read.ok()) return read;
  Recovery r;
  rocksdb::WriteBatch batch;
  bool intact = false;
  for (auto it = states.rbegin(); it != states.rend() && !intact; ++it) {
    auto state = unframed(it->second, fmt::format("config {} state {}", config, it->first));
    if (state.ok()) {
      intact = true;
      r.intact_seq = checked(seq_of(it->first), "recover_latest_state");
    } else if (!state.status().is_corruption()) {
      return state.status();
    } else {
      r.problem += (r.problem.empty() ? "" : "; ") + state.error();
      batch.Delete(it->first);
    }
  }
  // A missing newest state: the log names a unit of this config newer than
  // every stored state (e.g. lost with a damaged store file).
  int64_t newest_logged = 0;
  for (const auto& e : unit_log())
    if (e.config == config) newest_logged = e.seq;
  if (!intact) {
    auto initial = initial_state(config);
    if (!initial.ok())
      return Status::of(initial.code(),
                        fmt::format("config {}: no intact state left ({}); {}", config,
                                    r.problem.empty() ? "no unit state stored" : r.problem, initial.error()));
    r.intact_seq = 0;
  }
  if (r.intact_seq >= newest_logged && r.problem.empty()) return r;
  if (r.problem.empty()) r.problem = fmt::format("the state of unit {} is missing", newest_logged);
  for (auto e : unit_log()) {
    if (e.config != config || e.seq <= r.intact_seq) continue;
    e.rolled_back = true;
    batch.Put(log_key(e.seq), to_json(e).dump());
    r.rolled_back.push_back(e);
  }
  r.fell_back = true;
  auto s = write_batch_synced(&batch);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(records_mutex_);
  auto kept = std::make_shared<std::vector<UnitLogEntry>>();
  for (const auto& e : *committed_)
    if (e.config != config || e.seq <= r.intact_seq) kept->push_back(e);
  committed_ = std::move(kept);
  rolled_back_.insert(rolled_back_.end(), r.rolled_back.begin(), r.rolled_back.end());
  std::sort(rolled_back_.begin(), rolled_back_.end(),
            [](const UnitLogEntry& a, const UnitLogEntry& b) { return a.seq < b.seq; });
  return r;
}

Status StateStore::replace_decisions(const std::vector<nlohmann::json>& decisions) {
  rocksdb::WriteBatch batch;
  auto listed =
      scan(db_, "decision/", [&](const rocksdb::Slice& k, const rocksdb::Slice&) { batch.Delete(k.ToString()); });
  if (!listed.ok()) return listed;
  int64_t n = 1;
  for (const auto& d : decisions) batch.Put(decision_key(n++), d.dump());
  auto s = write_batch_synced(&batch);
  if (s.ok()) next_decision_ = n;
  return s;
}

}  // namespace cerebro
