// test_long_export.cpp — the window's exports of a long input (core/long_export.h): one head, a layer's heads and
// the model, from the pass the window holds, are the bytes `export --long --what head:N|heads|model` writes for the
// same options; a set cancel stops the pooling; what the CLI refuses is refused.
#include <doctest/doctest.h>

#include "attnscope/core/error.h"
#include "attnscope/figure/pooled_figure.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/forward.h"
#include "check.h"
#include "core/long_export.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::gui;
using namespace attnscope::test;
namespace fs = std::filesystem;

TEST_CASE("long export: the window's head, heads and model files are the CLI's for the same options") {
  const std::string fixture = "gpt_oss_dequantized_bf16";
  const auto m = model::open(model_fixture(fixture));
  std::vector<int32_t> ids;
  for (int t = 0; t < 260; ++t) ids.push_back(int32_t((t * 5 + t / 7) % 64));
  model::ForwardOptions o;
  o.keep = model::AttentionKeep::on_demand;
  const model::ForwardResult f = model::forward(*m, ids, o);
  LongExportJob job;
  job.maps = f.head_maps;
  job.model_name = m->name;
  job.layer = 1;
  job.pooling = model::Pooling::mean;
  job.pixels = 40;
  job.request.scale = 2;
  const fs::path dir = fresh_dir("long_export_job");
  struct Case {
    ExportWhat what;
    std::string args;
  };
  for (const Case& c : {Case{ExportWhat::head, "--what head:2 --layer 1 --pixels 40"},
                        Case{ExportWhat::heads, "--what heads --layer 1 --pixels 40"},
                        Case{ExportWhat::model, "--what model --pixels 40"}})
    for (const ExportFormat format : {ExportFormat::png, ExportFormat::npy}) {
      CAPTURE(c.args);
      CAPTURE(to_string(format));
      LongExportJob j = job;
      j.request.what = c.what;
      j.request.head = 2;
      j.request.format = format;
      const fs::path window = dir / (std::string("window.") + to_string(format)), cli = dir / (std::string("cli.") + to_string(format));
      export_long_to_file(j, window);
      const CliRun r = run_cli("export --checkpoint " + quoted(model_fixture(fixture)) + " --ids " + ids_arg(ids) +
                               " --long --pool mean --scale 2 " + c.args + " --format " + to_string(format) + " --out " +
                               quoted(cli));
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(read_file(window, 1 << 26) == read_file(cli, 1 << 26));
    }
  // a set cancel stops the pooling before any figure is made
  std::atomic<bool> cancel{true};
  LongExportJob all = job;
  all.request.what = ExportWhat::model;
  CHECK_THROWS_AS(render_long_export(all, &cancel), Cancelled);
  // one colour bar's figures refuse a per-head scale, as the CLI does; the model has no CSV
  all.request.color_scale.mode = ScaleMode::per_head;
  CHECK_THROWS_AS(render_long_export(all), InputError);
  all.request.color_scale.mode = ScaleMode::shared;
  all.request.format = ExportFormat::csv;
  CHECK_THROWS_WITH_AS(render_long_export(all), doctest::Contains("no CSV"), InputError);
  // a head outside the layer, and nothing written
  LongExportJob head = job;
  head.request.what = ExportWhat::head;
  head.request.head = 4;
  CHECK_THROWS_AS(export_long_to_file(head, dir / "none.png"), InputError);
  CHECK_FALSE(fs::exists(dir / "none.png"));
}
