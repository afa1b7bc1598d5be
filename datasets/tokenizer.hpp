#pragma once
// Text into token ids and back (docs/TASKS.md "Text"). Two kinds:
//   words  lower-cased runs of letters, digits and apostrophes, and each other visible character on its
//          own ("a dog, running." -> a dog , running .); the vocabulary is built from the training split:
//          pieces seen at least min_count times, the most frequent first, at most max_vocab ids in all
//   bytes  every byte of the text is a token; the vocabulary is fixed (256 bytes) and needs no data
// Both start with the same four special ids, so models and metrics treat them alike:
//   0 pad (fills a short sequence; never a target), 1 bos (begins a generated sequence), 2 eos (ends a
//   caption), 3 unk (a word outside the vocabulary)

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/dataset.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::datasets {

enum class TokenizerKind { words, bytes };  // words first: a DataSpec's value-initialized default
std::string to_string(TokenizerKind kind);
std::optional<TokenizerKind> parse_tokenizer_kind(const std::string& name);
const std::vector<std::string>& tokenizer_kind_names();

inline constexpr int64_t kPadToken = 0;
inline constexpr int64_t kBosToken = 1;
inline constexpr int64_t kEosToken = 2;
inline constexpr int64_t kUnkToken = 3;
inline constexpr int64_t kSpecialTokens = 4;

// The fields the ETL's tokenize step reads and writes (datasets/coco.hpp, datasets/text_source.hpp).
inline constexpr const char* kCaptionTokensField = "captions";  // int64: each caption's ids, then eos
inline constexpr const char* kTextPiecesField = "tokens_text";  // text: one window's pieces, in order
inline constexpr const char* kWindowLengthsField = "lengths";   // int64, one item: a window's real tokens

// The pieces `text` splits into, for `kind` (words: as above; bytes: one string per byte).
std::vector<std::string> split_pieces(TokenizerKind kind, std::string_view text);

class Tokenizer {
 public:
  // The byte tokenizer: id = 4 + byte.
  static Tokenizer bytes();
  // A word tokenizer of these pieces: ids 4, 5, ... in this order. Duplicates or empty pieces are
  // invalid_argument.
  static Result<Tokenizer> words(std::vector<std::string> pieces);
  // A word tokenizer built from the pieces' counts: at least min_count uses, the most used first (ties by
  // text), at most max_vocab ids with the four special ones.
  static Tokenizer count_words(const std::unordered_map<std::string, int64_t>& counts, int64_t min_count,
                               int64_t max_vocab);

  TokenizerKind kind() const { return kind_; }
  int64_t size() const;                        // ids in all, specials included
  int64_t id(const std::string& piece) const;  // unk for a word outside the vocabulary
  std::vector<int64_t> encode(std::string_view text) const;
  // The text of `ids`, up to the first eos; pad and bos are left out, unk shows as <unk>. Words are joined
  // by spaces, bytes put back together. An id outside the vocabulary shows as <unk> as well.
  std::string decode(const std::vector<int64_t>& ids) const;

  // {"kind": "words", "pieces": [...]} (no pieces for bytes), as the manifest keeps it.
  nlohmann::json to_json() const;
  static Result<Tokenizer> from_json(const nlohmann::json& j);

 private:
  TokenizerKind kind_ = TokenizerKind::bytes;
  std::vector<std::string> pieces_;  // words: the piece of id 4 + i
  std::unordered_map<std::string, int64_t> ids_;
};

struct TokenizerOptions {
  TokenizerKind kind = TokenizerKind::words;
  int64_t min_count = 1;
  int64_t max_vocab = 10000;
};

// The ETL's tokenize step, after the split: the tokenizer is built from `train` alone (a word only the
// held-out splits use is unknown, as on new data), then in every split
//   captions_text (coco captions)  becomes the int64 field `captions`: each caption's ids and an eos
//   tokens_text (text windows)     becomes the features: one id per piece as a float (exact below 2^24),
//                                  pad after a short window's last piece, and the int64 field
//                                  `lengths`: how many of a window's ids are not pad
// Splits without these fields are left as they are. An error when no split holds text.
Result<Tokenizer> tokenize_splits(Dataset& train, Dataset& validation, Dataset& test, const TokenizerOptions& options);

}  // namespace cerebro::datasets
