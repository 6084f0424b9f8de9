// bench_export — milliseconds to export all heads as PNG (1×, 2×) and SVG, for (T, H) = (16, 8) and
// (128, 16), from a ready Analysis (the attention itself is not timed). Not a test: it prints figures.
// Each figure splits into layout + drawing (the figure in memory) and encoding, plus the file write.
// Target: under 200 ms for (16, 8) PNG at 2×.
//
//   bench_export            the standard cases
//   bench_export reps       with `reps` repetitions each (default 7; the median is printed)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/analysis/analysis.h"
#include "attnscope/figure/export.h"
#include "attnscope/io/file_io.h"
#include "attnscope/figure/render_png.h"
#include "attnscope/figure/render_svg.h"
#include "bench_util.h"

using namespace attnscope;
using attnscope::bench::median;
using attnscope::bench::ms_since;
using clock_type = std::chrono::steady_clock;

namespace {

// A sentence of exactly T word tokens.
std::string words(int tokens) {
  static const char* vocabulary[] = {"the", "cat", "sat", "on", "mat", "because", "it", "was", "tired", "and",
                                     "then", "slept", "all", "day", "long", "happily"};
  std::string s;
  for (int i = 0; i < tokens; ++i) s += std::string(i ? " " : "") + vocabulary[i % 16];
  return s;
}

struct Timing {
  double figure_ms, encode_ms, write_ms;
  int width, height;
  size_t bytes;
};

Timing time_export(const Analysis& a, ExportFormat format, float scale, int reps, const std::filesystem::path& out) {
  ExportRequest r;
  r.format = format;
  r.scale = scale;
  const TextRasterizer& text = default_text_rasterizer();  // fonts loaded once, before timing
  std::vector<double> figure_ms, encode_ms, write_ms;
  Timing t{};
  for (int i = 0; i < reps + 1; ++i) {  // the first run warms caches and is not counted
    auto start = clock_type::now();
    const FigureSpec spec = export_figure(a, r);
    const FigureLayout layout = layout_figure(spec, scale, text);
    Image image;
    if (format == ExportFormat::png) image = render_figure(spec, layout, text);
    const double f = ms_since(start);
    start = clock_type::now();
    const std::string bytes = format == ExportFormat::png ? encode_png(image) : render_svg(spec, layout, text);
    const double e = ms_since(start);
    start = clock_type::now();
    write_file_atomic(out, bytes);
    const double w = ms_since(start);
    if (i == 0) continue;
    figure_ms.push_back(f);
    encode_ms.push_back(e);
    write_ms.push_back(w);
    t.width = layout.width;
    t.height = layout.height;
    t.bytes = bytes.size();
  }
  t.figure_ms = median(figure_ms);
  t.encode_ms = median(encode_ms);
  t.write_ms = median(write_ms);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attnscope_bench_export";
  ensure_directory(dir);
  std::printf("export of all heads, median of %d runs (ms): layout+draw | encode | write | total\n", reps);
  struct Shape {
    int tokens, heads;
  };
  for (const Shape s : {Shape{16, 8}, Shape{128, 16}}) {
    Scene scene;
    scene.input.text = words(s.tokens);
    scene.model.kind = AttentionKind::mha;
    scene.model.heads = scene.model.groups = s.heads;
    const Analysis a = analyse(scene);
    struct Case {
      ExportFormat format;
      float scale;
    };
    for (const Case c : {Case{ExportFormat::png, 1}, Case{ExportFormat::png, 2}, Case{ExportFormat::svg, 1}}) {
      const std::filesystem::path out = dir / ("heads." + std::string(to_string(c.format)));
      const Timing t = time_export(a, c.format, c.scale, reps, out);
      const double total = t.figure_ms + t.encode_ms + t.write_ms;
      std::printf("(T=%3d, H=%2d) %s %gx  %5dx%-5d %8.1f KB   %7.1f | %7.1f | %5.1f | %7.1f%s\n", s.tokens, s.heads,
                  to_string(c.format), c.scale, t.width, t.height, t.bytes / 1024.0, t.figure_ms, t.encode_ms,
                  t.write_ms, total,
                  s.tokens == 16 && c.format == ExportFormat::png && c.scale == 2
                      ? (total < 200 ? "   (target < 200 ms: met)" : "   (target < 200 ms: MISSED)")
                      : "");
    }
  }
  std::filesystem::remove_all(dir);
  return 0;
}
