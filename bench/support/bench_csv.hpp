// SPDX-License-Identifier: Apache-2.0
#pragma once
// Command line and CSV output shared by the benchmarks that feed scripts/bench_report.sh.
//
// Options, in any order: --quick, --csv PATH (or --csv=PATH), --help. Anything else prints the usage and exits 2.
//
// The CSV holds one row per figure a benchmark prints against a baseline, in tidy form (one observation per row):
//
//   bench,section,case,variant,value,unit,baseline,baseline_value,ratio
//
//   bench           fft or matmul
//   section         the letter of the printed table: a, b, c, ...
//   case            the problem: transform or type and shape
//   variant         the cuplan call measured
//   value, unit     its median (ms of GPU time, us of host time per call, ms of CPU time)
//   baseline        what it is compared with in the same run (the raw library call, or raw's best of 8, ...)
//   baseline_value  the baseline's median, in the same unit
//   ratio           value / baseline_value for every row, so < 1 means cuplan took less time (the matmul tables
//                   print the inverse, raw / cuplan; the plots say which one they draw)
//
// The baseline is a column of its own because one variant is compared with several baselines (matmul (a): raw's
// first choice and raw replayed from a graph). Rows are written as they are measured and flushed, so a run that
// stops early leaves the rows it finished; sections that do not run (no GPU) write none.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace bench {

struct Options {
  bool quick = false;
  std::string csv;  // empty: no CSV
};

inline void usage(std::FILE* to, const char* program) {
  std::fprintf(to,
               "usage: %s [--quick] [--csv PATH]\n"
               "  --quick     small sizes, few repetitions\n"
               "  --csv PATH  also write the figures as CSV to PATH "
               "(bench,section,case,variant,value,unit,baseline,baseline_value,ratio)\n",
               program);
}

/// The options of a benchmark's command line; on an unknown option or a missing value, the usage and exit 2.
inline Options parse_options(int argc, char** argv) {
  const char* program = argc > 0 ? argv[0] : "bench";
  Options options;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (std::strcmp(arg, "--quick") == 0) {
      options.quick = true;
    } else if (std::strcmp(arg, "--csv") == 0) {
      if (i + 1 >= argc || argv[i + 1][0] == '\0') {
        std::fprintf(stderr, "%s: --csv needs a path\n", program);
        usage(stderr, program);
        std::exit(2);
      }
      options.csv = argv[++i];
    } else if (std::strncmp(arg, "--csv=", 6) == 0 && arg[6] != '\0') {
      options.csv = arg + 6;
    } else if (std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0) {
      usage(stdout, program);
      std::exit(0);
    } else {
      std::fprintf(stderr, "%s: unknown option '%s'\n", program, arg);
      usage(stderr, program);
      std::exit(2);
    }
  }
  return options;
}

/// Rows of the CSV described above, for one benchmark. Without a path every row is dropped, so that the
/// benchmarks call row() unconditionally. The file is opened (and its header written) on construction: a path that
/// cannot be written ends the program before anything is measured.
class Csv {
 public:
  Csv(const std::string& path, const char* bench_name) : bench_(bench_name) {
    if (path.empty()) return;
    file_ = std::fopen(path.c_str(), "w");
    if (file_ == nullptr) {
      std::fprintf(stderr, "cannot write the CSV file '%s'\n", path.c_str());
      std::exit(1);
    }
    std::fputs("bench,section,case,variant,value,unit,baseline,baseline_value,ratio\n", file_);
    std::fflush(file_);
  }
  Csv(const Csv&) = delete;
  Csv& operator=(const Csv&) = delete;
  ~Csv() {
    if (file_ != nullptr) std::fclose(file_);
  }

  void row(const char* section, const std::string& case_name, const std::string& variant, double value,
           const char* unit, const std::string& baseline, double baseline_value) {
    if (file_ == nullptr) return;
    std::string line = field(bench_) + "," + field(section) + "," + field(case_name) + "," + field(variant) + "," +
                       number(value) + "," + field(unit) + "," + field(baseline) + "," + number(baseline_value) + "," +
                       number(value / baseline_value) + "\n";
    std::fputs(line.c_str(), file_);
    std::fflush(file_);
  }

 private:
  /// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
  static std::string field(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (const char c : text) {
      if (c == '"') quoted += '"';
      quoted += c;
    }
    return quoted + "\"";
  }
  static std::string number(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.6g", v);
    return buffer;
  }

  std::string bench_;
  std::FILE* file_ = nullptr;
};

}  // namespace bench
