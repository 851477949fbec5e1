# Fails when a file of module MODULE includes a guarded header (GUARDED: loco's own modules and
# the external libraries) that its loco_module() line does not allow (ALLOWED: include prefixes).
# Run by src/CMakeLists.txt before the module compiles, and by a test on a planted violation.
# Arguments: MODULE, ALLOWED, GUARDED and FILES (lists), as -D or set by the file ARGUMENTS;
# STAMP is touched on success.

if(ARGUMENTS)
  include(${ARGUMENTS})
endif()

# Sets `out` to TRUE when `header` starts with one of `prefixes`.
function(starts_with_any header prefixes out)
  foreach(prefix ${prefixes})
    string(FIND "${header}" "${prefix}" at)
    if(at EQUAL 0)
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} FALSE PARENT_SCOPE)
endfunction()

set(violations "")
foreach(file ${FILES})
  file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(line ${lines})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"].*$" "\\1" header "${line}")
    starts_with_any("${header}" "${GUARDED}" is_guarded)
    starts_with_any("${header}" "${ALLOWED}" is_allowed)
    if(is_guarded AND NOT is_allowed)
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
