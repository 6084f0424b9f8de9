// cmd_conv.cpp — `attnscope conv`: a K×K convolution emulated by K² relative-position heads, next to
// the true zero-padded convolution, with the error and its curve over α.
//
//   attnscope conv (--image FILE | --pattern NAME) [--grid RxC] --kernel NAME|k1,k2,...
//                  [--alpha A] [--pad-keys] [--heads K²] --out DIR
// Writes input.npy, mhsa.npy, conv.npy [R, C] and error.json (max_abs_interior, max_abs_border, the
// error-versus-α curve). Everything is computed and checked before the folder is created.
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "attnscope/analysis/analysis.h"
#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "cli/commands.h"
#include "cli/output_files.h"
#include "core/scene_options.h"

namespace attnscope::cli {
namespace {

struct ConvOptions {
  SceneOptions scene;
  std::string out;
};

// An error over no cells is absent, not zero.
nlohmann::json error_value(double value, int cells) { return cells > 0 ? nlohmann::json(value) : nlohmann::json(); }

nlohmann::json error_json(const ConvAnalysis& ca) {
  nlohmann::json kernel = nlohmann::json::array();
  for (int i = 0; i < ca.kernel.size; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (int j = 0; j < ca.kernel.size; ++j) row.push_back(ca.kernel.weights(i, j));
    kernel.push_back(row);
  }
  nlohmann::json curve = nlohmann::json::array();
  for (const ConvCurvePoint& p : ca.curve)
    curve.push_back({{"alpha", p.alpha},
                     {"interior", error_value(p.interior, ca.interior_cells)},
                     {"border", error_value(p.border, ca.border_cells)}});
  return {
      {"input", ca.input_note},
      {"grid", {{"rows", ca.rows}, {"cols", ca.cols}}},
      {"channels", "one gray channel (colour images: Rec. 601 luma)"},
      {"kernel", {{"name", ca.kernel.name}, {"size", ca.kernel.size}, {"values", kernel}}},
      {"heads", ca.kernel.size * ca.kernel.size},
      {"alpha", ca.alpha},
      {"pad_keys", ca.pad_keys},
      {"max_abs_interior", error_value(ca.max_abs_interior, ca.interior_cells)},
      {"max_abs_border", error_value(ca.max_abs_border, ca.border_cells)},
      {"interior_cells", ca.interior_cells},
      {"border_cells", ca.border_cells},
      {"curve", curve},
  };
}

void run(const ConvOptions& o) {
  // 1. Settings. conv always works on a grid: the pattern (default rings) or the image.
  Scene scene = build_scene(o.scene);
  const CLI::App* app = o.scene.app;
  scene.input.source = InputSource::grid;
  if (flag_given(app, "--heads")) require_heads_match_kernel(scene.relpos.heads, kernel_from_settings(scene.conv));

  // 2. Everything computed (and checked) before any file exists.
  const ConvAnalysis ca = analyse_conv(scene);

  // 3. Files.
  OutputFiles out(o.out);
  out.npy("input.npy", ca.input);
  out.npy("mhsa.npy", ca.mhsa);
  out.npy("conv.npy", ca.conv);
  out.text("error.json", error_json(ca).dump(2) + "\n");
  out.commit();

  std::printf("conv: %s %dx%d kernel as %d heads, alpha %g, on %s\n", ca.kernel.name.c_str(), ca.kernel.size,
              ca.kernel.size, ca.kernel.size * ca.kernel.size, ca.alpha, ca.input_note.c_str());
  if (ca.interior_cells > 0) std::printf("max |mhsa - conv| interior: %.3g\n", ca.max_abs_interior);
  std::printf("max |mhsa - conv| border:   %.3g%s\n", ca.max_abs_border,
              ca.pad_keys ? "" : "  (keys stop at the edge; --pad-keys adds the zero padding as keys)");
  std::printf("wrote %zu files to %s\n", out.written().size(), o.out.c_str());
}

void add_conv_command(CLI::App& root) {
  auto options = std::make_shared<ConvOptions>();
  CLI::App* cmd = root.add_subcommand(
      "conv",
      "Convolution as attention: K*K relative-position heads (Delta over {-K/2..K/2}^2, W_h = kernel[Delta_h]) "
      "against the true zero-padded KxK convolution (PyTorch conv2d cross-correlation)");
  add_scene_options(*cmd, options->scene, flags_conv);
  cmd->add_option("--out", options->out, "Output folder (created if missing)")->required();
  cmd->footer(
      "Works on ONE gray channel: colour images are converted to grayscale (Rec. 601 luma) first.\n"
      "Input: --pattern NAME at --grid RxC (default rings 16x16), or --image FILE fitted inside --grid\n"
      "(default 64x64) keeping its aspect ratio, by area averaging.\n"
      "alpha defaults to 50. --heads, if given, must be K*K.\n"
      "Writes input.npy, mhsa.npy, conv.npy [R,C] and error.json: max_abs_interior (cells whose KxK\n"
      "neighbourhood is inside the grid), max_abs_border (the rest) and the error-versus-alpha curve\n"
      "(25 points, log-spaced from 0.01 to 1000).\n"
      "Example: attnscope conv --pattern glyph --grid 32x32 --kernel sobel_x --alpha 50 --pad-keys --out out/conv");
  cmd->callback([options] { run(*options); });
}

CommandRegistrar registrar(add_conv_command);

}  // namespace
}  // namespace attnscope::cli
