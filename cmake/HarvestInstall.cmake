# The module authors' kit: `cmake --install build --prefix P` puts what an out-of-tree allocator
# module builds against under P (see docs/MODULES.md):
#   P/include/harvest/   the ABI headers (allocator/allocator.h, allocator/module_api.h) and
#                        every header they include: common/, resources/, generated protos/
#   P/lib/               libharvest_resources.so, libharvest_protos.so: the ABI's types live
#                        there, one copy per process, shared with the master that loads a module
#   P/lib/cmake/Harvest/ find_package(Harvest) -> Harvest::allocator_api
#   P/lib/pkgconfig/     harvest.pc, for builds without CMake
# Plain lib/ and include/ (not GNUInstallDirs' multiarch lib/): the config and .pc files find
# the prefix relative to themselves, so the tree can be installed anywhere and moved.
include(CMakePackageConfigHelpers)

set(HARVEST_INSTALL_INCLUDEDIR include/harvest)

install(TARGETS harvest_resources harvest_protos LIBRARY DESTINATION lib)

install(FILES allocator/allocator.h allocator/module_api.h
        DESTINATION ${HARVEST_INSTALL_INCLUDEDIR}/allocator)
install(FILES common/status.h common/time.h DESTINATION ${HARVEST_INSTALL_INCLUDEDIR}/common)
# All of the resource model: its code is in the installed libharvest_resources.so.
file(GLOB harvest_resource_headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/resources/*.h)
install(FILES ${harvest_resource_headers} DESTINATION ${HARVEST_INSTALL_INCLUDEDIR}/resources)
# All generated protos headers (mesos.pb.h is the ABI's; its code is in libharvest_protos.so).
file(GLOB harvest_protos RELATIVE ${CMAKE_SOURCE_DIR}/protos CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/protos/*.proto)
list(TRANSFORM harvest_protos REPLACE "\\.proto$" ".pb.h")
list(TRANSFORM harvest_protos PREPEND ${CMAKE_BINARY_DIR}/virtual_includes/harvest_protos/protos/)
install(FILES ${harvest_protos} DESTINATION ${HARVEST_INSTALL_INCLUDEDIR}/protos)

configure_package_config_file(cmake/HarvestConfig.cmake.in
  ${CMAKE_BINARY_DIR}/install/HarvestConfig.cmake
  INSTALL_DESTINATION lib/cmake/Harvest
  PATH_VARS HARVEST_INSTALL_INCLUDEDIR)
# 0.1.x only: before 1.0 a minor version may change the ABI (kModuleApiVersion says so too).
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/HarvestConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/HarvestConfig.cmake
              ${CMAKE_BINARY_DIR}/install/HarvestConfigVersion.cmake
        DESTINATION lib/cmake/Harvest)

configure_file(cmake/harvest.pc.in ${CMAKE_BINARY_DIR}/install/harvest.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/install/harvest.pc DESTINATION lib/pkgconfig)
