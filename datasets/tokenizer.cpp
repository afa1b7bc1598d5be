#include "datasets/tokenizer.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include "datasets/coco.hpp"
#include "runtime/base/enum_names.hpp"

namespace cerebro::datasets {

namespace {

constexpr std::array<EnumName<TokenizerKind>, 2> kTokenizerNames = {
    {{TokenizerKind::words, "words"}, {TokenizerKind::bytes, "bytes"}}};

constexpr int64_t kByteValues = 256;
constexpr const char* kUnknownText = "<unk>";

bool is_word_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '\'' || c >= 0x80;
}

char lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c); }

// A text field's pieces, one example after another, as tokenize_splits reads them.
void count_pieces(const RaggedField& field, TokenizerKind kind, bool split,
                  std::unordered_map<std::string, int64_t>& counts) {
  for (const std::string& text : field.texts) {
    if (!split) {
      ++counts[text];
      continue;
    }
    for (std::string& piece : split_pieces(kind, text)) ++counts[std::move(piece)];
  }
}

// captions_text -> captions: every caption's ids and an eos, example by example.
RaggedField caption_tokens(const RaggedField& texts, const Tokenizer& tokenizer) {
  RaggedField out{kCaptionTokensField, FieldType::int64};
  for (int64_t e = 0; e < texts.examples(); ++e) {
    std::vector<int64_t> ids;
    for (int64_t k = texts.offsets[static_cast<size_t>(e)]; k < texts.offsets[static_cast<size_t>(e) + 1]; ++k) {
      std::vector<int64_t> caption = tokenizer.encode(texts.texts[static_cast<size_t>(k)]);
      ids.insert(ids.end(), caption.begin(), caption.end());
      ids.push_back(kEosToken);
    }
    out.append_ints(ids.data(), static_cast<int64_t>(ids.size()));
  }
  return out;
}

// tokens_text -> features: a window's ids, pad after its last piece; and the field `lengths`: its pieces.
RaggedField window_features(Dataset& d, const RaggedField& pieces, const Tokenizer& tokenizer) {
  const auto window = static_cast<size_t>(d.sample_numel());
  RaggedField lengths{kWindowLengthsField, FieldType::int64};
  d.features.assign(static_cast<size_t>(pieces.examples()) * window, static_cast<float>(kPadToken));
  for (int64_t e = 0; e < pieces.examples(); ++e) {
    const auto begin = static_cast<size_t>(pieces.offsets[static_cast<size_t>(e)]);
    const auto end = std::min(static_cast<size_t>(pieces.offsets[static_cast<size_t>(e) + 1]), begin + window);
    float* row = d.features.data() + static_cast<size_t>(e) * window;
    for (size_t k = begin; k < end; ++k) row[k - begin] = static_cast<float>(tokenizer.id(pieces.texts[k]));
    const auto length = static_cast<int64_t>(end - begin);
    lengths.append_ints(&length, 1);
  }
  return lengths;
}

void erase_field(Dataset& d, const std::string& name) {
  d.fields.erase(std::remove_if(d.fields.begin(), d.fields.end(), [&](const RaggedField& f) { return f.name == name; }),
                 d.fields.end());
}

}  // namespace

std::string to_string(TokenizerKind kind) { return enum_name(kTokenizerNames, kind); }

std::optional<TokenizerKind> parse_tokenizer_kind(const std::string& name) {
  return enum_named<TokenizerKind>(kTokenizerNames, name);
}

const std::vector<std::string>& tokenizer_kind_names() {
  static const std::vector<std::string> names = enum_names(kTokenizerNames);
  return names;
}

std::vector<std::string> split_pieces(TokenizerKind kind, std::string_view text) {
  std::vector<std::string> out;
  if (kind == TokenizerKind::bytes) {
    out.reserve(text.size());
    for (char c : text) out.emplace_back(1, c);
    return out;
  }
  std::string word;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (is_word_char(c)) {
      word += lower(c);
      continue;
    }
    if (!word.empty()) out.push_back(std::move(word));
    word.clear();
    if (c > ' ' && c != 0x7f) out.emplace_back(1, ch);  // punctuation is a piece; spaces and controls are not
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

Tokenizer Tokenizer::bytes() {
  Tokenizer t;
  t.kind_ = TokenizerKind::bytes;
  return t;
}

Result<Tokenizer> Tokenizer::words(std::vector<std::string> pieces) {
  Tokenizer t;
  t.kind_ = TokenizerKind::words;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].empty()) return Status::invalid_argument(fmt::format("tokenizer: piece {} is empty", i));
    const auto [it, fresh] = t.ids_.emplace(pieces[i], kSpecialTokens + static_cast<int64_t>(i));
    if (!fresh)
      return Status::invalid_argument(
          fmt::format("tokenizer: piece {} '{}' is also piece {}", i, pieces[i], it->second - kSpecialTokens));
  }
  t.pieces_ = std::move(pieces);
  return t;
}

Tokenizer Tokenizer::count_words(const std::unordered_map<std::string, int64_t>& counts, int64_t min_count,
                                 int64_t max_vocab) {
  std::vector<std::pair<int64_t, std::string>> kept;
  for (const auto& [piece, count] : counts) {
    if (count >= min_count && !piece.empty()) kept.emplace_back(-count, piece);
  }
  std::sort(kept.begin(), kept.end());
  const auto room = static_cast<size_t>(std::max<int64_t>(0, max_vocab - kSpecialTokens));
  if (kept.size() > room) kept.resize(room);
  std::vector<std::string> pieces;
  pieces.reserve(kept.size());
  for (auto& entry : kept) pieces.push_back(std::move(entry.second));
  auto built = words(std::move(pieces));  // distinct and non-empty: the map's keys
  return std::move(*built);
}

int64_t Tokenizer::size() const {
  return kSpecialTokens + (kind_ == TokenizerKind::bytes ? kByteValues : static_cast<int64_t>(pieces_.size()));
}

int64_t Tokenizer::id(const std::string& piece) const {
  if (kind_ == TokenizerKind::bytes) {
    return piece.size() == 1 ? kSpecialTokens + static_cast<unsigned char>(piece[0]) : kUnkToken;
  }
  auto it = ids_.find(piece);
  return it == ids_.end() ? kUnkToken : it->second;
}

std::vector<int64_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int64_t> out;
  for (const std::string& piece : split_pieces(kind_, text)) out.push_back(id(piece));
  return out;
}

std::string Tokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  for (int64_t id : ids) {
    if (id == kEosToken) break;
    if (id == kPadToken || id == kBosToken) continue;
    const bool known = id >= kSpecialTokens && id < size();
    if (kind_ == TokenizerKind::bytes) {
      out += known ? std::string(1, static_cast<char>(static_cast<unsigned char>(id - kSpecialTokens))) : kUnknownText;
      continue;
    }
    if (!out.empty()) out += ' ';
    out += known ? pieces_[static_cast<size_t>(id - kSpecialTokens)] : kUnknownText;
  }
  return out;
}

nlohmann::json Tokenizer::to_json() const {
  nlohmann::json j = {{"kind", to_string(kind_)}};
  if (kind_ == TokenizerKind::words) j["pieces"] = pieces_;
  return j;
}

Result<Tokenizer> Tokenizer::from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string())
    return Status::invalid_argument("tokenizer: expected an object with a kind");
  auto kind = parse_tokenizer_kind(j["kind"].get<std::string>());
  if (!kind)
    return Status::invalid_argument(fmt::format("tokenizer: kind '{}' is not {}", j["kind"].get<std::string>(),
                                                enum_alternatives(kTokenizerNames)));
  if (*kind == TokenizerKind::bytes) return bytes();
  if (!j.contains("pieces") || !j["pieces"].is_array())
    return Status::invalid_argument("tokenizer: a words tokenizer lists its pieces");
  std::vector<std::string> pieces;
  for (const auto& p : j["pieces"]) {
    if (!p.is_string()) return Status::invalid_argument("tokenizer: a piece is not a string");
    pieces.push_back(p.get<std::string>());
  }
  return words(std::move(pieces));
}

Result<Tokenizer> tokenize_splits(Dataset& train, Dataset& validation, Dataset& test, const TokenizerOptions& options) {
  const RaggedField* captions = train.field(kCocoCaptionsField);
  const RaggedField* windows = train.field(kTextPiecesField);
  if (!captions && !windows)
    return Status::invalid_argument("tokenize: the training split holds no text (captions_text or tokens_text)");
  if (options.min_count < 1) return Status::invalid_argument("tokenize: min_count must be at least 1");
  if (options.kind == TokenizerKind::words && options.max_vocab <= kSpecialTokens)
    return Status::invalid_argument(fmt::format("tokenize: max_vocab {} leaves no room beside the {} special ids",
                                                options.max_vocab, kSpecialTokens));

  Tokenizer tokenizer = Tokenizer::bytes();
  if (options.kind == TokenizerKind::words) {
    std::unordered_map<std::string, int64_t> counts;
    // Captions are whole sentences; a window's items are already pieces (datasets/text_source.hpp).
    if (captions) count_pieces(*captions, options.kind, true, counts);
    if (windows) count_pieces(*windows, options.kind, false, counts);
    tokenizer = Tokenizer::count_words(counts, options.min_count, options.max_vocab);
  }
  for (Dataset* d : {&train, &validation, &test}) {
    if (const RaggedField* texts = d->field(kCocoCaptionsField)) {
      RaggedField ids = caption_tokens(*texts, tokenizer);
      erase_field(*d, kCocoCaptionsField);
      d->fields.push_back(std::move(ids));
    }
    if (const RaggedField* pieces = d->field(kTextPiecesField)) {
      RaggedField lengths = window_features(*d, *pieces, tokenizer);
      erase_field(*d, kTextPiecesField);
      d->fields.push_back(std::move(lengths));
    }
  }
  return tokenizer;
}

}  // namespace cerebro::datasets
