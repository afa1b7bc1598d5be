#pragma once
// The project's version (CMakeLists.txt `project(... VERSION ...)`): `cerebro --version`, the API's
// GET /api/v1/version, and what the Python client compares itself with.

#include <string>

namespace cerebro {

// "MAJOR.MINOR.PATCH".
const std::string& cerebro_version();

}  // namespace cerebro
