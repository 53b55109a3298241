# What `cmake --install` puts under the prefix, and the CMake package that
# find_package(Tandem) reads there (docs/architecture.md, "Using Tandem from
# another compiler").
#
#   bin/                    tandem-opt, tandem-gen, tandem-fit,
#                           tandem-diagnose, tandem-import and, with the
#                           runtime, its tools
#   include/tandem/         the public headers, the generated ODS headers
#                           (*.h.inc) and the .td files
#   lib/                    the static libraries
#   lib/cmake/Tandem/       TandemConfig.cmake, TandemConfigVersion.cmake,
#                           TandemTargets.cmake (imported targets Tandem::*)
#   share/tandem/python/    tandem-import's Python package
#
# Every installed library and tool is in the export set TandemTargets; the
# global property TANDEM_INSTALLED_TARGETS lists them, so that check-tandem
# (whose test/Install test installs the build) builds them all.
#
# The libraries are made with MLIR's and LLVM's helpers, which would install
# them into MLIR's or LLVM's own export set: they pass DISABLE_INSTALL
# (add_mlir_library) or BUILDTREE_ONLY (add_llvm_library) and call
# tandem_install_library instead.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TANDEM_INSTALL_PACKAGE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/Tandem")
set(TANDEM_INSTALL_PYTHON_DIR "${CMAKE_INSTALL_DATADIR}/tandem/python")

# A library a client links: into lib/ and the export set. Its headers are
# installed by directory (tandem_install_package); INCLUDES DESTINATION gives
# the imported target the prefix's include/ directory.
function(tandem_install_library name)
  install(TARGETS ${name}
    EXPORT TandemTargets
    ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
    INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  set_property(GLOBAL APPEND PROPERTY TANDEM_INSTALLED_TARGETS ${name})
endfunction()

# A tool: into bin/ and the export set (Tandem::tandem-opt and so on, for
# clients that run it from their build). add_llvm_executable's install RPATH
# is $ORIGIN/../lib; the installed tool also keeps the directory of the LLVM
# shared library it links, as the build's does (not with WITHOUT_LLVM: a tool
# that links no LLVM).
function(tandem_install_tool name)
  cmake_parse_arguments(ARG "WITHOUT_LLVM" "" "" ${ARGN})
  if(NOT ARG_WITHOUT_LLVM)
    set_property(TARGET ${name} APPEND PROPERTY
      INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
  endif()
  install(TARGETS ${name}
    EXPORT TandemTargets
    RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  set_property(GLOBAL APPEND PROPERTY TANDEM_INSTALLED_TARGETS ${name})
endfunction()

# The headers, the export file and the package files. Called once, after
# every library and tool has been declared.
function(tandem_install_package)
  # Public headers and ODS sources, from the source tree; the headers
  # mlir-tblgen generated into the build tree beside them. Only the .h.inc
  # files: the .cpp.inc ones are compiled into the libraries.
  foreach(dir
      "${PROJECT_SOURCE_DIR}/include/"
      "${PROJECT_SOURCE_DIR}/dialects/Tandem/include/")
    install(DIRECTORY "${dir}"
      DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
      FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
  endforeach()
  foreach(dir
      "${PROJECT_BINARY_DIR}/include/"
      "${PROJECT_BINARY_DIR}/dialects/Tandem/include/")
    install(DIRECTORY "${dir}"
      DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
      FILES_MATCHING PATTERN "*.h.inc"
      PATTERN "CMakeFiles" EXCLUDE)
  endforeach()

  install(EXPORT TandemTargets
    NAMESPACE Tandem::
    DESTINATION "${TANDEM_INSTALL_PACKAGE_DIR}")

  # What TandemConfig.cmake.in needs to know about this build.
  set(TANDEM_MLIR_DIR "${MLIR_DIR}")
  set(TANDEM_LLVM_PACKAGE_VERSION "${LLVM_PACKAGE_VERSION}")
  if(TANDEM_RUNTIME_ENABLED)
    set(TANDEM_PACKAGE_HAS_RUNTIME TRUE)
  else()
    set(TANDEM_PACKAGE_HAS_RUNTIME FALSE)
  endif()
  configure_package_config_file(
    "${PROJECT_SOURCE_DIR}/cmake/TandemConfig.cmake.in"
    "${PROJECT_BINARY_DIR}/cmake/TandemConfig.cmake"
    INSTALL_DESTINATION "${TANDEM_INSTALL_PACKAGE_DIR}")
  # Before 1.0 a minor version may change the API.
  write_basic_package_version_file(
    "${PROJECT_BINARY_DIR}/cmake/TandemConfigVersion.cmake"
    VERSION "${tandem_VERSION}"
    COMPATIBILITY SameMinorVersion)
  install(FILES
    "${PROJECT_BINARY_DIR}/cmake/TandemConfig.cmake"
    "${PROJECT_BINARY_DIR}/cmake/TandemConfigVersion.cmake"
    DESTINATION "${TANDEM_INSTALL_PACKAGE_DIR}")
endfunction()
