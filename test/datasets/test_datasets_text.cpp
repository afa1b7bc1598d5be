// Text into tokens (datasets/tokenizer.hpp) and plain text into language-model windows
// (datasets/text_source.hpp), through the ETL: a vocabulary of the training split only, ids in the
// features, every window's length in a field, the tokenizer kept in the manifest.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "datasets/prepare.hpp"
#include "datasets/text_source.hpp"
#include "datasets/tokenizer.hpp"
#include "test/datasets/test_datasets_util.hpp"

namespace cerebro::datasets {
namespace {

using testing::contains;
using testing::TempDir;
using testing::write_text;
namespace fs = std::filesystem;

std::vector<std::string> texts_of(const RaggedField& f, int64_t example) {
  const auto b = static_cast<size_t>(f.offsets[static_cast<size_t>(example)]);
  const auto e = static_cast<size_t>(f.offsets[static_cast<size_t>(example) + 1]);
  return {f.texts.begin() + static_cast<std::ptrdiff_t>(b), f.texts.begin() + static_cast<std::ptrdiff_t>(e)};
}

BOOST_AUTO_TEST_SUITE(tokenizer)

BOOST_AUTO_TEST_CASE(words_are_lower_cased_and_punctuation_is_a_piece_of_its_own) {
  const std::vector<std::string> expected = {"a", "dog's", "ball", ",", "red", "2", "."};
  BOOST_TEST(split_pieces(TokenizerKind::words, "A Dog's  ball,\tRED 2.") == expected,
             boost::test_tools::per_element());
  const std::vector<std::string> bytes = {"h", "i", " ", "!"};
  BOOST_TEST(split_pieces(TokenizerKind::bytes, "hi !") == bytes, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(the_vocabulary_keeps_the_most_used_pieces_within_its_limits) {
  const std::unordered_map<std::string, int64_t> counts = {{"the", 9}, {"cat", 3}, {"dog", 3}, {"emu", 1}};
  const Tokenizer all = Tokenizer::count_words(counts, 1, 100);
  BOOST_TEST(all.size() == kSpecialTokens + 4);
  // The most used first; a tie goes by the text.
  BOOST_TEST(all.id("the") == kSpecialTokens);
  BOOST_TEST(all.id("cat") == kSpecialTokens + 1);
  BOOST_TEST(all.id("dog") == kSpecialTokens + 2);
  const Tokenizer frequent = Tokenizer::count_words(counts, 2, 100);
  BOOST_TEST(frequent.id("emu") == kUnkToken);
  const Tokenizer small = Tokenizer::count_words(counts, 1, kSpecialTokens + 2);
  BOOST_TEST(small.size() == kSpecialTokens + 2);
  BOOST_TEST(small.id("dog") == kUnkToken);
}

BOOST_AUTO_TEST_CASE(decode_stops_at_eos_and_skips_pad_and_bos) {
  auto words = Tokenizer::words({"a", "cat", "sat"});
  BOOST_REQUIRE(words.ok());
  const std::vector<int64_t> ids = {kBosToken, 4, 5, kUnkToken, 6, kEosToken, 4, kPadToken};
  BOOST_TEST(words->decode(ids) == "a cat <unk> sat");
  BOOST_TEST(words->decode(words->encode("A cat, sat")) == "a cat <unk> sat");
  const Tokenizer bytes = Tokenizer::bytes();
  BOOST_TEST(bytes.size() == kSpecialTokens + 256);
  BOOST_TEST(bytes.decode(bytes.encode("Hi, there")) == "Hi, there");
}

BOOST_AUTO_TEST_CASE(a_tokenizer_survives_its_json_and_a_bad_one_is_an_error) {
  auto words = Tokenizer::words({"x", "y"});
  BOOST_REQUIRE(words.ok());
  auto back = Tokenizer::from_json(words->to_json());
  BOOST_REQUIRE_MESSAGE(back.ok(), back.status().message());
  BOOST_TEST(back->id("y") == kSpecialTokens + 1);
  BOOST_TEST(back->size() == words->size());
  auto bytes = Tokenizer::from_json(Tokenizer::bytes().to_json());
  BOOST_REQUIRE(bytes.ok());
  BOOST_TEST((bytes->kind() == TokenizerKind::bytes));
  auto unknown = Tokenizer::from_json({{"kind", "bpe"}});
  BOOST_TEST(!unknown.ok());
  BOOST_TEST(contains(unknown.status().message(), "'bpe' is not words or bytes"));
  auto twice = Tokenizer::words({"x", "x"});
  BOOST_TEST(!twice.ok());
  BOOST_TEST(contains(twice.status().message(), "piece 1 'x' is also piece 0"));
}

BOOST_AUTO_TEST_CASE(captions_become_ids_with_an_eos_after_each_from_the_training_vocabulary) {
  auto split = [](std::vector<std::vector<std::string>> per_example) {
    Dataset d;
    d.sample_shape = {1};
    RaggedField captions{"captions_text", FieldType::text};
    for (auto& c : per_example) {
      captions.append_texts(std::move(c));
      d.features.push_back(0.0f);
    }
    d.fields.push_back(std::move(captions));
    return d;
  };
  Dataset train = split({{"a red square", "a square"}, {"a blue circle"}});
  Dataset validation = split({{"a green square"}});
  Dataset test;
  auto tokenizer = tokenize_splits(train, validation, test, TokenizerOptions{});
  BOOST_REQUIRE_MESSAGE(tokenizer.ok(), tokenizer.status().message());
  BOOST_TEST(train.field("captions_text") == nullptr);
  const RaggedField* ids = train.field(kCaptionTokensField);
  BOOST_REQUIRE(ids != nullptr);
  BOOST_TEST(ids->items_of(0) == 7);  // a red square <eos> a square <eos>
  BOOST_TEST(ids->ints.at(3) == kEosToken);
  BOOST_TEST(tokenizer->decode({ids->ints.begin() + 4, ids->ints.begin() + 7}) == "a square");
  // "green" appears only in the validation split: unknown, as a new word would be.
  const RaggedField* held_out = validation.field(kCaptionTokensField);
  BOOST_REQUIRE(held_out != nullptr);
  BOOST_TEST(held_out->ints.at(1) == kUnkToken);
  BOOST_TEST(train.size() == 2);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(text_source)

BOOST_AUTO_TEST_CASE(a_folder_becomes_windows_file_by_file_and_binary_files_are_skipped) {
  TempDir dir;
  fs::create_directories(dir.path() / "corpus" / "more");
  write_text(dir.file("corpus/a.txt"), "one two three four five");
  write_text(dir.file("corpus/more/b"), "six seven");
  write_text(dir.file("corpus/index.dat"), std::string("\x01\x00\x02", 3));
  fs::create_symlink(dir.path() / "corpus" / "a.txt", dir.path() / "corpus" / "z-link");
  std::vector<std::string> said;
  auto d = load_text_source({dir.file("corpus"), 2, TokenizerKind::words},
                            [&](const std::string& line) { said.push_back(line); });
  BOOST_REQUIRE_MESSAGE(d.ok(), d.status().message());
  const RaggedField* pieces = d->field(kTextPiecesField);
  BOOST_REQUIRE(pieces != nullptr);
  // a.txt: [one two] [three four] [five]; more/b: [six seven]; the link repeats a.txt and is left out.
  BOOST_TEST(d->size() == 4);
  BOOST_TEST(texts_of(*pieces, 2) == std::vector<std::string>{"five"}, boost::test_tools::per_element());
  BOOST_TEST(texts_of(*pieces, 3) == (std::vector<std::string>{"six", "seven"}), boost::test_tools::per_element());
  BOOST_TEST((d->sample_shape == std::vector<int64_t>{2}));
  BOOST_REQUIRE(!said.empty());
  BOOST_TEST(contains(said.back(), "skipped 2 binary or repeated files"));
  BOOST_TEST(contains(said.back(), "index.dat"));
}

BOOST_AUTO_TEST_CASE(bad_paths_and_windows_are_errors_naming_them) {
  TempDir dir;
  auto missing = load_text_source({dir.file("nowhere"), 8, TokenizerKind::words});
  BOOST_TEST(!missing.ok());
  BOOST_TEST(contains(missing.status().message(), "nowhere: no such file or folder"));
  write_text(dir.file("empty.txt"), "  \n ");
  auto empty = load_text_source({dir.file("empty.txt"), 8, TokenizerKind::words});
  BOOST_TEST(!empty.ok());
  BOOST_TEST(contains(empty.status().message(), "empty.txt holds no text"));
  write_text(dir.file("binary"), std::string("ab\0cd", 5));
  auto binary = load_text_source({dir.file("binary"), 8, TokenizerKind::bytes});
  BOOST_TEST(!binary.ok());
  BOOST_TEST(contains(binary.status().message(), "holds NUL bytes"));
  auto narrow = load_text_source({dir.file("empty.txt"), 1, TokenizerKind::words});
  BOOST_TEST(contains(narrow.status().message(), "window 1 is below 2"));
}

BOOST_AUTO_TEST_CASE(prepare_writes_token_windows_and_keeps_the_tokenizer_in_the_manifest) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the cat sat on the mat . ";
  write_text(dir.file("story.txt"), text);
  PrepareOptions o;
  o.source = "text";
  o.task = TaskKind::language_model;
  o.text.path = dir.file("story.txt");
  o.text.window = 7;
  o.normalization = NormalizationMode::none;
  o.partitions = 2;
  const std::string out = dir.file("prepared");
  auto manifest = prepare(o, out);
  BOOST_REQUIRE_MESSAGE(manifest.ok(), manifest.status().message());
  BOOST_TEST(manifest->num_classes == kSpecialTokens + 6);  // the cat sat on mat .
  auto tokenizer = Tokenizer::from_json(manifest->tokenizer);
  BOOST_REQUIRE_MESSAGE(tokenizer.ok(), tokenizer.status().message());
  auto data = load_prepared(out);
  BOOST_REQUIRE_MESSAGE(data.ok(), data.status().message());
  int64_t windows = 0;
  for (const auto& part : data->partitions) {
    windows += part->size();
    const RaggedField* lengths = part->field(kWindowLengthsField);
    BOOST_REQUIRE(lengths != nullptr);
    BOOST_TEST(lengths->items() == part->size());
    for (int64_t e = 0; e < part->size(); ++e) {
      std::vector<int64_t> ids;
      for (int64_t k = 0; k < 7; ++k)
        ids.push_back(static_cast<int64_t>(part->features[static_cast<size_t>(e * 7 + k)]));
      // Every window of this text is a rotation of the sentence: 7 known pieces.
      BOOST_TEST(lengths->ints[static_cast<size_t>(e)] == 7);
      BOOST_TEST(tokenizer->decode(ids).size() > 0u);
      for (int64_t id : ids) BOOST_TEST((id >= kSpecialTokens && id < manifest->num_classes));
    }
  }
  BOOST_TEST(windows + data->validation->size() + data->test->size() == 40);
}

BOOST_AUTO_TEST_CASE(text_and_another_task_do_not_go_together) {
  TempDir dir;
  write_text(dir.file("t.txt"), "a b c d");
  PrepareOptions o;
  o.source = "text";
  o.task = TaskKind::classification;
  o.text.path = dir.file("t.txt");
  o.text.window = 2;
  auto manifest = prepare(o, dir.file("out"));
  BOOST_TEST(!manifest.ok());
  BOOST_TEST(contains(manifest.status().message(), "task language_model reads source text"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace cerebro::datasets
