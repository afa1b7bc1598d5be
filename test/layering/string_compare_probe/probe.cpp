// The string-compare check's probe: two compares with a literal (lines 9
// and 10) among look-alikes in a comment, a literal and a compare of values.
// kind == "asha" in a comment is not code.
#include <string>

enum class Kind { a, b };

bool probe(const std::string& kind, Kind k) {
  bool first = kind == "asha";
  bool second = "hyperband" != kind;
  const char* text = "kind == \"asha\"";
  return first && second && text && k == Kind::a;
}
