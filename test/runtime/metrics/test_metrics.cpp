// runtime/metrics: corpus BLEU-4 equal to NLTK's corpus_bleu on the same corpora, COCO-style detection AP on
// cases worked by hand, token accuracy and perplexity, and statistics of shares merging into the whole.
#define BOOST_TEST_MODULE metrics
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/metrics/bleu.hpp"
#include "runtime/metrics/detection_map.hpp"
#include "runtime/metrics/token_stats.hpp"

using namespace cerebro::metrics;
namespace tt = boost::test_tools;

namespace {

// Words as ids, one id per distinct word, shared by a whole test.
class Words {
 public:
  TokenIds operator()(const std::string& text) {
    std::istringstream in(text);
    TokenIds out;
    for (std::string w; in >> w;) out.push_back(ids_.emplace(w, static_cast<int64_t>(ids_.size())).first->second);
    return out;
  }

 private:
  std::map<std::string, int64_t> ids_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(bleu)

// The expected values are NLTK 3.8's: corpus_bleu([[r.split() for r in refs] ...], [h.split() ...]).
BOOST_AUTO_TEST_CASE(corpus_bleu_equals_nltk) {
  Words w;
  BleuStats first_two, third;
  first_two.add(w("the cat is on the mat"), {w("the cat is on the mat"), w("there is a cat on the mat")});
  first_two.add(w("a dog runs in a park"), {w("a dog runs in the green park")});
  BOOST_TEST(first_two.bleu4() == 0.7159400385649798, tt::tolerance(1e-12));
  third.add(w("two birds are on the wire now"), {w("two birds sit on a wire"), w("birds are sitting on the wire")});
  BleuStats all = first_two;
  all.merge(third);
  BOOST_TEST(all.sentences == 3);
  BOOST_TEST(all.bleu4() == 0.6165848019650528, tt::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(a_short_hypothesis_pays_the_brevity_penalty) {
  Words w;
  BleuStats s;
  s.add(w("a b c d e"), {w("a b c d e f g h")});
  BOOST_TEST(s.bleu4() == 0.5488116360940264, tt::tolerance(1e-12));  // exp(1 - 8/5)
}

BOOST_AUTO_TEST_CASE(no_matching_four_gram_or_no_sentence_scores_zero) {
  Words w;
  BleuStats s;
  BOOST_TEST(s.bleu4() == 0.0);
  s.add(w("a b c"), {w("a b c")});  // no 4-gram at all
  BOOST_TEST(s.bleu4() == 0.0);
  s.add(w("x y"), {});  // no reference: nothing to score against
  BOOST_TEST(s.sentences == 1);
}

BOOST_AUTO_TEST_CASE(repeated_words_count_only_as_often_as_a_reference_has_them) {
  Words w;
  BleuStats s;
  s.add(w("the the the the"), {w("the cat"), w("the the dog")});
  BOOST_TEST(s.matched[0] == 2);  // clipped by the second reference
  BOOST_TEST(s.total[0] == 4);
  BOOST_TEST(s.reference_length == 3);  // the closest reference length to 4 (3 beats 2)
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(detection)

const Box kA{0, 0, 10, 10};
const Box kB{20, 20, 10, 10};
const Box kNowhere{50, 50, 5, 5};

BOOST_AUTO_TEST_CASE(iou_of_boxes) {
  BOOST_TEST(intersection_over_union(kA, kA) == 1.0);
  BOOST_TEST(intersection_over_union(kA, kB) == 0.0);
  BOOST_TEST(intersection_over_union(kA, Box{5, 0, 10, 10}) == 50.0 / 150.0, tt::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(ap_reads_the_precision_envelope_at_101_recall_points) {
  DetectionStats s(1);
  // Ranked: a hit, a miss, a hit. Recall 0.5, 0.5, 1; the envelope 1, 2/3, 2/3: recall points 0 to 0.50
  // read 1, the 50 above 2/3.
  s.add_image({{kA, 0, 0.9f}, {kNowhere, 0, 0.8f}, {kB, 0, 0.7f}}, {{kA, 0}, {kB, 0}});
  const double expected = (51.0 + 50.0 * 2.0 / 3.0) / 101.0;
  BOOST_TEST(s.average_precision(0, 0) == expected, tt::tolerance(1e-12));
  BOOST_TEST(s.map50() == expected, tt::tolerance(1e-12));
  BOOST_TEST(s.map() == expected, tt::tolerance(1e-12));  // exact boxes: the same at every threshold
}

BOOST_AUTO_TEST_CASE(a_loose_box_counts_only_at_the_thresholds_it_reaches) {
  DetectionStats s(1);
  s.add_image({{Box{0, 0, 10, 6.2f}, 0, 0.5f}}, {{kA, 0}});  // IoU 0.62: matched at 0.50, 0.55, 0.60
  BOOST_TEST(s.map50() == 1.0, tt::tolerance(1e-12));
  BOOST_TEST(s.average_precision(0, 3) == 0.0);
  BOOST_TEST(s.map() == 0.3, tt::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(one_object_matches_one_detection_and_classes_without_objects_do_not_count) {
  DetectionStats s(3);
  // Class 0: two detections of one object, the better scored matches and the other is a false positive.
  // Class 1: a detection but no object (left out). Class 2: an object never detected (0).
  s.add_image({{kA, 0, 0.6f}, {kA, 0, 0.9f}, {kB, 1, 0.8f}}, {{kA, 0}, {kB, 2}});
  BOOST_TEST(s.average_precision(0, 0) == 1.0, tt::tolerance(1e-12));
  BOOST_TEST(s.average_precision(1, 0) < 0.0);
  BOOST_TEST(s.average_precision(2, 0) == 0.0);
  BOOST_TEST(s.map50() == 0.5, tt::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(only_the_best_100_detections_of_an_image_count) {
  DetectionStats s(1);
  std::vector<Detection> many;
  for (int i = 0; i < 100; ++i) many.push_back({kNowhere, 0, 0.9f});
  many.push_back({kA, 0, 0.1f});  // the 101st by score: dropped, so the object is never found
  s.add_image(many, {{kA, 0}});
  BOOST_TEST(s.map50() == 0.0);
}

BOOST_AUTO_TEST_CASE(shares_merge_into_the_whole_sets_score) {
  const std::vector<std::pair<std::vector<Detection>, std::vector<LabelledBox>>> images = {
      {{{kA, 0, 0.9f}, {kNowhere, 1, 0.4f}}, {{kA, 0}, {kB, 1}}},
      {{{Box{1, 1, 10, 10}, 1, 0.7f}, {kB, 0, 0.3f}}, {{kA, 1}}},
      {{{kB, 1, 0.95f}}, {{kB, 1}, {kA, 0}}}};
  DetectionStats whole(2), first(2), rest(2);
  for (size_t i = 0; i < images.size(); ++i) {
    whole.add_image(images[i].first, images[i].second);
    (i == 0 ? first : rest).add_image(images[i].first, images[i].second);
  }
  first.merge(rest);
  BOOST_TEST(first.map() == whole.map(), tt::tolerance(1e-12));
  BOOST_TEST(first.map50() == whole.map50(), tt::tolerance(1e-12));
  BOOST_TEST(whole.map50() > 0.0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(token_accuracy_and_perplexity) {
  TokenStats s;
  BOOST_TEST(std::isinf(s.perplexity()));
  BOOST_TEST(s.accuracy() == 0.0);
  s.add(4, 3, 4 * std::log(2.0));
  TokenStats other;
  other.add(4, 1, 4 * std::log(8.0));
  s.merge(other);
  BOOST_TEST(s.accuracy() == 0.5);
  BOOST_TEST(s.perplexity() == 4.0, tt::tolerance(1e-12));  // exp(mean(log 2, log 8))
}
