// scene_json.cpp — Scene ⇄ JSON with typed, named errors and tolerance of unknown keys.
#include "attnscope/scene/scene_json.h"

#include <cmath>
#include <set>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/core/limits.h"

namespace attnscope {
using nlohmann::json;

json scene_to_json(const Scene& s) {
  json deltas = json::array();
  for (const auto& d : s.relpos.deltas) deltas.push_back({d[0], d[1]});
  return {
      {"attnscope_scene", scene_format_version},
      {"input",
       {{"source", to_string(s.input.source)},
        {"text", s.input.text},
        {"tensor_path", s.input.tensor_path},
        {"grid",
         {{"pattern", s.input.grid.pattern},
          {"image_path", s.input.grid.image_path},
          {"rows", s.input.grid.rows},
          {"cols", s.input.grid.cols},
          {"seed", s.input.grid.seed}}}}},
      {"model",
       {{"kind", to_string(s.model.kind)},
        {"d_model", s.model.d_model},
        {"heads", s.model.heads},
        {"groups", s.model.groups},
        {"causal", s.model.causal},
        {"scale_scores", s.model.scale_scores},
        {"seed", s.model.seed},
        {"weights", to_string(s.model.weights)},
        {"weights_dir", s.model.weights_dir},
        {"designed", s.model.designed}}},
      {"relpos",
       {{"heads", s.relpos.heads},
        {"alpha", s.relpos.alpha},
        {"alphas", s.relpos.alphas},
        {"deltas", deltas},
        {"delta_preset", s.relpos.delta_preset},
        {"delta_seed", s.relpos.delta_seed},
        {"pad_keys", s.relpos.pad_keys},
        {"query_row", s.relpos.query_row},
        {"query_col", s.relpos.query_col},
        {"query_index", s.relpos.query_index},
        {"mixed", s.relpos.mixed},
        {"lambda", s.relpos.lambda}}},
      {"conv", {{"kernel", s.conv.kernel}, {"custom", s.conv.custom}, {"alpha", s.conv.alpha}}},
      {"view",
       {{"view", s.view.view},
        {"colormap", s.view.colormap},
        {"show_scores", s.view.show_scores},
        {"shared_scale", s.view.shared_scale},
        {"selected_query", s.view.selected_query}}},
  };
}

namespace {

// Reads the members of one JSON object, checking each value's type and noting unknown keys.
class ObjectReader {
 public:
  ObjectReader(const json& parent, const char* key, std::string path, std::vector<std::string>* warnings)
      : path_(std::move(path)), warnings_(warnings) {
    const auto it = parent.find(key);
    if (it == parent.end()) return;
    require(it->is_object(), "scene key '" + path_ + "' must be an object");
    object_ = &*it;
  }
  template <class T>
  void get(const char* key, T& out) {
    seen_.insert(key);
    if (!object_) return;
    const auto it = object_->find(key);
    if (it == object_->end() || it->is_null()) return;
    const std::string where = path_ + "." + key;
    if constexpr (std::is_same_v<T, bool>) {
      require(it->is_boolean(), "scene key '" + where + "' must be true or false");
      out = it->template get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      require(it->is_number_integer(), "scene key '" + where + "' must be a whole number");
      if constexpr (std::is_unsigned_v<T>) {
        require(it->is_number_unsigned(), "scene key '" + where + "' must be a non-negative whole number");
        out = it->template get<T>();
      } else {
        const int64_t v = it->template get<int64_t>();
        require(v >= int64_t(std::numeric_limits<T>::min()) && v <= int64_t(std::numeric_limits<T>::max()),
                "scene key '" + where + "' is out of range");
        out = T(v);
      }
    } else if constexpr (std::is_floating_point_v<T>) {
      require(it->is_number(), "scene key '" + where + "' must be a number");
      out = it->template get<T>();
      require(std::isfinite(out), "scene key '" + where + "' must be finite");
    } else if constexpr (std::is_same_v<T, std::string>) {
      require(it->is_string(), "scene key '" + where + "' must be a string");
      out = it->template get<std::string>();
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      require(it->is_array() && it->size() <= 4096, "scene key '" + where + "' must be a list of strings");
      out.clear();
      for (const auto& v : *it) {
        require(v.is_string(), "scene key '" + where + "' must hold strings only");
        out.push_back(v.get<std::string>());
      }
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      require(it->is_array() && it->size() <= 4096, "scene key '" + where + "' must be a list of numbers");
      out.clear();
      for (const auto& v : *it) {
        require(v.is_number() && std::isfinite(v.get<double>()),
                "scene key '" + where + "' must hold finite numbers only");
        out.push_back(v.get<double>());
      }
    } else {
      static_assert(std::is_same_v<T, std::vector<std::array<double, 2>>>);
      require(it->is_array() && it->size() <= 4096, "scene key '" + where + "' must be a list of [dr, dc] pairs");
      out.clear();
      for (const auto& v : *it) {
        require(v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number() &&
                    std::isfinite(v[0].get<double>()) && std::isfinite(v[1].get<double>()),
                "scene key '" + where + "' must hold pairs of finite numbers [dr, dc]");
        out.push_back({v[0].get<double>(), v[1].get<double>()});
      }
    }
  }

  // Marks a key as known without reading it (a nested object read by its own reader).
  void expect(const char* key) { seen_.insert(key); }

  // Reports keys of this object that no get() asked for.
  void finish() {
    if (!object_ || !warnings_) return;
    for (const auto& [key, value] : object_->items())
      if (!seen_.count(key)) warnings_->push_back("ignored unknown scene key '" + path_ + "." + key + "'");
  }
  const json* object() const { return object_; }

 private:
  std::string path_;
  std::vector<std::string>* warnings_;
  const json* object_ = nullptr;
  std::set<std::string> seen_;
};

}  // namespace

Scene scene_from_json(const json& j, std::vector<std::string>* warnings) {
  require(j.is_object(), "a scene must be a JSON object");
  Scene s;
  if (j.contains("attnscope_scene")) {
    require(j["attnscope_scene"].is_number_integer(), "scene key 'attnscope_scene' must be the format version number");
    if (j["attnscope_scene"].get<int64_t>() > scene_format_version && warnings)
      warnings->push_back("scene written by a newer attnscope (format " +
                          std::to_string(j["attnscope_scene"].get<int64_t>()) + "); settings it adds are ignored");
  }
  {
    ObjectReader in(j, "input", "input", warnings);
    std::string source = to_string(s.input.source);
    in.get("source", source);
    s.input.source = parse_input_source(source);
    in.get("text", s.input.text);
    in.get("tensor_path", s.input.tensor_path);
    in.expect("grid");  // an object, read just below
    in.finish();
    if (in.object()) {
      ObjectReader grid(*in.object(), "grid", "input.grid", warnings);
      grid.get("pattern", s.input.grid.pattern);
      grid.get("image_path", s.input.grid.image_path);
      grid.get("rows", s.input.grid.rows);
      grid.get("cols", s.input.grid.cols);
      grid.get("seed", s.input.grid.seed);
      grid.finish();
    }
  }
  {
    ObjectReader m(j, "model", "model", warnings);
    std::string kind = to_string(s.model.kind), weights = to_string(s.model.weights);
    m.get("kind", kind);
    s.model.kind = parse_attention_kind(kind);
    m.get("d_model", s.model.d_model);
    m.get("heads", s.model.heads);
    m.get("groups", s.model.groups);
    m.get("causal", s.model.causal);
    m.get("scale_scores", s.model.scale_scores);
    m.get("seed", s.model.seed);
    m.get("weights", weights);
    s.model.weights = parse_weight_source(weights);
    m.get("weights_dir", s.model.weights_dir);
    m.get("designed", s.model.designed);
    m.finish();
  }
  {
    ObjectReader r(j, "relpos", "relpos", warnings);
    r.get("heads", s.relpos.heads);
    r.get("alpha", s.relpos.alpha);
    r.get("alphas", s.relpos.alphas);
    r.get("deltas", s.relpos.deltas);
    r.get("delta_preset", s.relpos.delta_preset);
    r.get("delta_seed", s.relpos.delta_seed);
    r.get("pad_keys", s.relpos.pad_keys);
    r.get("query_row", s.relpos.query_row);
    r.get("query_col", s.relpos.query_col);
    r.get("query_index", s.relpos.query_index);
    r.get("mixed", s.relpos.mixed);
    r.get("lambda", s.relpos.lambda);
    r.finish();
  }
  {
    ObjectReader c(j, "conv", "conv", warnings);
    c.get("kernel", s.conv.kernel);
    c.get("custom", s.conv.custom);
    c.get("alpha", s.conv.alpha);
    c.finish();
  }
  {
    ObjectReader v(j, "view", "view", warnings);
    v.get("view", s.view.view);
    v.get("colormap", s.view.colormap);
    v.get("show_scores", s.view.show_scores);
    v.get("shared_scale", s.view.shared_scale);
    v.get("selected_query", s.view.selected_query);
    v.finish();
  }
  if (warnings)
    for (const auto& [key, value] : j.items())
      if (key != "attnscope_scene" && key != "input" && key != "model" && key != "relpos" && key != "conv" &&
          key != "view")
        warnings->push_back("ignored unknown scene key '" + key + "'");
  return s;
}

Scene load_scene(const std::filesystem::path& path, std::vector<std::string>* warnings) {
  const std::string text = read_file(path, limits::max_text_bytes * 4);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError("scene file '" + path.string() + "' is not valid JSON: " + e.what());
  }
  try {
    return scene_from_json(j, warnings);
  } catch (const InputError& e) {
    throw InputError("scene file '" + path.string() + "': " + e.what());
  }
}

void save_scene(const std::filesystem::path& path, const Scene& scene) {
  write_file_atomic(path, scene_to_json(scene).dump(2) + "\n");
}

}  // namespace attnscope
