// test_paths.h — where the tests find the built program (ATTNSCOPE_BIN), the source tree
// (ATTNSCOPE_SOURCE_DIR) and their scratch root (ATTNSCOPE_TEST_TMP_ROOT; test_tmp.h): C strings defined in
// one source that cmake/test_paths.cmake generates for each test executable. (Not compile definitions: those
// would name the build folder on every test source's command line, and a fresh clone would miss ccache for
// every one of them.)
#pragma once

extern "C" const char attnscope_test_bin[];
extern "C" const char attnscope_test_source_dir[];
extern "C" const char attnscope_test_tmp_root[];

#define ATTNSCOPE_BIN attnscope_test_bin
#define ATTNSCOPE_SOURCE_DIR attnscope_test_source_dir
#define ATTNSCOPE_TEST_TMP_ROOT attnscope_test_tmp_root
