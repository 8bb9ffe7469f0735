# `cmake --install`: headers, libwgtensor, the `wgt` CLI, Dawn, a CMake package
# (find_package(wgtensor) -> wgtensor::wgtensor with its link dependencies) and a pkg-config
# file. Included by the top-level CMakeLists.txt after the targets exist.
include(CMakePackageConfigHelpers)

set(WGT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/wgtensor)
install(TARGETS wgtensor EXPORT wgtensorTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/wgt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS wgt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT wgtensorTargets NAMESPACE wgtensor:: DESTINATION ${WGT_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/wgtensorConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/wgtensorConfig.cmake INSTALL_DESTINATION ${WGT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/wgtensorConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/wgtensorConfig.cmake ${CMAKE_BINARY_DIR}/wgtensorConfigVersion.cmake
        DESTINATION ${WGT_CMAKE_DIR})

# pkg-config: a static library lists what it needs in Libs itself (pkg-config --libs without
# --static must link); the rpath lets it find the installed Dawn. The prefix is derived from
# the .pc file's own location, so an install moved or made with --prefix stays right.
file(RELATIVE_PATH WGT_PC_UP "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" WGT_PC_UP "${WGT_PC_UP}")
set(WGT_PC_DEPS "")
foreach(_lib ${BLAS_LIBRARIES} ${PCRE2_LINK_LIBRARIES} ${FFTW3F_LINK_LIBRARIES})
  # -lname rather than the path: pkg-config users (and CMake's pkg_check_modules) expect flags.
  get_filename_component(_name ${_lib} NAME_WE)
  string(REGEX REPLACE "^lib" "" _name "${_name}")
  string(APPEND WGT_PC_DEPS " -l${_name}")
endforeach()
foreach(_lib ${CMAKE_DL_LIBS})
  string(APPEND WGT_PC_DEPS " -l${_lib}")
endforeach()
if(WGT_SHARED)
  set(WGT_PC_LIBS "-L\${libdir} -lwgtensor -pthread -Wl,-rpath,\${libdir}")
  set(WGT_PC_LIBS_PRIVATE "${WGT_PC_DEPS}")
else()
  set(WGT_PC_LIBS "-L\${libdir} -lwgtensor${WGT_PC_DEPS} -pthread -Wl,-rpath,\${libdir}/wgtensor")
  set(WGT_PC_LIBS_PRIVATE "")
endif()
configure_file(${CMAKE_SOURCE_DIR}/cmake/wgtensor.pc.in ${CMAKE_BINARY_DIR}/wgtensor.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/wgtensor.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Dawn, copied into <libdir>/wgtensor where installed binaries look for it.
if(EXISTS ${WGT_DAWN_DIR}/libwebgpu_wrapper.so)
  file(REAL_PATH ${WGT_DAWN_DIR}/libwebgpu_wrapper.so _dawn_so)
  install(FILES ${_dawn_so} DESTINATION ${CMAKE_INSTALL_LIBDIR}/wgtensor RENAME libwebgpu_wrapper.so)
else()
  message(STATUS "wgtensor: no Dawn in ${WGT_DAWN_DIR}; an install will run on the CPU unless WGT_DAWN_PATH is set")
endif()
# Debian's engine, when scripts/setup_dawn_debian.sh has unpacked it: <libdir>/wgtensor/dawn-debian,
# where the library looks for it beside the npm engine (src/webgpu/dawn_engine.cpp).
if(EXISTS ${CMAKE_SOURCE_DIR}/third_party/dawn-debian/wgt-engine.txt)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/third_party/dawn-debian/ DESTINATION ${CMAKE_INSTALL_LIBDIR}/wgtensor/dawn-debian
          USE_SOURCE_PERMISSIONS)
endif()

# The package from outside the tree: install into a scratch prefix, build
# examples/cpp-consumer against it (CMake package and pkg-config), run both, and the
# installed CLI. With Dawn present, the consumer must load it from the prefix.
if(WGT_BUILD_TESTS)
  set(_require_webgpu OFF)
  if(EXISTS ${WGT_DAWN_DIR}/libwebgpu_wrapper.so)
    set(_require_webgpu ON)
  endif()
  add_test(NAME install_consumer COMMAND ${CMAKE_COMMAND}
           -DBUILD_DIR=${CMAKE_BINARY_DIR} -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
           -DWORK_DIR=${CMAKE_BINARY_DIR}/install-test -DGENERATOR=${CMAKE_GENERATOR}
           -DCXX=${CMAKE_CXX_COMPILER} -DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER} -DREQUIRE_WEBGPU=${_require_webgpu} -DDAWN_DIR=${WGT_DAWN_DIR}
           -P ${CMAKE_SOURCE_DIR}/tests/install/install_consumer.cmake)
  set_tests_properties(install_consumer PROPERTIES LABELS install TIMEOUT 600)
endif()
