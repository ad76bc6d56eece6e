# SPDX-License-Identifier: Apache-2.0
# cuplan_extract_snippet(<markdown> <name> <output>): writes the ```cpp block that follows the line
# `<!-- snippet: <name> -->` in <markdown> to <output>, so that documentation examples are compiled as they are
# printed. Configuring again after an edit of <markdown> re-extracts it. A missing marker is a configure error.
function(cuplan_extract_snippet markdown name output)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${markdown})
  file(READ ${markdown} text)
  string(FIND "${text}" "<!-- snippet: ${name} -->" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${markdown}: no '<!-- snippet: ${name} -->' marker")
  endif()
  string(SUBSTRING "${text}" ${at} -1 text)
  string(FIND "${text}" "```cpp\n" open)
  math(EXPR open "${open} + 7")
  string(SUBSTRING "${text}" ${open} -1 text)
  string(FIND "${text}" "```" close)
  string(SUBSTRING "${text}" 0 ${close} code)
  file(CONFIGURE OUTPUT ${output} CONTENT "${code}" @ONLY)
endfunction()
