#include "runtime/base/version.hpp"

namespace cerebro {

// CEREBRO_VERSION is defined for this file alone (runtime/base/CMakeLists.txt), so a new version
// recompiles one file.
const std::string& cerebro_version() {
  static const std::string version = CEREBRO_VERSION;
  return version;
}

}  // namespace cerebro
