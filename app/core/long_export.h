// long_export.h — the window's exports of a long input (issue 38 item 6): the Export panel and Copy figure write
// what `export --long` writes for the same options, from the pass the window already ran (no second forward).
//
//   ExportWhat::head    one head of `layer` pooled (= --what head:N --layer L --pool P --pixels N)
//   ExportWhat::heads   every head of `layer` (= --what heads --layer L …)
//   ExportWhat::model   every head of every layer (= --what model …; the window pools to default_model_pixels)
// Each head's [T, T] map is made, pooled and dropped in turn (pooled_figure.h pool_heads); seconds for a whole
// model, so the window runs it off the frame (run_off_frame: a thread, or in one piece where there is none).
#pragma once
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include "attnscope/figure/export.h"
#include "attnscope/model/head_maps.h"

namespace attnscope::gui {

struct LongExportJob {
  std::shared_ptr<const model::HeadMaps> maps;     // the long input's pass's (pipeline::Result::head_maps)
  std::string model_name;                          // for the caption
  ExportRequest request;                           // what, format, scale, caption, words, colormap, colour scale
  int layer = 0;
  model::Pooling pooling = model::Pooling::max;
  int pixels = 0;                                  // at most this many blocks a side, each head
};

// The file's bytes (PNG/SVG/CSV/.npy). Throws InputError for what the CLI refuses (a model figure's CSV, a per-head
// scale of one colour bar's figure, a head or layer outside the model); Cancelled once *cancel is set.
ExportedFile render_long_export(const LongExportJob& job, const std::atomic<bool>* cancel = nullptr);
// check_export_path, render_long_export, then write_file_atomic: on failure no file is left behind.
ExportedFile export_long_to_file(const LongExportJob& job, const std::filesystem::path& path);

}  // namespace attnscope::gui
