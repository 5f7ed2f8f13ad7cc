# test_install (CTest, label cpu): installs this build tree to a temporary
# prefix, then builds and runs a small program against it the two ways a user
# would, find_package(infiniop) and pkg-config, with no environment set for
# the loader (tests/test_install.sh says what each step checks). Not in a
# sanitizer build: its libraries need the sanitizer runtime loaded first,
# which a plain consumer program does not do.
if(NOT SKBUILD AND NOT INFINIOP_SANITIZE AND EXISTS ${PROJECT_SOURCE_DIR}/tests/test_install.sh)
  find_program(INFINIOP_BASH bash)
  if(INFINIOP_BASH)
    add_test(NAME test_install
      COMMAND ${INFINIOP_BASH} ${PROJECT_SOURCE_DIR}/tests/test_install.sh
              ${PROJECT_BINARY_DIR} ${CMAKE_C_COMPILER} ${CMAKE_COMMAND} ${PROJECT_VERSION})
    set_tests_properties(test_install PROPERTIES LABELS cpu TIMEOUT 600 SKIP_RETURN_CODE 77)
  endif()
endif()
