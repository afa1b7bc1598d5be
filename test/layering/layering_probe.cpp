// Built only by test_layering_core_rejects_caf, which expects this to fail:
// a core library (here with the same settings as runtime/scheduling) that
// includes a CAF header.
#include "runtime/base/status.hpp"

#include <caf/actor.hpp>

int layering_probe() { return 0; }
