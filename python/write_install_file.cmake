# Run by `cmake --install` (python/CMakeLists.txt sets DM_PY_LIBDIR, DM_PY_DIR and DM_PY_SONAME just
# before): writes depthmask/_install.py, which names the installed libdepthmask.so.0 by absolute path.
foreach(_v DM_PY_LIBDIR DM_PY_DIR)
  if(NOT IS_ABSOLUTE "${${_v}}")
    set(${_v} "${CMAKE_INSTALL_PREFIX}/${${_v}}")
  endif()
endforeach()
set(_file "$ENV{DESTDIR}${DM_PY_DIR}/depthmask/_install.py")
message(STATUS "Installing: ${_file}")
file(WRITE "${_file}"
     "# Written by cmake --install (python/CMakeLists.txt): the library this package loads.\n"
     "LIBRARY = \"${DM_PY_LIBDIR}/${DM_PY_SONAME}\"\n")
