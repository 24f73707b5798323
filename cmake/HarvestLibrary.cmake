# harvest_library(): one folder, one target, and walls that the compiler enforces.
#
# Sources include headers by their path from the repository root ("resources/kinds.h"), but no
# target sees the root. Each target gets its own include directory under the build tree that
# holds symlinks to exactly the headers of its folder (the "virtual includes" Bazel makes), and
# exports it PUBLIC. A file therefore finds another folder's header only if its target links
# that folder's target: an include across a wall the links do not allow fails to compile.
#
#   harvest_library(NAME <target> [STATIC|SHARED|INTERFACE] [FOLDER <dir>] [HEADERS <files...>]
#                   [SOURCES <files...>] [PUBLIC <targets...>] [PRIVATE <targets...>])
#
# FOLDER defaults to the current source folder, relative to the root. HEADERS defaults to every
# .h in that folder (not its subfolders, which are targets of their own); a target that shows
# only part of its folder lists the headers it shows.
function(harvest_library)
  cmake_parse_arguments(ARG "STATIC;SHARED;INTERFACE" "NAME;FOLDER"
                        "HEADERS;SOURCES;PUBLIC;PRIVATE" ${ARGN})
  if(NOT ARG_FOLDER)
    file(RELATIVE_PATH ARG_FOLDER ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
  if(NOT ARG_HEADERS)
    file(GLOB ARG_HEADERS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${ARG_FOLDER}/*.h)
  else()
    list(TRANSFORM ARG_HEADERS PREPEND ${CMAKE_SOURCE_DIR}/${ARG_FOLDER}/)
  endif()

  set(root ${CMAKE_BINARY_DIR}/virtual_includes/${ARG_NAME})
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root}/${ARG_FOLDER})
  foreach(header ${ARG_HEADERS})
    get_filename_component(leaf ${header} NAME)
    file(CREATE_LINK ${header} ${root}/${ARG_FOLDER}/${leaf} SYMBOLIC)
  endforeach()

  if(ARG_INTERFACE)
    add_library(${ARG_NAME} INTERFACE)
    target_include_directories(${ARG_NAME} INTERFACE ${root})
    target_link_libraries(${ARG_NAME} INTERFACE ${ARG_PUBLIC})
    return()
  endif()
  set(type STATIC)
  if(ARG_SHARED)
    set(type SHARED)
  endif()
  add_library(${ARG_NAME} ${type} ${ARG_SOURCES})
  target_include_directories(${ARG_NAME} PUBLIC ${root})
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_PUBLIC} PRIVATE ${ARG_PRIVATE})
endfunction()
