# One library per folder of src/, linking only the folders src/layers.txt allows, made of the
# objects gpuwise_objects compiles (nothing is compiled twice). With GPUWISE_LAYER_CHECKS each
# folder is also linked whole, alone with its allowed folders, into a small executable: a call
# from a folder into a higher layer is then an undefined symbol and the build fails (the Layers
# test checks the includes).
option(GPUWISE_LAYER_CHECKS "Link each folder alone with the folders below it" ${BUILD_TESTING})

file(STRINGS ${CMAKE_SOURCE_DIR}/src/layers.txt GPUWISE_LAYER_LINES REGEX "^[a-z0-9_]+:")
set(GPUWISE_LAYERS)
foreach(line IN LISTS GPUWISE_LAYER_LINES)
  string(REGEX MATCH "^([a-z0-9_]+):(.*)$" matched "${line}")
  set(folder ${CMAKE_MATCH_1})
  string(STRIP "${CMAKE_MATCH_2}" below)
  separate_arguments(below UNIX_COMMAND "${below}")
  # The CLI is its own library (gpuwise_cli, in CMakeLists.txt); include/gpuwise holds headers only.
  if(folder STREQUAL "cli")
    list(TRANSFORM below PREPEND gpuwise_ OUTPUT_VARIABLE GPUWISE_CLI_LAYERS)
    continue()
  endif()
  list(APPEND GPUWISE_LAYERS ${folder})
  set(pattern "/src/${folder}/")
  # The generated sources belong to the folders that read them.
  if(folder STREQUAL "catalog")
    set(pattern "(/src/catalog/|/generated/embedded_catalog)")
  elseif(folder STREQUAL "report")
    set(pattern "(/src/report/|/generated/web_assets)")
  endif()
  add_library(gpuwise_${folder} STATIC "$<FILTER:$<TARGET_OBJECTS:gpuwise_objects>,INCLUDE,${pattern}>")
  set_target_properties(gpuwise_${folder} PROPERTIES LINKER_LANGUAGE CXX)
  target_link_libraries(gpuwise_${folder} PUBLIC ${GPUWISE_LINKS})
  target_include_directories(gpuwise_${folder} PUBLIC ${GPUWISE_BUILD_INCLUDES})
  add_dependencies(gpuwise_${folder} gpuwise_objects)
  foreach(lower IN LISTS below)
    if(NOT lower STREQUAL "gpuwise")
      target_link_libraries(gpuwise_${folder} PUBLIC gpuwise_${lower})
    endif()
  endforeach()
  if(GPUWISE_LAYER_CHECKS)
    add_executable(gpuwise_layer_check_${folder} ${CMAKE_SOURCE_DIR}/cmake/layer_check_main.cc)
    target_link_libraries(gpuwise_layer_check_${folder} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,gpuwise_${folder}>")
  endif()
endforeach()
