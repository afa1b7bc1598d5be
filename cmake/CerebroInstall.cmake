# Install rules shared by the library directories: `cmake --install` puts the
# libraries in lib/, their headers in include/cerebro/<dir>/ (so installed code
# includes "runtime/spec.hpp" as the project does) and exports each target as
# cerebro::<dir> for find_package(cerebro).

include(GNUInstallDirs)
set(CEREBRO_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/cerebro)
set(CEREBRO_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cerebro)

# cerebro_library(<target> <dir>): the include root for the build and the
# installed tree, the alias cerebro::<name> (the name consumers use; <name> is
# <dir> with '/' as '_', e.g. runtime/store -> cerebro::runtime_store), and
# install rules for the library and every header of <dir>.
function(cerebro_library target dir)
  string(REPLACE "/" "_" name ${dir})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CEREBRO_INCLUDE_ROOT}>
    $<INSTALL_INTERFACE:${CEREBRO_INSTALL_INCLUDEDIR}>)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  add_library(cerebro::${name} ALIAS ${target})
  install(TARGETS ${target} EXPORT cerebroTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${CEREBRO_INCLUDE_ROOT}/${dir}/ DESTINATION ${CEREBRO_INSTALL_INCLUDEDIR}/${dir}
    FILES_MATCHING PATTERN "*.hpp")
endfunction()

# The package files: cerebroTargets.cmake, cerebroConfig.cmake (which finds
# the dependencies again) and the version file. Call once, after the libraries.
function(cerebro_install_package)
  include(CMakePackageConfigHelpers)
  install(EXPORT cerebroTargets NAMESPACE cerebro:: DESTINATION ${CEREBRO_INSTALL_CMAKEDIR})
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cerebroConfig.cmake.in
    ${PROJECT_BINARY_DIR}/cerebroConfig.cmake INSTALL_DESTINATION ${CEREBRO_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/cerebroConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/cerebroConfig.cmake ${PROJECT_BINARY_DIR}/cerebroConfigVersion.cmake
    ${PROJECT_SOURCE_DIR}/cmake/CerebroDependencies.cmake DESTINATION ${CEREBRO_INSTALL_CMAKEDIR})
endfunction()
