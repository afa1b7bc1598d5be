# Run by test_embed_install (test/embed/embed.cmake) as `cmake -P`: installs the
# build into WORK_DIR/prefix, builds examples/embed against that prefix only,
# runs it and checks its result file.
#   -DBINARY_DIR=<this build> -DEXAMPLE_DIR=<examples/embed> -DWORK_DIR=<scratch>
#   -DGENERATOR=<generator> [-DCOMPILER_LAUNCHER=ccache]

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

function(expect condition_text)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "expected ${condition_text}\nresult.json: ${result}\noutput:\n${service_output}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run_step("cmake --install" ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${prefix})
foreach(file include/cerebro/actors/embedding.hpp include/cerebro/datasets/dataset_source.hpp
             include/cerebro/models/model.hpp include/cerebro/runtime/search/factory.hpp
             lib/cmake/cerebro/cerebroConfig.cmake lib/cmake/cerebro/cerebroConfigVersion.cmake
             lib/cmake/cerebro/cerebroTargets.cmake bin/cerebro)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "the install did not put ${file} into ${prefix}")
  endif()
endforeach()

# Only the prefix is known to the example's build: nothing points at the
# source or build tree.
run_step("configuring examples/embed" ${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_CXX_COMPILER_LAUNCHER=${COMPILER_LAUNCHER})
run_step("building examples/embed" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step("running sensor_service" ${WORK_DIR}/build/sensor_service ${WORK_DIR}/service ${WORK_DIR}/result.json)
set(service_output "${step_output}")
message("${service_output}")

file(READ ${WORK_DIR}/result.json result)
string(JSON rounds LENGTH "${result}" rounds)
expect("two rounds" rounds EQUAL 2)
foreach(round 0 1)
  string(JSON examples GET "${result}" rounds ${round} examples)
  string(JSON configs GET "${result}" rounds ${round} configs)
  string(JSON test_accuracy GET "${result}" rounds ${round} test_accuracy)
  string(JSON best_metric GET "${result}" rounds ${round} best_metric)
  string(JSON models GET "${result}" rounds ${round} models)
  string(JSON served_accuracy GET "${result}" rounds ${round} served_accuracy)
  expect("4 configs in round ${round}" configs EQUAL 4)
  # Three overlapping classes: chance is 0.33, the best possible about 0.87.
  expect("round ${round}'s best val_accuracy above 0.7" best_metric GREATER 0.7)
  expect("round ${round}'s test accuracy above 0.7" test_accuracy GREATER 0.7)
  # best_model.pt loaded with plain LibTorch, on fresh readings.
  expect("round ${round}'s served accuracy above 0.7" served_accuracy GREATER 0.7)
  expect("the custom module trained in round ${round}" models MATCHES "residual_mlp")
  list(APPEND examples_per_round ${examples})
endforeach()
list(GET examples_per_round 0 first)
list(GET examples_per_round 1 second)
expect("the second round to see the new data" second GREATER first)
expect("a leaderboard printed each round" service_output MATCHES "leaderboard.*rank.*leaderboard.*rank")
