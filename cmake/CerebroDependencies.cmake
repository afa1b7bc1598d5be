# Imported targets for the dependencies that Debian ships without a usable
# CMake package: CAF 0.17 (caf::core, caf::io, caf::openssl) and RocksDB
# (rocksdb::rocksdb). Included by the project and by the installed
# cerebroConfig.cmake, so a consumer gets the same targets cerebro links.
# Expects Threads and OpenSSL to be found already.

if(NOT TARGET caf::core)
  find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
  find_library(CAF_CORE_LIBRARY caf_core REQUIRED)
  find_library(CAF_IO_LIBRARY caf_io REQUIRED)
  find_library(CAF_OPENSSL_LIBRARY caf_openssl REQUIRED)
  add_library(caf::core SHARED IMPORTED)
  set_target_properties(caf::core PROPERTIES IMPORTED_LOCATION ${CAF_CORE_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${CAF_INCLUDE_DIR}
    INTERFACE_LINK_LIBRARIES Threads::Threads)
  add_library(caf::io SHARED IMPORTED)
  set_target_properties(caf::io PROPERTIES IMPORTED_LOCATION ${CAF_IO_LIBRARY}
    INTERFACE_LINK_LIBRARIES caf::core)
  add_library(caf::openssl SHARED IMPORTED)
  set_target_properties(caf::openssl PROPERTIES IMPORTED_LOCATION ${CAF_OPENSSL_LIBRARY}
    INTERFACE_LINK_LIBRARIES "caf::io;OpenSSL::SSL")
endif()

# Debian's RocksDB CMake package drags in a broken gflags target: import the
# shared library directly.
if(NOT TARGET rocksdb::rocksdb)
  find_path(ROCKSDB_INCLUDE_DIR rocksdb/db.h REQUIRED)
  find_library(ROCKSDB_LIBRARY rocksdb REQUIRED)
  add_library(rocksdb::rocksdb SHARED IMPORTED)
  set_target_properties(rocksdb::rocksdb PROPERTIES IMPORTED_LOCATION ${ROCKSDB_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${ROCKSDB_INCLUDE_DIR})
endif()
