# Helpers shared by the scripts that compile files into the binary (embed_files.cmake for the
# catalog, embed_web.cmake for the chart libraries).

# Sets OUT to CONTENTS as C++ raw string literals of at most 60,000 bytes each (some compilers
# limit a literal's length), joined by JOINER. Fails if CONTENTS holds the closing delimiter.
function(embed_raw_string OUT CONTENTS DELIMITER JOINER WHERE)
  string(FIND "${CONTENTS}" ")${DELIMITER}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${WHERE} contains the raw-string delimiter )${DELIMITER}\"")
  endif()
  string(LENGTH "${CONTENTS}" length)
  set(literal "")
  set(offset 0)
  while(offset LESS length OR offset EQUAL 0)
    string(SUBSTRING "${CONTENTS}" ${offset} 60000 piece)
    if(offset GREATER 0)
      string(APPEND literal "${JOINER}")
    endif()
    string(APPEND literal "R\"${DELIMITER}(${piece})${DELIMITER}\"")
    math(EXPR offset "${offset} + 60000")
  endwhile()
  set(${OUT} "${literal}" PARENT_SCOPE)
endfunction()

# Writes BODY to PATH only when it differs, so unchanged inputs do not rebuild.
function(write_if_changed PATH BODY)
  if(EXISTS "${PATH}")
    file(READ "${PATH}" old)
    if(old STREQUAL BODY)
      return()
    endif()
  endif()
  file(WRITE "${PATH}" "${BODY}")
endfunction()
