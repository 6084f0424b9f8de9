// test_scene_link.cpp — a scene inside a link (app/core/scene_link.h): round trips, and every way a
// pasted, cut or edited link can be wrong gives an InputError that says which.
#include <doctest/doctest.h>

#include <string>

#include "attnscope/core/error.h"
#include "attnscope/scene/scene_json.h"
#include "core/scene_link.h"

using namespace attnscope;

namespace {

// A scene far from the default one: another view, kind, sizes, Chinese text, float settings.
Scene FarScene() {
  Scene s;
  s.input.text = "我喜欢打篮球 — the cat sat & ran? #1 = 100%";
  s.model.kind = AttentionKind::gqa;
  s.model.d_model = 128, s.model.heads = 16, s.model.groups = 4;
  s.model.causal = true;
  s.model.seed = 1234567890123ull;
  s.model.decay = 0.9;
  s.model.window = 5, s.model.sinks = 2;
  s.relpos.alphas = {0.5, 1, 2};
  s.relpos.deltas = {{-1, 0}, {0.5, 1}, {2, -2}};
  s.view = {View::relpos2d, "magma", true, ScaleMode::locked, 0.1, 0.7, 3};
  return s;
}

std::string WhatIsWrong(const std::string& text) {
  try {
    scene_from_link_text(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("scene link: a scene goes through its link and comes back equal") {
  for (const Scene& s : {Scene{}, FarScene()}) {
    const std::string text = scene_link_text(s);
    INFO(text);
    // Only base64url's characters: nothing a URL would escape.
    CHECK(text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == std::string::npos);
    CHECK(text.size() < scene_to_json(s).dump().size());  // compressed: shorter than the JSON itself
    std::vector<std::string> warnings;
    CHECK(scene_from_link_text(text, &warnings) == s);
    CHECK(warnings.empty());
  }
  // Every length of text (padding cases 0, 1 and 2 of base64) comes back byte for byte.
  std::string json = "{";
  for (int n = 1; n < 40; ++n) {
    CHECK(unpack_link_text(pack_link_text(json)) == json);
    json += char('a' + n % 26);
  }
  // Padding added by a tool is accepted.
  const std::string padded = pack_link_text("{}") + "==";
  CHECK(unpack_link_text(padded) == "{}");
}

TEST_CASE("scene link: a whole link holds its scene after ?scene= or &scene=") {
  const Scene s = FarScene();
  const std::string link = scene_link("https://example.org/attnscope/", s);
  CHECK(link.rfind("https://example.org/attnscope/?scene=", 0) == 0);
  CHECK(scene_from_link_text(scene_text_of_link(link)) == s);
  // A site address with a query of its own, or a fragment, keeps working.
  const std::string with_query = scene_link("https://example.org/a/?lang=zh#top", s);
  CHECK(with_query.rfind("https://example.org/a/?lang=zh&scene=", 0) == 0);
  CHECK(scene_from_link_text(scene_text_of_link(with_query + "&step=2")) == s);
  CHECK(scene_text_of_link("abc") == "abc");  // the bare value
  CHECK(scene_link("", s) == "?scene=" + scene_link_text(s));
}

TEST_CASE("scene link: malformed links say what is wrong with them") {
  const std::string good = scene_link_text(FarScene());
  CHECK(WhatIsWrong("").find("empty") != std::string::npos);
  // A character base64url does not use, and where it is.
  CHECK(WhatIsWrong(good.substr(0, 8) + "%" + good.substr(9)).find("'%' at character 9") != std::string::npos);
  CHECK(WhatIsWrong(good.substr(0, 4) + "+" + good.substr(5)).find("'+' at character 5") != std::string::npos);
  // Cut short: a length base64 never has, or data that ends too soon, or a checksum that fails.
  CHECK(WhatIsWrong(good.substr(0, 5)).find("a length base64 never has") != std::string::npos);
  for (const size_t keep : {good.size() - 1, good.size() - 2, good.size() - 3, good.size() / 2, size_t(6)}) {
    INFO("kept " << keep << " of " << good.size());
    const std::string why = WhatIsWrong(good.substr(0, keep));
    CHECK(why.find("the link's scene") == 0);
    CHECK((why.find("cut short") != std::string::npos || why.find("base64") != std::string::npos));
  }
  // One character changed in the middle: never a scene.
  std::string changed = good;
  changed[good.size() / 2] = changed[good.size() / 2] == 'A' ? 'B' : 'A';
  CHECK(WhatIsWrong(changed).find("the link's scene") == 0);
  // Not zlib at all (plain base64url of JSON).
  CHECK(WhatIsWrong("eyJtb2RlbCI6e319").find("not compressed scene data") != std::string::npos);
  // Longer than any scene's link.
  CHECK(WhatIsWrong(std::string(max_scene_link_chars + 1, 'A')).find("characters long") != std::string::npos);
  // Unpacks to far more than a scene (a "zip bomb": short enough a link, refused for what it unpacks to).
  const std::string bomb = pack_link_text(std::string(max_scene_link_json + 1, ' '));
  CHECK(bomb.size() < max_scene_link_chars);
  CHECK(WhatIsWrong(bomb).find("more than 1024 KB") != std::string::npos);
  // Well packed, but not JSON, or JSON with a wrong value.
  CHECK(WhatIsWrong(pack_link_text("not json")).find("not valid JSON") != std::string::npos);
  CHECK(WhatIsWrong(pack_link_text(R"({"model":{"heads":"many"}})")).find("heads") != std::string::npos);
}

TEST_CASE("scene link: keys a newer version wrote are reported, as for a scene file") {
  std::vector<std::string> warnings;
  const Scene s = scene_from_link_text(pack_link_text(R"({"model":{"heads":4,"future_key":1}})"), &warnings);
  CHECK(s.model.heads == 4);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("future_key") != std::string::npos);
}
