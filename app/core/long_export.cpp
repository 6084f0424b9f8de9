// long_export.cpp — a long input's exports from the window (long_export.h).
#include "core/long_export.h"

#include "attnscope/core/error.h"
#include "attnscope/figure/pooled_figure.h"

namespace attnscope::gui {

ExportedFile render_long_export(const LongExportJob& job, const std::atomic<bool>* cancel) {
  require(job.maps != nullptr, "no long input's pass to export");
  const model::HeadMaps& maps = *job.maps;
  const std::string& name = job.model_name;
  const ExportRequest& r = job.request;
  require(r.color_scale.mode != ScaleMode::per_head || r.what == ExportWhat::heads,
          "this figure has one colour bar (valid scale modes here: shared, fixed, locked)");
  if (r.what == ExportWhat::head) {
    require(job.layer >= 0 && job.layer < maps.layer_count(), "layer " + std::to_string(job.layer) + " does not exist");
    const model::PooledMap pooled = model::pool_head(maps, job.layer, r.head, job.pooling, job.pixels);
    if (cancel && cancel->load()) throw Cancelled();
    return render_pooled(PooledFigureInput{&pooled, job.layer, r.head, name}, r);
  }
  const PooledHeadsInput in =
      pool_heads(maps, r.what == ExportWhat::model ? -1 : job.layer, job.pooling, job.pixels, name, cancel);
  return render_pooled_heads(in, r);
}

ExportedFile export_long_to_file(const LongExportJob& job, const std::filesystem::path& path) {
  return write_export(path, job.request.format, [&] { return render_long_export(job); });
}

}  // namespace attnscope::gui
