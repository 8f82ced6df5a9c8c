# The `gpuwise` Python package: the pure-Python front (python/gpuwise/*.py) and the compiled
# module gpuwise._native, laid out in ${CMAKE_BINARY_DIR}/python so the build tree imports as an
# install does (PYTHONPATH=build-release/python). Installed under lib/python3/dist-packages, where
# Debian's python3 looks.
set(GPUWISE_PYTHON_BUILT OFF)
if(GPUWISE_PYTHON AND NOT GPUWISE_SHARED)
  message(STATUS "gpuwise: Python module off (it needs the position-independent objects of GPUWISE_SHARED=ON)")
elseif(GPUWISE_PYTHON)
  # Debian's python3 is the one its pybind11 and pytest packages serve; another can be named
  # with -DPython3_EXECUTABLE.
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module)
  if(Python3_FOUND)
    set(PYBIND11_FINDPYTHON ON)
    find_package(pybind11 CONFIG QUIET)
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(GPUWISE_PYTHON_BUILT ON)
  else()
    message(STATUS "gpuwise: Python module off (python3-dev and pybind11-dev not both found)")
  endif()
endif()

if(GPUWISE_PYTHON_BUILT)
  set(GPUWISE_PYTHON_DIR ${CMAKE_BINARY_DIR}/python/gpuwise)
  # NO_EXTRAS: no link-time optimisation (minutes on two cores for a thin binding); CPack strips.
  pybind11_add_module(gpuwise_python MODULE NO_EXTRAS ${CMAKE_SOURCE_DIR}/python/native_module.cc)
  target_link_libraries(gpuwise_python PRIVATE gpuwise_lib)
  set_target_properties(gpuwise_python PROPERTIES OUTPUT_NAME _native LIBRARY_OUTPUT_DIRECTORY ${GPUWISE_PYTHON_DIR})
  file(GLOB GPUWISE_PYTHON_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/python/gpuwise/*.py)
  set(GPUWISE_PYTHON_COPIES)
  foreach(source ${GPUWISE_PYTHON_SOURCES})
    get_filename_component(name ${source} NAME)
    add_custom_command(OUTPUT ${GPUWISE_PYTHON_DIR}/${name} COMMAND ${CMAKE_COMMAND} -E copy ${source} ${GPUWISE_PYTHON_DIR}/${name}
                       DEPENDS ${source})
    list(APPEND GPUWISE_PYTHON_COPIES ${GPUWISE_PYTHON_DIR}/${name})
  endforeach()
  add_custom_target(gpuwise_python_sources ALL DEPENDS ${GPUWISE_PYTHON_COPIES})
  add_dependencies(gpuwise_python gpuwise_python_sources)
  # The HTTP module beside _native, where its loader looks first (the build tree imports as an
  # install does).
  add_custom_command(TARGET gpuwise_python POST_BUILD
                     COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:gpuwise_http> ${GPUWISE_PYTHON_DIR}/)
  add_dependencies(gpuwise_python gpuwise_http)
  set(GPUWISE_PYTHON_INSTALL_DIR lib/python3/dist-packages CACHE STRING "Where the gpuwise Python package is installed")
  install(TARGETS gpuwise_python LIBRARY DESTINATION ${GPUWISE_PYTHON_INSTALL_DIR}/gpuwise)
  install(TARGETS gpuwise_http LIBRARY DESTINATION ${GPUWISE_PYTHON_INSTALL_DIR}/gpuwise)
  install(FILES ${GPUWISE_PYTHON_SOURCES} DESTINATION ${GPUWISE_PYTHON_INSTALL_DIR}/gpuwise)
endif()
