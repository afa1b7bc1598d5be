// The test module of the embedding API: dataset sources, the spec builder,
// experiment results, model registration and the embedded cluster. The
// installed-package check is test_embed_install (test/embed/embed.cmake).
#define BOOST_TEST_MODULE embed
#include <boost/test/unit_test.hpp>
