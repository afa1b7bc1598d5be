// Input of test_layering_core_check_finds_a_throw (test/layering/layering.cmake): the
// check must flag exactly the throw on line 13 and the catch on line 16. A
// throw in a comment, a string, a raw string or a character literal is not one.
// Never compiled.
#include <exception>
#include <string>

namespace probe {
const char* text = "throw std::runtime_error(\"x\"); catch (const Error& e)";
const char* raw = R"x(throw 1; ")" catch (Error& e))x";
int digits = 1'000'000;
char quote = '"';
void fails() { throw 1; }
void catches() {
  try {
  } catch (const cerebro::Error& e) {
  }
}
/* throw 2;
   catch (const Error&) */
void rethrows(std::exception_ptr p) { std::rethrow_exception(p); }
}  // namespace probe
