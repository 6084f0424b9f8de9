// scene_json.cpp — Scene ⇄ JSON with typed, named errors and tolerance of unknown keys.
#include "attnscope/scene/scene_json.h"

#include <cmath>
#include <limits>
#include <set>
#include <type_traits>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/core/limits.h"

namespace attnscope {
using nlohmann::json;

namespace {

// ---- the field lists: each setting named once, for writing and for reading -----------------------
// fields(settings, f) calls f(key, member) for every member; a member that has a field list of its
// own is a nested object.
template <class F> void fields(GridSettings& g, F&& f) {
  f("pattern", g.pattern), f("image_path", g.image_path), f("rows", g.rows), f("cols", g.cols), f("seed", g.seed);
}
template <class F> void fields(InputSettings& i, F&& f) {
  f("source", i.source), f("text", i.text), f("tensor_path", i.tensor_path), f("tokenizer", i.tokenizer_path),
      f("grid", i.grid);
}
template <class F> void fields(ModelSettings& m, F&& f) {
  f("kind", m.kind), f("d_model", m.d_model), f("heads", m.heads), f("groups", m.groups), f("causal", m.causal);
  f("scale_scores", m.scale_scores), f("seed", m.seed), f("weights", m.weights), f("weights_dir", m.weights_dir);
  f("designed", m.designed);
  f("kv_rank", m.kv_rank), f("q_rank", m.q_rank), f("rope_dim", m.rope_dim), f("differential", m.differential);
  f("linear_normalize", m.linear_normalize), f("decay", m.decay);
  f("window", m.window), f("sinks", m.sinks), f("sink_logits", m.sink_logits), f("positions", m.positions);
  f("rope_base", m.rope_base), f("rope_layout", m.rope_layout), f("rope_scaling", m.rope_scaling);
  f("rope_factor", m.rope_factor), f("rope_original_context", m.rope_original_context);
}
template <class F> void fields(RelposSettings& r, F&& f) {
  f("heads", r.heads), f("alpha", r.alpha), f("alphas", r.alphas), f("deltas", r.deltas);
  f("delta_preset", r.delta_preset), f("delta_seed", r.delta_seed), f("pad_keys", r.pad_keys);
  f("query_row", r.query_row), f("query_col", r.query_col), f("query_index", r.query_index), f("mixed", r.mixed);
  f("lambda", r.lambda);
}
template <class F> void fields(ConvSettings& c, F&& f) { f("kernel", c.kernel), f("custom", c.custom), f("alpha", c.alpha); }
template <class F> void fields(TokenSet& t, F&& f) { f("axis", t.axis), f("tokens", t.tokens), f("reduce", t.reduce); }
template <class F> void fields(ViewSettings& v, F&& f) {
  f("view", v.view), f("colormap", v.colormap), f("show_scores", v.show_scores), f("scale", v.scale);
  f("locked_lo", v.locked_lo), f("locked_hi", v.locked_hi);
  f("selected_query", v.selected_query);
  f("token_set", v.token_set);
}
template <class F> void fields(Scene& s, F&& f) {
  f("input", s.input), f("model", s.model), f("relpos", s.relpos), f("conv", s.conv), f("view", s.view);
}

template <class T> concept HasFields = requires(T& t) { fields(t, [](const char*, auto&) {}); };
template <class T> concept NamedEnum = std::is_enum_v<T>;

// Enum names: to_string / parse_… of scene.h.
AttentionKind parse_enum(const std::string& s, AttentionKind*) { return parse_attention_kind(s); }
WeightSource parse_enum(const std::string& s, WeightSource*) { return parse_weight_source(s); }
InputSource parse_enum(const std::string& s, InputSource*) { return parse_input_source(s); }
View parse_enum(const std::string& s, View*) { return parse_view(s); }
ScaleMode parse_enum(const std::string& s, ScaleMode*) { return parse_scale_mode(s); }
PositionScheme parse_enum(const std::string& s, PositionScheme*) { return parse_position_scheme(s); }
RopeLayout parse_enum(const std::string& s, RopeLayout*) { return parse_rope_layout(s); }
RopeScaling parse_enum(const std::string& s, RopeScaling*) { return parse_rope_scaling(s); }
TokenSetAxis parse_enum(const std::string& s, TokenSetAxis*) { return parse_token_set_axis(s); }
SetReduce parse_enum(const std::string& s, SetReduce*) { return parse_set_reduce(s); }

struct Writer {
  json& out;
  template <class T> void operator()(const char* key, T& value) const {
    if constexpr (HasFields<T>) {
      json object = json::object();
      fields(value, Writer{object});
      out[key] = std::move(object);
    } else if constexpr (NamedEnum<T>) {
      out[key] = to_string(value);
    } else if constexpr (std::is_same_v<T, std::vector<std::array<double, 2>>>) {
      json pairs = json::array();
      for (const auto& d : value) pairs.push_back({d[0], d[1]});
      out[key] = std::move(pairs);
    } else {
      out[key] = value;
    }
  }
};

// Reads one JSON object through a field list: each value's type checked, unknown keys noted.
struct Reader {
  const json& object;
  std::string path;
  std::vector<std::string>* warnings;

  template <class T> void operator()(const char* key, T& out) const {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return;
    const std::string where = path.empty() ? std::string(key) : path + "." + key;
    if constexpr (HasFields<T>) {
      read_object(*it, where, out, warnings);
    } else if constexpr (NamedEnum<T>) {
      require(it->is_string(), "scene key '" + where + "' must be a string");
      out = parse_enum(it->template get<std::string>(), &out);
    } else {
      read_value(*it, where, out);
    }
  }

  template <class T> static void read_object(const json& j, const std::string& where, T& out,
                                             std::vector<std::string>* warnings) {
    require(j.is_object(), "scene key '" + where + "' must be an object");
    fields(out, Reader{j, where, warnings});
    if (!warnings) return;
    std::set<std::string> known;
    fields(out, [&](const char* k, auto&) { known.insert(k); });
    for (const auto& [k, v] : j.items())
      if (!known.count(k)) warnings->push_back("ignored unknown scene key '" + where + "." + k + "'");
  }

  template <class T> static void read_value(const json& v, const std::string& where, T& out) {
    if constexpr (std::is_same_v<T, bool>) {
      require(v.is_boolean(), "scene key '" + where + "' must be true or false");
      out = v.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      require(v.is_number_integer(), "scene key '" + where + "' must be a whole number");
      if constexpr (std::is_unsigned_v<T>) {
        require(v.is_number_unsigned(), "scene key '" + where + "' must be a non-negative whole number");
        out = v.get<T>();
      } else {
        const int64_t i = v.get<int64_t>();
        require(i >= int64_t(std::numeric_limits<T>::min()) && i <= int64_t(std::numeric_limits<T>::max()),
                "scene key '" + where + "' is out of range");
        out = T(i);
      }
    } else if constexpr (std::is_floating_point_v<T>) {
      require(v.is_number(), "scene key '" + where + "' must be a number");
      out = v.get<T>();
      require(std::isfinite(out), "scene key '" + where + "' must be finite");
    } else if constexpr (std::is_same_v<T, std::string>) {
      require(v.is_string(), "scene key '" + where + "' must be a string");
      out = v.get<std::string>();
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      require(v.is_array() && v.size() <= 4096, "scene key '" + where + "' must be a list of strings");
      out.clear();
      for (const auto& item : v) {
        require(item.is_string(), "scene key '" + where + "' must hold strings only");
        out.push_back(item.get<std::string>());
      }
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
      require(v.is_array() && v.size() <= 65536, "scene key '" + where + "' must be a list of whole numbers");
      out.clear();
      for (const auto& item : v) {
        require(item.is_number_integer() && item.get<int64_t>() >= 0 && item.get<int64_t>() < (int64_t(1) << 30),
                "scene key '" + where + "' must hold whole numbers ≥ 0 only");
        out.push_back(int(item.get<int64_t>()));
      }
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      require(v.is_array() && v.size() <= 4096, "scene key '" + where + "' must be a list of numbers");
      out.clear();
      for (const auto& item : v) {
        require(item.is_number() && std::isfinite(item.get<double>()),
                "scene key '" + where + "' must hold finite numbers only");
        out.push_back(item.get<double>());
      }
    } else {
      static_assert(std::is_same_v<T, std::vector<std::array<double, 2>>>);
      require(v.is_array() && v.size() <= 4096, "scene key '" + where + "' must be a list of [dr, dc] pairs");
      out.clear();
      for (const auto& item : v) {
        require(item.is_array() && item.size() == 2 && item[0].is_number() && item[1].is_number() &&
                    std::isfinite(item[0].get<double>()) && std::isfinite(item[1].get<double>()),
                "scene key '" + where + "' must hold pairs of finite numbers [dr, dc]");
        out.push_back({item[0].get<double>(), item[1].get<double>()});
      }
    }
  }
};

}  // namespace

json scene_to_json(const Scene& scene) {
  Scene copy = scene;  // the field lists take mutable references (one list serves both directions)
  json out = {{"attnscope_scene", scene_format_version}};
  fields(copy, Writer{out});
  return out;
}

Scene scene_from_json(const json& j, std::vector<std::string>* warnings) {
  require(j.is_object(), "a scene must be a JSON object");
  Scene s;
  if (j.contains("attnscope_scene")) {
    require(j["attnscope_scene"].is_number_integer(), "scene key 'attnscope_scene' must be the format version number");
    if (j["attnscope_scene"].get<int64_t>() > scene_format_version && warnings)
      warnings->push_back("scene written by a newer attnscope (format " +
                          std::to_string(j["attnscope_scene"].get<int64_t>()) + "); settings it adds are ignored");
  }
  // Scenes written before the scale modes said "shared_scale": true | false (false: one scale per head).
  if (j.contains("view") && j["view"].is_object() && j["view"].contains("shared_scale")) {
    json upgraded = j;
    json& view = upgraded["view"];
    require(view["shared_scale"].is_boolean(), "scene key 'view.shared_scale' must be true or false");
    if (!view.contains("scale")) view["scale"] = to_string(view["shared_scale"].get<bool>() ? ScaleMode::shared : ScaleMode::per_head);
    view.erase("shared_scale");
    return scene_from_json(upgraded, warnings);
  }
  fields(s, Reader{j, "", warnings});
  if (warnings) {
    std::set<std::string> known = {"attnscope_scene"};
    fields(s, [&](const char* k, auto&) { known.insert(k); });
    for (const auto& [key, value] : j.items())
      if (!known.count(key)) warnings->push_back("ignored unknown scene key '" + key + "'");
  }
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
