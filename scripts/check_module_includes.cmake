# Fails when a file of module MODULE includes a guarded header (GUARDED: loco's own modules and
# the external libraries) that its loco_module() line does not allow (ALLOWED: include prefixes).
# Run by src/CMakeLists.txt before the module compiles, and by a test on a planted violation.
# Arguments: MODULE, ALLOWED, GUARDED and FILES (lists), as -D or set by the file ARGUMENTS;
# STAMP is touched on success.

if(ARGUMENTS)
  include(${ARGUMENTS})
endif()

set(violations "")
foreach(file ${FILES})
  file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(line ${lines})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"].*$" "\\1" header "${line}")
    set(is_guarded FALSE)
    foreach(prefix ${GUARDED})
      string(FIND "${header}" "${prefix}" at)
      if(at EQUAL 0)
        set(is_guarded TRUE)
      endif()
    endforeach()
    if(NOT is_guarded)
      continue()
    endif()
    set(is_allowed FALSE)
    foreach(prefix ${ALLOWED})
      string(FIND "${header}" "${prefix}" at)
      if(at EQUAL 0)
        set(is_allowed TRUE)
      endif()
    endforeach()
    if(NOT is_allowed)
      string(APPEND violations "\n  ${file}: #include <${header}>")
    endif()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "module ${MODULE} includes what its loco_module() line in src/CMakeLists.txt "
                      "does not allow (see docs/ARCHITECTURE.md):${violations}")
endif()
if(STAMP)
  file(TOUCH ${STAMP})
endif()
