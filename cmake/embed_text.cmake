# cmake -DINPUT=file -DOUTPUT=header -DNAME=identifier [-DINCLUDES=file;...] -P embed_text.cmake
# Writes OUTPUT, a header defining `inline constexpr std::string_view NAME` as INPUT's
# text in a raw string literal, so the library carries the file and reads nothing at run
# time. Each file of INCLUDES replaces the mark /*@include <its name>@*/ in the text,
# which must hold it: what several pages share is written once. Rewritten only when the
# text changed (no rebuild otherwise).
file(READ "${INPUT}" text)
foreach(include ${INCLUDES})
  get_filename_component(include_name "${include}" NAME)
  set(mark "/*@include ${include_name}@*/")
  string(FIND "${text}" "${mark}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${INPUT} holds no ${mark}")
  endif()
  file(READ "${include}" included)
  string(REPLACE "${mark}" "${included}" text "${text}")
endforeach()
string(FIND "${text}" "/*@include " unfilled)
if(NOT unfilled EQUAL -1)
  message(FATAL_ERROR "${INPUT} includes a file that INCLUDES does not name")
endif()
set(delimiter "pp_embed")  # at most 16 characters
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} holds ')${delimiter}\"', which would end its raw string early")
endif()
set(header "// Generated from ${INPUT} by cmake/embed_text.cmake: do not edit.\n")
string(APPEND header "#include <string_view>\n\nnamespace paddle_prof::internal {\n")
string(APPEND header "inline constexpr std::string_view ${NAME} = R\"${delimiter}(${text})${delimiter}\";\n")
string(APPEND header "}  // namespace paddle_prof::internal\n")
file(WRITE "${OUTPUT}.new" "${header}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${OUTPUT}.new" "${OUTPUT}")
file(REMOVE "${OUTPUT}.new")
