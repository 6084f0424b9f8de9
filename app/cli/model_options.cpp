// model_options.cpp — real models on the command line: token ids from --ids or the checkpoint's own
// tokenizer (--text), the forward pass, its files, and one layer for export.
#include "cli/model_options.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "attnscope/analysis/model_layer.h"
#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/attention_file.h"
#include "attnscope/model/families.h"
#include "attnscope/model/forward.h"
#include "attnscope/text/tokenizer_interface.h"
#include "cli/output_files.h"
#include "core/head_ablation_list.h"
#include "cli/trace_json.h"
#include "attnscope/pipeline/pipeline.h"

namespace attnscope::cli {

namespace fs = std::filesystem;

void add_model_options(CLI::App& cmd, ModelOptions& o, bool exporting) {
  o.app = &cmd;
  // The families from the loader's own table (families.h), so the help names what opens.
  std::string families;
  for (const model::ModelFamily& f : model::model_families())
    families += (families.empty() ? "" : ", ") + std::string(f.name);
  cmd.add_option("--checkpoint", o.checkpoint,
                 "A Hugging Face checkpoint folder (config.json + model.safetensors or shards): " + families +
                     " (`attnscope families` lists what each reads)");
  cmd.add_option("--ids", o.ids, "With --checkpoint: the token ids, e.g. 15496,995 (instead of --text)");
  cmd.add_flag("--no-special-tokens", o.no_special_tokens,
               "With --checkpoint --text: add no BOS/EOS even where the tokenizer's files add them");
  cmd.add_option("--layer", o.layer, exporting ? "The model layer whose heads to export (0 = first)"
                                               : "Also write this layer's probs/scores/q/k/v/output .npy");
  cmd.add_option("--kv-heads", o.kv_heads,
                 "With --checkpoint: pool each layer's K/V heads to this many first (MHA → GQA/MQA, SPEC's conversion)");
  const std::string flow_cost = "refused above " + std::to_string(pipeline::flow_max_tokens) + " tokens";
  if (!exporting) {
    cmd.add_flag("--rollout", o.rollout,
                 "With --checkpoint: also write attention rollout: rollout.npy [L,T,T] (row i of layer l: each input "
                 "token's share in position i after layer l) and rollout_mean.npy [L,T,T] (each layer's head mean)");
    cmd.add_flag("--flow", o.flow,
                 "With --rollout: also write attention flow: flow.npy [L,P,T] (max flow from each input token into each "
                 "position after each layer) and flow_share.npy [L,P,T] (each row divided by its sum); P = T, or 1 "
                 "with --position; " + flow_cost);
    cmd.add_option("--position", o.position, "With --flow: only the flow into this position (0 = first token; default: "
                                             "every position)");
  } else {
    cmd.add_flag("--flow", o.flow, "With --what rollout: add the attention flow panel (" + flow_cost + ")");
    cmd.add_option("--position", o.position,
                   "With --what rollout: the query position whose input-token shares are drawn (0 = first token; "
                   "default: the last)");
  }
  cmd.add_option("--ablate", o.ablate,
                 "With --checkpoint: switch these heads off, LAYER.HEAD from 0, comma-separated (e.g. 1.0,1.3)");
  cmd.add_option("--ablate-mode", o.ablate_mode,
                 "With --ablate: zero (the heads' outputs become 0) or mean (their mean over the input's positions)");
  if (exporting) {
    cmd.add_option("--attentions", o.attentions,
                   "Attentions computed elsewhere: [L,H,T,T] .npy or .safetensors (docs/real-models.md, \"Attentions computed elsewhere\")");
    cmd.add_option("--tokens", o.tokens, "With --attentions: tokens.json with \"ids\" and/or \"labels\"");
    cmd.add_option("--config", o.config, "With --attentions: the model's config.json, for its K/V groups");
  }
  cmd.add_option("--text-file", o.text_file,
                 "With --checkpoint: the input text read from this UTF-8 file (instead of --text or --ids), e.g. a "
                 "page of a book");
  cmd.add_flag("--long", o.long_input,
               "With --checkpoint: a long input (up to " + std::to_string(model::max_on_demand_tokens) +
                   " tokens): keep each layer's queries and keys instead of every attention map, and compute a "
                   "head's map on demand");
  if (!exporting) {
    cmd.add_option("--head", o.head, "With --long --layer L: write head.npy, this head's map [T,T] (0 = first)");
  } else {
    cmd.add_option("--pool", o.pool,
                   "With --long (--what head:N, heads or model): max (default) or mean over each block of tokens, named "
                   "in the colour bar");
    cmd.add_option("--pixels", o.pixels,
                   "With --long: each head's overview, at most this many blocks a side (1–" +
                       std::to_string(max_pooled_pixels) + "; default 1024, for --what model " +
                       std::to_string(default_model_pixels) + "; at least the input's length: exact cells)");
  }
  add_lens_options(cmd, o.lens, exporting);
}

bool wants_model(const ModelOptions& o) { return !o.checkpoint.empty() || !o.attentions.empty(); }

void refuse_ablation_without_checkpoint(const ModelOptions& o) {
  for (const char* flag : {"--ablate", "--ablate-mode"})
    require(!flag_given(o.app, flag), std::string(flag) + " switches heads of a checkpoint off: give --checkpoint DIR "
                                                          "(with --text or --ids)");
}

void refuse_long_without_checkpoint(const ModelOptions& o) {
  for (const char* flag : {"--text-file", "--long", "--pool", "--pixels"})
    require(!flag_given(o.app, flag), std::string(flag) + " goes with a checkpoint's long input: give --checkpoint DIR");
  if (!o.app->get_option_no_throw("--pool"))  // compute's --head (export's is qk-attribution's)
    require(!flag_given(o.app, "--head"), "--head goes with --checkpoint DIR --long --layer L");
}

namespace {

// Scene flags that describe the seeded layer a real model replaces.
void refuse_scene_model_flags(const SceneOptions& scene, const char* instead) {
  for (const char* flag : {"--input", "--scene", "--kind", "--d-model", "--heads", "--groups", "--causal", "--no-scale",
                           "--seed", "--weights", "--weight-source", "--designed", "--kv-rank", "--q-rank", "--rope-dim",
                           "--differential"})
    require(!flag_given(scene.app, flag), std::string(flag) + " does not apply with " + instead +
                                              ": the model fixes its own layers, heads and K/V groups");
}

// The checkpoint's input as a pipeline request gives it (pipeline.h: tokens once per request): --ids as
// given, or --text through the folder's own tokenizer, special tokens as its files say.
// The longest --text-file read (a book's chapter is far less; the long-input limit is 8192 tokens).
constexpr int64_t max_text_file_bytes = int64_t(16) << 20;

pipeline::TokenInput token_input(const ModelOptions& o, const SceneOptions& scene) {
  const bool file = flag_given(o.app, "--text-file");
  const bool text = flag_given(scene.app, "--text") || file;
  require(!(file && flag_given(scene.app, "--text")), "give the input as --text or as --text-file, not both");
  require(text != !o.ids.empty(), "--checkpoint needs the input as --text \"…\", --text-file FILE or as token ids "
                                  "--ids 1,2,3 (one of them)");
  pipeline::TokenInput input;
  if (!text) {
    require(!o.no_special_tokens, "--no-special-tokens applies to --text; --ids are used exactly as given");
    input.form = pipeline::TokenInput::Form::ids;
    input.ids = parse_token_ids(o.ids, "--ids");
    return input;
  }
  input.form = pipeline::TokenInput::Form::text;
  input.text = file ? read_file(o.text_file, max_text_file_bytes) : scene.text;
  input.add_special_tokens = !o.no_special_tokens;
  input.no_tokenizer = "--text needs the checkpoint's own tokenizer files (or give --ids): {}";
  return input;
}

// --ablate "1.0,1.3" and --ablate-mode as the forward's HeadAblation, checked against the model
// (check_head_ablation names the layers and heads that exist). Empty without --ablate.
model::HeadAblation ablation_of(const ModelOptions& o, const model::Model& m) {
  if (!flag_given(o.app, "--ablate")) {
    require(!flag_given(o.app, "--ablate-mode"), "--ablate-mode goes with --ablate L.H,… (the heads to switch off)");
    return {};
  }
  return parse_head_ablation(o.ablate, o.ablate_mode, m);
}

// Every position's top-5 next tokens as tokens.json's "next": [{id, probability, label}, …] per position.
nlohmann::json next_tokens_json(const ModelLayerRun& run, const ModelTokens& tokens) {
  nlohmann::json next = nlohmann::json::array();
  for (const auto& top : run.next) {
    nlohmann::json row = nlohmann::json::array();
    for (const model::NextToken& n : top) {
      nlohmann::json e = {{"id", n.id}, {"probability", n.probability}};
      if (const std::string label = token_label(tokens, n.id); !label.empty()) e["label"] = label;
      row.push_back(e);
    }
    next.push_back(row);
  }
  return next;
}

// The checkpoint of a request, as trained: --kv-heads is the request's, and the pipeline converts (as the
// window's requests do), so one request makes the conversion once, beside its tokens and forward pass.
void open_checkpoint(pipeline::Request& request, const ModelOptions& o) {
  require(o.kv_heads > 0 || !flag_given(o.app, "--kv-heads"), "--kv-heads must be at least 1, got " + std::to_string(o.kv_heads));
  request.model = model::open(o.checkpoint);
  request.kv_heads = o.kv_heads;
}

void check_model_flags(const ModelOptions& o, const SceneOptions& scene) {
  require(o.checkpoint.empty() || o.attentions.empty(), "give --checkpoint or --attentions, not both");
  require(!flag_given(o.app, "--text-file") || !o.checkpoint.empty(),
          "--text-file is the input of a checkpoint: give --checkpoint DIR");
  if (!o.long_input) {
    const bool exporting = o.app->get_option_no_throw("--pool") != nullptr;  // export's --head is qk-attribution's
    for (const char* flag : {"--pool", "--pixels", "--head"})
      require(!flag_given(o.app, flag) || (exporting && std::string(flag) == "--head"),
              std::string(flag) + " goes with --long (a long input's head, computed on demand)");
  }
  refuse_scene_model_flags(scene, !o.checkpoint.empty() ? "--checkpoint" : "--attentions");
  if (!o.attentions.empty()) {
    for (const char* flag : {"--ids", "--text", "--kv-heads", "--no-special-tokens", "--ablate", "--ablate-mode"})
      require(!flag_given(o.app, flag) && !flag_given(scene.app, flag),
              std::string(flag) + " applies to --checkpoint; an attentions file holds its tokens in --tokens");
    require(!o.tokens.empty(), "--attentions needs --tokens tokens.json (the \"ids\" and/or \"labels\" of its tokens)");
  } else {
    require(o.tokens.empty() && o.config.empty(), "--tokens and --config go with --attentions; a checkpoint folder has "
                                                  "its own");
  }
}

}  // namespace

void run_model_compute(const ModelOptions& o, const SceneOptions& scene, const std::string& out,
                       const Translations& words) {
  check_model_flags(o, scene);
  pipeline::Request request;
  open_checkpoint(request, o);
  request.input = token_input(o, scene);
  request.layer = flag_given(o.app, "--layer") ? o.layer : -1;
  request.keep_logits = true;
  request.keep_detail = true;
  require(!o.flow || o.rollout, "--flow goes with --rollout (the flow's capacities are the rollout's): add --rollout");
  require(flag_given(o.app, "--position") <= o.flow, "--position chooses the flow's receiving position: add --flow");
  if (o.rollout) request.steps.push_back(pipeline::Step::rollout);
  if (o.flow) {
    request.steps.push_back(pipeline::Step::flow);
    request.flow_position = o.position;
    require(o.position >= 0 || !flag_given(o.app, "--position"),
            "--position must be a token position, 0 or more, got " + std::to_string(o.position));
  }
  const bool lens = lens_flags_given(o.lens);
  if (lens) {
    require(o.lens.lens, "--lens-top-k, --attribute-token and --attribute-position go with --lens");
    apply_lens_options(o.lens, request);
  }
  request.ablation = ablation_of(o, *request.model);
  const pipeline::Result result = pipeline::run(request);  // every check before any file
  if (o.rollout) require(result.rollout != nullptr, "--rollout: " + result.rollout_error);
  if (o.flow) require(result.flow != nullptr, "--flow: " + result.flow_error);
  if (lens) check_lens_result(o.lens, result);
  const auto& m = result.ran_model;
  const ModelTokens& tokens = *result.tokens;
  const model::AttentionStack& stack = *result.run->stack;

  const nlohmann::json next = next_tokens_json(*result.run, tokens);  // per position: the top-5 next tokens
  const model::ModelConfig& c = m->config;
  const nlohmann::json tokens_json = {{"ids", tokens.ids}, {"labels", tokens.labels}, {"next", next}};
  nlohmann::json model_json = {
      {"name", m->name},         {"model_type", c.model_type}, {"layers", c.layers},   {"heads", c.heads},
      {"kv_heads", c.kv_heads},  {"checkpoint_kv_heads", m->original_kv_heads},      {"head_dim", c.head_dim},
      {"d_model", c.d_model},    {"vocab", c.vocab},           {"parameters", m->parameter_count()},
      {"weights_dtype", m->source_dtypes},
      {"weights_in_memory", model::packing_text(m->weights->packing)}};
  // Every layer's type and where its maps are (docs/real-models.md "Layers of two kinds (Qwen3-Next)"): a softmax
  // layer's probabilities in attentions.npy [L, H, T, T]; a layer without a softmax (Qwen3-Next's Gated DeltaNet)
  // has zeros there and its signed matrices M in linear_maps.npy [L_linear, H_linear, T, T], at "linear_index".
  nlohmann::json layers = nlohmann::json::array();
  std::vector<float> linear_maps;
  int linear_layers = 0, linear_heads = 0;
  for (int l = 0; l < stack.layers; ++l) {
    const model::LayerMaps& maps = result.layer_maps[size_t(l)];
    if (!maps.signed_weights) {
      layers.push_back({{"layer", l}, {"type", "attention"}, {"heads", stack.heads}, {"values", "probabilities"},
                        {"file", "attentions.npy"}});
      continue;
    }
    layers.push_back({{"layer", l}, {"type", maps.kind}, {"heads", maps.heads}, {"values", "signed matrices M"},
                      {"file", "linear_maps.npy"}, {"linear_index", linear_layers}});
    const std::vector<float>& m = stack.linear_maps[size_t(l)];
    linear_maps.insert(linear_maps.end(), m.begin(), m.end());
    linear_heads = maps.heads;
    ++linear_layers;
  }
  model_json["layer_maps"] = layers;
  if (!c.container.empty()) {  // a multimodal container: its text tower was run, its vision tower not read
    model_json["container"] = c.container;
    model_json["vision_tensors_skipped"] = m->skipped_tensors;
  }

  OutputFiles files(out);
  const int T = stack.tokens;
  files.npy("attentions.npy", stack.attentions.data(), {stack.layers, stack.heads, T, T});
  if (linear_layers > 0) files.npy("linear_maps.npy", linear_maps.data(), {linear_layers, linear_heads, T, T});
  files.npy("logits.npy", *result.logits);
  files.text("tokens.json", tokens_json.dump(2) + "\n");
  files.text("model.json", model_json.dump(2) + "\n");
  std::string ablated;  // the line the command prints about it
  if (const std::shared_ptr<const pipeline::AblationComparison>& a = result.ablation) {
    nlohmann::json heads = nlohmann::json::array();
    for (const model::HeadRef& h : request.ablation.heads) {
      heads.push_back({{"layer", h.layer}, {"head", h.head}});
      ablated += (ablated.empty() ? "" : ",") + std::to_string(h.layer) + "." + std::to_string(h.head);
    }
    const nlohmann::json ablation_json = {
        {"heads", heads},
        {"mode", o.ablate_mode},
        {"loss_before", a->loss_before.mean},
        {"loss_after", a->loss_after.mean},
        {"loss_before_per_token", a->loss_before.per_token},
        {"loss_after_per_token", a->loss_after.per_token},
        {"layer_attention_change", a->layer_change},
        {"note", "every other file is of the forward pass with these heads switched off; loss in nats, -ln "
                 "P(next token), over positions 0 to T-2; layer_attention_change: largest |change| of a layer's "
                 "attention"}};
    files.text("ablation.json", ablation_json.dump(2) + "\n");
    char line[256];
    std::snprintf(line, sizeof line, "heads %s switched off (%s): loss on the input %.4f -> %.4f nats\n",
                  ablated.c_str(), o.ablate_mode.c_str(), a->loss_before.mean, a->loss_after.mean);
    ablated = line;
  }
  if (result.detail) {
    const model::LayerDetail& d = *result.detail;
    if (d.linear) {  // a layer without a softmax, as `compute --kind gated-deltanet` writes the seeded one
      files.npy("matrix.npy", d.probs);
      files.npy("head_out.npy", d.head_out);
      if (d.beta.size() > 0) files.npy("beta.npy", d.beta);  // Gated DeltaNet's β_t
      if (d.step.size() > 0) files.npy("step.npy", d.step);  // Mamba-2's Δ_t
      files.npy("decay.npy", d.decay);
    } else {
      files.npy("probs.npy", d.probs);
      files.npy("scores.npy", d.scores);
    }
    files.npy("q.npy", d.q);
    files.npy("k.npy", d.k);
    files.npy("v.npy", d.v);
    files.npy("output.npy", d.output);
    // The layer's trace, as the Shapes view draws it (every step's shape, parameters, cache or state).
    files.text("trace.json", trace_json(*result.analysis, words).dump(2) + "\n");
  }
  if (result.rollout) {
    const Rollout& r = *result.rollout;
    files.npy("rollout.npy", r.joint.data(), {r.layers, T, T});
    files.npy("rollout_mean.npy", r.means.data(), {r.layers, T, T});
    for (int l = 0; l < r.layers; ++l)
      if (r.absolute_layers[size_t(l)]) {  // said once: what the rollout made of a layer without a softmax
        std::printf("rollout: %s layers have no softmax; their head mean is of |M| with each row divided by its sum "
                    "(analysis/rollout.h)\n", stack.layer_kind[size_t(l)].c_str());
        break;
      }
  }
  if (result.flow) {
    const AttentionFlow& f = *result.flow;
    const int64_t P = int64_t(f.positions.size());
    files.npy("flow.npy", f.flow.data(), {int64_t(f.layers.size()), P, T});
    files.npy("flow_share.npy", f.share.data(), {int64_t(f.layers.size()), P, T});
  }
  if (lens) write_lens_files(o.lens, result, files);
  files.commit();
  if (lens) std::printf("%s\n", lens_summary(o.lens, result).c_str());
  const std::string vision = c.container.empty() ? ""
                             : " (" + c.container + "'s text tower; vision tower not drawn: " +
                                   std::to_string(m->skipped_tensors) + " tensors skipped)";
  std::printf("%s (%s%s, %d layers, %d heads, %d kv heads): %d tokens; wrote %zu files to %s\n", m->name.c_str(),
              c.model_type.c_str(), vision.c_str(), c.layers, c.heads, c.kv_heads, T, files.written().size(),
              out.c_str());
  std::fputs(ablated.c_str(), stdout);
}

std::shared_ptr<const Analysis> model_layer_for_export(const ModelOptions& o, const SceneOptions& scene) {
  check_model_flags(o, scene);
  require(flag_given(o.app, "--layer"), "give the model layer to export with --layer N (0 = the first)");
  pipeline::Request request;
  request.layer = o.layer;
  if (!o.attentions.empty()) {
    request.attentions = std::make_shared<const model::AttentionStack>(model::open_attentions(o.attentions, o.tokens, o.config));
  } else {
    open_checkpoint(request, o);
    check_layer(o.layer, request.model->config.layers);
    request.input = token_input(o, scene);
    request.ablation = ablation_of(o, *request.model);
  }
  return pipeline::run(request).analysis;
}

std::shared_ptr<const model::AttentionStack> model_stack_for_export(const ModelOptions& o, const SceneOptions& scene) {
  check_model_flags(o, scene);
  require(!flag_given(o.app, "--layer"), "--what model shows every layer: leave out --layer (or export one layer "
                                         "with --what heads --layer N)");
  if (!o.attentions.empty())
    return std::make_shared<const model::AttentionStack>(model::open_attentions(o.attentions, o.tokens, o.config));
  pipeline::Request request;
  open_checkpoint(request, o);
  request.input = token_input(o, scene);
  request.layer = -1;  // every layer, none in detail
  request.ablation = ablation_of(o, *request.model);
  return pipeline::run(request).run->stack;
}

std::shared_ptr<const pipeline::Result> model_rollout_for_export(const ModelOptions& o, const SceneOptions& scene,
                                                                 bool every_query) {
  check_model_flags(o, scene);
  require(!flag_given(o.app, "--layer") || every_query,
          "--what rollout shows every layer: leave out --layer (or add --every-query for one layer's every query)");
  pipeline::Request request;
  request.layer = -1;  // every layer, none in detail
  if (!o.attentions.empty()) {
    refuse_ablation_without_checkpoint(o);
    request.attentions = std::make_shared<const model::AttentionStack>(model::open_attentions(o.attentions, o.tokens, o.config));
    request.layer = 0;  // a file's request names a layer; the rollout reads every one
  } else {
    open_checkpoint(request, o);
    request.input = token_input(o, scene);
    request.ablation = ablation_of(o, *request.model);  // the rollout of the model with those heads off
  }
  request.steps = {pipeline::Step::rollout};
  auto result = std::make_shared<pipeline::Result>(pipeline::run(request));
  require(result->rollout != nullptr, "--what rollout: " + result->rollout_error);
  // The query: --position, else the last token; the flow is computed into it alone (every layer).
  const int T = result->run->stack->tokens;
  require(!flag_given(o.app, "--position") || (o.position >= 0 && o.position < T),
          "--position " + std::to_string(o.position) + " does not exist: the input has " + std::to_string(T) +
              " tokens (0–" + std::to_string(T - 1) + ")");
  result->request.flow_position = flag_given(o.app, "--position") ? o.position : T - 1;
  if (every_query && flag_given(o.app, "--layer")) {
    const int L = result->run->stack->layers;
    require(o.layer >= 0 && o.layer < L, "--layer " + std::to_string(o.layer) + " does not exist: the model has " +
                                             std::to_string(L) + " layers (0–" + std::to_string(L - 1) + ")");
  }
  if (o.flow) {
    pipeline::run_steps(*result, {pipeline::Step::flow});
    require(result->flow != nullptr, "--flow: " + result->flow_error);
  }
  return result;
}

}  // namespace attnscope::cli

namespace attnscope::cli {

pipeline::Result model_qk_attribution_for_export(const ModelOptions& o, const SceneOptions& scene, int head, int query,
                                                 int key) {
  check_model_flags(o, scene);
  require(!o.checkpoint.empty(), "--what qk-attribution needs --checkpoint DIR: the attribution goes through the "
                                 "model's weights (an attentions file has only its maps)");
  require(flag_given(o.app, "--layer"), "give the layer of the head to attribute with --layer N (0 = the first)");
  pipeline::Request request;
  open_checkpoint(request, o);
  check_layer(o.layer, request.model->config.layers);
  request.input = token_input(o, scene);
  request.layer = o.layer;
  request.head = head, request.query = query, request.key = key;
  request.ablation = ablation_of(o, *request.model);  // the score of the model with those heads off
  request.steps = {pipeline::Step::qk_attribution};
  pipeline::Result result = pipeline::run(request);
  if (!result.qk_attribution) throw InputError(result.qk_attribution_error);
  return result;
}

pipeline::Result model_lens_for_export(const ModelOptions& o, const SceneOptions& scene) {
  require(!o.checkpoint.empty(), "--what lens and --what attribution need a checkpoint's forward pass: give --checkpoint DIR "
                                 "(with --text or --ids); an attentions file holds no residual stream");
  check_model_flags(o, scene);
  require(!flag_given(o.app, "--layer"), "--what lens and attribution show every layer: leave out --layer");
  pipeline::Request request;
  open_checkpoint(request, o);
  request.input = token_input(o, scene);
  request.layer = -1;
  apply_lens_options(o.lens, request);
  request.ablation = ablation_of(o, *request.model);  // the lens of the model with those heads off
  pipeline::Result result = pipeline::run(request);
  check_lens_result(o.lens, result);
  return result;
}

}  // namespace attnscope::cli

namespace attnscope::cli {

namespace {

// --long's request: the checkpoint, its input, the forward without the stack. Refuses the flags that need the stack.
pipeline::Request long_request(const ModelOptions& o, const SceneOptions& scene) {
  require(!o.checkpoint.empty(), "--long needs --checkpoint DIR (with --text-file, --text or --ids): an attentions file "
                                 "holds its maps already");
  check_model_flags(o, scene);
  for (const char* flag : {"--rollout", "--flow", "--position", "--ablate", "--ablate-mode", "--kv-heads", "--lens"})
    require(!flag_given(o.app, flag) && !flag_given(o.lens.app, flag),
            std::string(flag) + " needs every layer's attention at once; --long computes one head at a time (leave "
                                "out one of the two)");
  pipeline::Request request;
  open_checkpoint(request, o);
  request.input = token_input(o, scene);
  request.layer = -1;
  request.attention = model::AttentionKeep::on_demand;
  return request;
}

void check_long_head(const ModelOptions& o, const pipeline::Result& result, int head) {
  const int L = result.ran_model->config.layers;
  require(flag_given(o.app, "--layer"), "give the layer of the head with --layer N (0 = the first)");
  require(o.layer >= 0 && o.layer < L, "--layer " + std::to_string(o.layer) + " does not exist: the model has " +
                                           std::to_string(L) + " layers (0–" + std::to_string(L - 1) + ")");
  const int H = result.head_maps->heads(o.layer);
  require(head >= 0 && head < H, "head " + std::to_string(head) + " does not exist: layer " + std::to_string(o.layer) +
                                     " has " + std::to_string(H) + " heads (0–" + std::to_string(H - 1) + ")");
}

}  // namespace

void run_long_compute(const ModelOptions& o, const SceneOptions& scene, const std::string& out) {
  require(flag_given(o.app, "--head") == flag_given(o.app, "--layer"),
          "with --long, --layer and --head go together: they name the head whose map head.npy holds");
  const pipeline::Request request = long_request(o, scene);
  if (flag_given(o.app, "--layer"))  // before the forward pass
    require(o.layer >= 0 && o.layer < request.model->config.layers,
            "--layer " + std::to_string(o.layer) + " does not exist: the model has " +
                std::to_string(request.model->config.layers) + " layers (0–" +
                std::to_string(request.model->config.layers - 1) + ")");
  const pipeline::Result result = pipeline::run(request);
  const ModelTokens& tokens = *result.tokens;
  const model::ModelConfig& c = result.ran_model->config;
  const int T = int(tokens.ids.size());
  Mat head;
  if (flag_given(o.app, "--head")) {
    check_long_head(o, result, o.head);
    head = result.head_maps->head(o.layer, o.head);
  }
  const nlohmann::json next = next_tokens_json(*result.run, tokens);
  const nlohmann::json model_json = {
      {"name", result.ran_model->name}, {"model_type", c.model_type}, {"layers", c.layers}, {"heads", c.heads},
      {"kv_heads", c.kv_heads}, {"head_dim", c.head_dim}, {"tokens", T}, {"attention", "on demand (--long)"},
      {"kept_bytes", result.head_maps->kept_bytes()}};
  OutputFiles files(out);
  files.text("tokens.json", nlohmann::json{{"ids", tokens.ids}, {"labels", tokens.labels}, {"next", next}}.dump(2) + "\n");
  files.text("model.json", model_json.dump(2) + "\n");
  if (head.size() > 0) files.npy("head.npy", head);
  files.commit();
  std::printf("%s (%s, %d layers, %d heads, %d kv heads): %d tokens, attention per head on demand (q and k kept: %s); "
              "wrote %zu files to %s\n",
              result.ran_model->name.c_str(), c.model_type.c_str(), c.layers, c.heads, c.kv_heads, T,
              model::byte_size_text(result.head_maps->kept_bytes()).c_str(), files.written().size(), out.c_str());
}

LongExport model_long_for_export(const ModelOptions& o, const SceneOptions& scene, int head) {
  const model::Pooling pooling = model::parse_pooling(o.pool, "--pool");
  require(o.pixels >= 1, "--pixels must be at least 1, got " + std::to_string(o.pixels));
  pipeline::Request request = long_request(o, scene);
  const int L = request.model->config.layers;
  require(flag_given(o.app, "--layer"), "give the layer of the head with --layer N (0 = the first)");
  require(o.layer >= 0 && o.layer < L, "--layer " + std::to_string(o.layer) + " does not exist: the model has " +
                                           std::to_string(L) + " layers (0–" + std::to_string(L - 1) + ")");
  LongExport e{pipeline::run(request), {}};
  check_long_head(o, e.result, head);
  e.pooled = model::pool_head(*e.result.head_maps, o.layer, head, pooling, o.pixels);
  return e;
}

LongHeadsExport model_long_heads_for_export(const ModelOptions& o, const SceneOptions& scene, bool model) {
  const model::Pooling pooling = model::parse_pooling(o.pool, "--pool");
  const int pixels = model && !flag_given(o.app, "--pixels") ? default_model_pixels : o.pixels;
  require(pixels >= 1 && pixels <= max_pooled_pixels, "--pixels must be between 1 and " +
                                                          std::to_string(max_pooled_pixels) + ", got " +
                                                          std::to_string(pixels));
  pipeline::Request request = long_request(o, scene);
  const int L = request.model->config.layers;
  if (model) {
    require(!flag_given(o.app, "--layer"), "--what model draws every layer: leave out --layer (or export one layer's "
                                           "heads with --what heads --layer N)");
  } else {
    require(flag_given(o.app, "--layer"), "give the layer of the heads with --layer N (0 = the first)");
    require(o.layer >= 0 && o.layer < L, "--layer " + std::to_string(o.layer) + " does not exist: the model has " +
                                             std::to_string(L) + " layers (0–" + std::to_string(L - 1) + ")");
  }
  LongHeadsExport e{pipeline::run(request), {}, pixels};
  try {
    e.pooled = pool_heads(*e.result.head_maps, model ? -1 : o.layer, pooling, pixels, e.result.ran_model->name);
  } catch (const InputError& error) {  // too many values: name the flag that asks for fewer
    throw InputError(std::string("--pixels ") + std::to_string(pixels) + ": " + error.what());
  }
  return e;
}

}  // namespace attnscope::cli
