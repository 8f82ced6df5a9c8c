# `cmake --install`: the tool, its manual page and shell completions, the public headers, the
# static and shared libraries and the gpuwise::gpuwise CMake package; CPack makes a .deb of it.
include(CMakePackageConfigHelpers)

install(TARGETS gpuwise RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS gpuwise_http LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/gpuwise)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/gpuwise DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(GPUWISE_EXPORTED gpuwise_lib)
if(GPUWISE_SHARED)
  list(APPEND GPUWISE_EXPORTED gpuwise_shared)
endif()
install(TARGETS ${GPUWISE_EXPORTED} EXPORT gpuwiseTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(GPUWISE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpuwise)
install(EXPORT gpuwiseTargets NAMESPACE gpuwise:: DESTINATION ${GPUWISE_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/gpuwiseConfig.cmake.in ${CMAKE_BINARY_DIR}/gpuwiseConfig.cmake
                              INSTALL_DESTINATION ${GPUWISE_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/gpuwiseConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/gpuwiseConfig.cmake ${CMAKE_BINARY_DIR}/gpuwiseConfigVersion.cmake DESTINATION ${GPUWISE_CMAKE_DIR})

# The manual page and completions come from the CLI's own definition (gpuwise man, completion),
# so they cannot drift from it. Not when cross-compiling: the tool must run here.
if(NOT CMAKE_CROSSCOMPILING)
  set(GENERATED_DOCS ${CMAKE_BINARY_DIR}/generated/share)
  add_custom_command(
    OUTPUT ${GENERATED_DOCS}/gpuwise.1 ${GENERATED_DOCS}/gpuwise.bash ${GENERATED_DOCS}/_gpuwise
    COMMAND ${CMAKE_COMMAND} -E make_directory ${GENERATED_DOCS}
    COMMAND gpuwise man > ${GENERATED_DOCS}/gpuwise.1
    COMMAND gpuwise completion bash > ${GENERATED_DOCS}/gpuwise.bash
    COMMAND gpuwise completion zsh > ${GENERATED_DOCS}/_gpuwise
    DEPENDS gpuwise
    COMMENT "Writing the manual page and shell completions")
  add_custom_target(gpuwise_docs ALL DEPENDS ${GENERATED_DOCS}/gpuwise.1)
  install(FILES ${GENERATED_DOCS}/gpuwise.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${GENERATED_DOCS}/gpuwise.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME gpuwise)
  install(FILES ${GENERATED_DOCS}/_gpuwise DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
endif()
install(FILES ${CMAKE_SOURCE_DIR}/LICENSE ${CMAKE_SOURCE_DIR}/NOTICE ${CMAKE_SOURCE_DIR}/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
# What runs beside `gpuwise watch`: Prometheus rules, the Grafana dashboard, Kubernetes manifests
# and the systemd unit, to copy where the fleet's tools read them.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/deploy/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gpuwise/deploy)

# A Debian package (cpack -G DEB): dependencies from dpkg-shlibdeps, so it installs on the
# Debian release it was built on.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpuwise)
set(CPACK_PACKAGE_VENDOR "gpuwise")
set(CPACK_PACKAGE_CONTACT "gpuwise maintainers <gpuwise@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU infrastructure planner: fit, plan, simulate, scale and audit GPU spend")
set(CPACK_PACKAGE_DESCRIPTION "gpuwise sizes models against accelerators by memory, plans inference and training
for latency SLOs and deadlines at the lowest cost (verified by discrete-event simulation), simulates
autoscaling policies, and audits GPU telemetry for idle and under-used devices. Includes the C++
library (static and shared), its headers and CMake package, and the gpuwise Python package.")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_STRIP_FILES ON)
if(GPUWISE_PYTHON_BUILT)
  # The module is built for one Python minor version (its ABI tag says which).
  math(EXPR GPUWISE_PYTHON_NEXT_MINOR "${Python3_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
      "python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}), python3 (<< ${Python3_VERSION_MAJOR}.${GPUWISE_PYTHON_NEXT_MINOR})")
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-pandas, python3-matplotlib")
endif()
include(CPack)
