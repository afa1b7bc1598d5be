# The core libraries (runtime/ except runtime/net, datasets/) are plain C++:
# they must not include CAF. cerebro_core_library(<target>) enforces it: the
# target's include path starts with a shadow of every CAF header whose only
# content is an #error, so `#include <caf/...>` in a core source or in a core
# header it includes fails to compile, naming the rule. (Not linking caf::core
# would not be enough: CAF's headers sit in /usr/include, on every path.)

set(CEREBRO_NO_CAF_DIR ${PROJECT_BINARY_DIR}/no_caf)
if(NOT EXISTS ${CEREBRO_NO_CAF_DIR}/caf/all.hpp)
  file(GLOB_RECURSE caf_headers RELATIVE ${CAF_INCLUDE_DIR} ${CAF_INCLUDE_DIR}/caf/*)
  foreach(header IN LISTS caf_headers)
    file(WRITE ${CEREBRO_NO_CAF_DIR}/${header}
      "#error \"a core library (see docs/ARCHITECTURE.md) must not include CAF: only runtime/net and actors/ do\"\n")
  endforeach()
endif()

function(cerebro_core_library target)
  target_include_directories(${target} BEFORE PRIVATE ${CEREBRO_NO_CAF_DIR})
endfunction()
