// run_cli.h — runs the built `attnscope` binary for end-to-end tests and captures what it printed.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "test_paths.h"
#include "test_tmp.h"

namespace attnscope::test {

struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Quotes one argument for /bin/sh.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A path quoted for /bin/sh.
inline std::string quoted(const std::filesystem::path& p) { return shell_quote(p.string()); }

// Runs `[cd cwd &&] [env ENV] attnscope <args>` through /bin/sh (args already shell-quoted where
// needed; env: assignments such as "XDG_CONFIG_HOME=/x", or empty) and captures what it printed.
// A run that hangs is killed after 300 s (exit code 124), so a hang fails the test instead of the suite.
inline CliRun run_cli(const std::string& args, const std::string& env = "", const std::string& cwd = "") {
  namespace fs = std::filesystem;
  static int counter = 0;
  const fs::path dir = attnscope::test::test_tmp() / "cli_capture";
  fs::create_directories(dir);
  const fs::path out = dir / ("out" + std::to_string(counter) + ".txt");
  const fs::path err = dir / ("err" + std::to_string(counter++) + ".txt");
  const std::string cmd = (cwd.empty() ? std::string() : "cd " + shell_quote(cwd) + " && ") +
                          (env.empty() ? std::string() : "env " + env + " ") + "timeout -k 5 300 " + shell_quote(ATTNSCOPE_BIN) + " " + args +
                          " >" + shell_quote(out.string()) + " 2>" + shell_quote(err.string()) + " </dev/null";
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  auto slurp = [](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// A fresh, empty folder under the test tmp dir.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto p = attnscope::test::test_tmp() / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

inline size_t count_files(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir)) return 0;
  size_t n = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

}  // namespace attnscope::test
