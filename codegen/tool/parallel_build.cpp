#include "parallel_build.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>

namespace attngen::tool {

namespace {

struct running_part {
  pid_t pid;
  int from_child;  // read end of the pipe the child reports on
};

// In the child: generates the part and reports one line per cost ("target part seconds bytes"), or
// "error <message>"; never returns.
[[noreturn]] void run_part(const codegen::kernel_request& request, int part, int to_parent) {
  std::string report;
  int status = 0;
  try {
    for (const auto& cost : codegen::compile_kernel_part(request, part))
      report += cost.target + " " + cost.part + " " + std::to_string(cost.seconds) + " " +
                std::to_string(cost.object_bytes) + "\n";
  } catch (const std::exception& e) {
    report = std::string("error ") + e.what() + "\n";
    status = 1;
  }
  for (std::size_t written = 0; written < report.size();) {
    const ssize_t n = write(to_parent, report.data() + written, report.size() - written);
    if (n <= 0) break;
    written += std::size_t(n);
  }
  _exit(status);
}

// Reads a finished part's report and reaps it; throws with its error.
std::vector<codegen::build_cost> collect(const running_part& p) {
  std::string report;
  char chunk[4096];
  for (ssize_t n; (n = read(p.from_child, chunk, sizeof chunk)) > 0;) report.append(chunk, std::size_t(n));
  close(p.from_child);
  int status = 0;
  waitpid(p.pid, &status, 0);
  if (report.rfind("error ", 0) == 0) throw std::runtime_error(report.substr(6, report.size() - 7));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("a generator process failed");
  std::vector<codegen::build_cost> costs;
  std::istringstream lines(report);
  for (codegen::build_cost c; lines >> c.target >> c.part >> c.seconds >> c.object_bytes;) costs.push_back(c);
  return costs;
}

}  // namespace

std::vector<codegen::build_cost> build_kernel(const codegen::kernel_request& request, int jobs) {
  const int parts = codegen::kernel_part_count(request);
  std::vector<codegen::build_cost> costs;
  std::vector<running_part> running;
  std::string failure;
  auto finish_oldest = [&] {
    try {
      const auto part_costs = collect(running.front());
      costs.insert(costs.end(), part_costs.begin(), part_costs.end());
    } catch (const std::exception& e) {
      if (failure.empty()) failure = e.what();
    }
    running.erase(running.begin());
  };
  std::fflush(nullptr);
  for (int part = 0; part < parts; ++part) {
    if (int(running.size()) >= std::max(1, jobs)) finish_oldest();
    int channel[2];
    if (pipe(channel) != 0) throw std::runtime_error("cannot create a pipe");
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("cannot start a generator process");
    if (pid == 0) {
      close(channel[0]);
      run_part(request, part, channel[1]);
    }
    close(channel[1]);
    running.push_back({pid, channel[0]});
  }
  while (!running.empty()) finish_oldest();
  if (!failure.empty()) throw std::runtime_error(failure);
  codegen::finish_kernel(request);
  return costs;
}

}  // namespace attngen::tool
