# ctest install_consumer (cmake -P): installs the build into a scratch prefix, checks that no
# path of the source tree or of Dawn's build-time location is baked into the installed
# library, builds examples/cpp-consumer against the prefix (CMake package and pkg-config),
# and runs both programs and the installed CLI. With REQUIRE_WEBGPU, Dawn must come from the
# prefix; so must the installed Python module, when the build made one. Inputs: BUILD_DIR
# SOURCE_DIR WORK_DIR GENERATOR CXX LAUNCHER REQUIRE_WEBGPU DAWN_DIR.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(LAST_OUT "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

file(GLOB_RECURSE libs ${prefix}/lib*/libwgtensor*)
if(NOT libs)
  message(FATAL_ERROR "no libwgtensor installed under ${prefix}")
endif()
file(REAL_PATH ${DAWN_DIR} dawn_real)
foreach(lib ${libs})
  foreach(path ${DAWN_DIR} ${dawn_real} "third_party/dawn/")
    file(STRINGS ${lib} hits REGEX "${path}")
    if(hits)
      message(FATAL_ERROR "${lib} refers to the build-time Dawn location '${path}': ${hits}")
    endif()
  endforeach()
endforeach()

run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/cpp-consumer -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}" -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)

set(args "")
if(REQUIRE_WEBGPU)
  set(args --require-webgpu)
endif()
foreach(exe consumer consumer_pc)
  run(${WORK_DIR}/build/${exe} ${args})
  message(STATUS "${exe}: ${LAST_OUT}")
  if(REQUIRE_WEBGPU AND NOT LAST_OUT MATCHES "dawn: ${prefix}/")
    message(FATAL_ERROR "${exe} did not load Dawn from the prefix ${prefix}:\n${LAST_OUT}")
  endif()
endforeach()

run(${prefix}/bin/wgt info)
if(REQUIRE_WEBGPU AND NOT LAST_OUT MATCHES "webgpu:0: ")
  message(FATAL_ERROR "the installed wgt found no WebGPU adapter:\n${LAST_OUT}")
endif()

set(pydir ${prefix}/lib/python3/dist-packages)
if(EXISTS ${pydir}/wgtensor/__init__.py)
  find_program(PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
  file(WRITE ${WORK_DIR}/check.py "import wgtensor as wgt\nassert wgt.__file__.startswith('${pydir}/'), wgt.__file__\nprint(wgt.info())\n")
  run(${CMAKE_COMMAND} -E env PYTHONPATH=${pydir} ${PYTHON3} ${WORK_DIR}/check.py)
  if(REQUIRE_WEBGPU AND NOT LAST_OUT MATCHES "webgpu:0: ")
    message(FATAL_ERROR "the installed Python module found no WebGPU adapter:\n${LAST_OUT}")
  endif()
endif()
