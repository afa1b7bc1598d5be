// Input of test_layering_typed_actor_check_finds_untyped (test/layering/layering.cmake):
// the check must flag exactly lines 9, 10 and 12. Names in comments and
// strings, caf::actor_system, caf::actor_cast to a typed handle and
// caf::actor_addr are not findings. Never compiled.
#include <caf/all.hpp>

namespace probe {
const char* text = "caf::behavior b; caf::actor a;";  // caf::event_based_actor
caf::behavior untyped(caf::event_based_actor* self) { return {}; }
caf::actor handle;
void fine(caf::actor_system& system, caf::actor_addr address) { caf::actor_cast<worker_actor>(address); }
auto cast = caf::actor_cast<caf::actor>(handle);
}  // namespace probe
